// The mock for the loop: `scripts/mock.ts` as a child process with MOCK_PORT set and SPEC_DIR
// the last good copy of spec/ (last-good.ts), serving once a path of each document answers
// from Prism (not its "no path matched" 404).
//
// The mock serves every document on MOCK_PORT from generated/, and reloads it on
// `POST /_mock/reload` after a save that passed.
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { OPENAPI_DOCS, type OpenApiDoc } from '../lib/specs.ts';
import { freePort, spawnTs, type Managed } from './processes.ts';
import type { Upstream } from './proxy.ts';

type ApiName = OpenApiDoc['name'];

const START_LIMIT_MS = 120_000;

export interface MockLayout {
  /** The documents the mock serves, all on its one port (its front routes each path to its document's Prism). */
  served: readonly ApiName[];
}

export async function mockLayout(): Promise<MockLayout> {
  return { served: OPENAPI_DOCS.map((d) => d.name) };
}

/** A GET path of the document, its parameters filled in: `/v2/orders/x`. */
async function probePath(api: ApiName): Promise<string> {
  const doc = OPENAPI_DOCS.find((d) => d.name === api);
  const paths = (parseYaml(await readFile(doc?.file ?? '', 'utf8')) as { paths?: Record<string, object> }).paths ?? {};
  const get = Object.keys(paths).find((p) => 'get' in (paths[p] ?? {}));
  return (get ?? Object.keys(paths)[0] ?? '/').replace(/\{[^}]+\}/g, 'x');
}

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    const body = await res.text();
    return !(res.status === 404 && body.includes('NO_PATH_MATCHED'));
  } catch {
    return false;
  }
}

export interface RunningMock extends Managed, Upstream {
  base: number;
  exited(): boolean;
}

/** Starts the mock on a port of its own, on the documents in specDir; resolves when every document it serves answers. */
export async function startMockProcess(layout: MockLayout, specDir: string, onOutput: (line: string) => void): Promise<RunningMock> {
  const base = await freePort();
  const managed = spawnTs('scripts/mock.ts', { MOCK_PORT: String(base), MOCK_HOST: '127.0.0.1', SPEC_DIR: specDir }, onOutput);
  let exited = false;
  managed.child.once('exit', () => (exited = true));
  const probes = await Promise.all(layout.served.map(async (api) => `http://127.0.0.1:${base}${await probePath(api)}`));
  const deadline = Date.now() + START_LIMIT_MS;
  for (const url of probes) {
    while (!(await answers(url))) {
      const why = exited ? 'exited before it served (see its output above)' : Date.now() > deadline ? `did not serve within ${START_LIMIT_MS / 1000} s` : null;
      if (why !== null) {
        await managed.stop();
        throw new Error(`the mock ${why}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return { ...managed, base, exited: () => exited, portFor: () => base };
}

/** Asks a mock that serves generated/ to reload it; resolves once it serves the new documents. */
export async function reloadMock(mock: RunningMock): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${mock.base}/_mock/reload`, { method: 'POST', signal: AbortSignal.timeout(START_LIMIT_MS) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}
