// One Prism process for every document the server serves. Prism mocks one document per
// process; rather than four processes behind the front, the four bundled, dereferenced
// documents (generated/openapi/, the ones the server validates with) are joined into one: their
// paths are disjoint, as on the server, and each operation takes its document's root security.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { API_NAMES, loadDocument } from '../../server/contract/operations.ts';
import { TOOL_ENV, bin } from '../lib/specs.ts';

type Obj = Record<string, unknown>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

/** The four OpenAPI documents as one, for one Prism process. */
export function joinedDocument(): Obj {
  const paths: Obj = {};
  const securitySchemes: Obj = {};
  for (const api of API_NAMES) {
    const doc = loadDocument(api);
    const rootSecurity = doc.security;
    Object.assign(securitySchemes, (doc.components as Obj | undefined)?.securitySchemes);
    for (const [p, item] of Object.entries(doc.paths as Obj)) {
      const pathItem = { ...(item as Obj) };
      for (const m of METHODS) {
        const op = pathItem[m] as Obj | undefined;
        if (op && op.security === undefined && rootSecurity !== undefined) pathItem[m] = { ...op, security: rootSecurity };
      }
      paths[p] = pathItem;
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Payments service (mock): transactions, orders, management, sandbox', version: '1.0.0' },
    paths,
    components: { securitySchemes },
  };
}

export interface PrismProcess {
  /** Where Prism listens now: a reload moves it to another free port. */
  readonly url: string;
  child: ChildProcess;
  /** Writes `doc` over the served file; resolves when Prism, which watches it, listens again on it. */
  reload(doc: Obj): Promise<void>;
  close(): Promise<void>;
}

const RELOAD_LIMIT_MS = 60_000;

/** Starts `prism mock` on the joined document on a free loopback port; resolves once it listens. */
export async function startPrism(log: (line: string) => void): Promise<PrismProcess> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'payments-mock-'));
  const file = path.join(dir, 'payments.openapi.json');
  await writeFile(file, JSON.stringify(joinedDocument()));
  const child = spawn(bin('prism'), ['mock', file, '--host', '127.0.0.1', '--port', '0'], { env: TOOL_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
  const close = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  // Every "listening" line after the first one ends a reload (Prism restarts itself on a change,
  // on a new port, since it was given port 0).
  const relisten: Array<() => void> = [];
  let current = '';
  try {
    // Port 0: the system picks a free one, and Prism names it in its "listening" line.
    await new Promise<string>((resolve, reject) => {
      let seen = '';
      let listening = false;
      const onData = (chunk: Buffer): void => {
        const text = chunk.toString();
        // Its start-up lines name its own port, which is not the one to call: only later lines are logged.
        if (listening) for (const line of text.split('\n')) if (line.trim() !== '') log(line);
        seen = (seen + text).slice(-4096);
        const url = /Prism is listening on (http:\/\/[\w.:[\]-]+)/.exec(seen)?.[1];
        if (url && !listening) {
          listening = true;
          seen = '';
          current = url;
          resolve(url);
        } else if (url) {
          seen = '';
          current = url;
          relisten.splice(0).forEach((done) => done());
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.once('exit', (code) => reject(new Error(`prism exited with ${code} before listening:\n${seen}`)));
      child.once('error', reject);
    });
    const reload = async (doc: Obj): Promise<void> => {
      const listening = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`prism did not reload its document within ${RELOAD_LIMIT_MS} ms`)), RELOAD_LIMIT_MS);
        relisten.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      await writeFile(file, JSON.stringify(doc));
      await listening;
    };
    return {
      get url() {
        return current;
      },
      child,
      reload,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
