// One Prism process per document the server serves (Prism mocks one document per process), each
// on a free loopback port behind the front, which sends every operation to its own document's
// Prism. A save that changes one document reloads that document's Prism only: the others keep
// answering, and the reload reads and dereferences one document, not four.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { TOOL_ENV, bin } from '../lib/specs.ts';

type Obj = Record<string, unknown>;

/**
 * What Prism serves of a document (the server's own, generated/openapi/, bundled and
 * dereferenced): all but its servers, since the front is the base URL and Prism matches paths only.
 */
export function prismDocument(doc: Obj): Obj {
  const { servers: _servers, ...rest } = doc;
  return rest;
}

export interface PrismProcess {
  /** Where Prism listens now: a reload moves it to another free port. */
  readonly url: string;
  child: ChildProcess;
  /** Writes `doc` over the served file; resolves when Prism, which watches it, listens again. */
  reload(doc: Obj): Promise<void>;
  close(): Promise<void>;
}

const RELOAD_LIMIT_MS = 60_000;
// The whole line: output arrives in chunks, and a chunk can end inside the port number.
const LISTENING = /Prism is listening on (http:\/\/[\w.:[\]-]+)\r?\n/;

/** Starts `prism mock` on `doc` on a free loopback port; resolves once it listens. */
export async function startPrism(doc: Obj, log: (line: string) => void): Promise<PrismProcess> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'payments-mock-'));
  const file = path.join(dir, 'openapi.json');
  await writeFile(file, JSON.stringify(doc));
  // Port 0: the system picks a free one, and Prism names it in its "listening" line; it restarts
  // itself on a change of the file, on a new port.
  const child = spawn(bin('prism'), ['mock', file, '--host', '127.0.0.1', '--port', '0'], { env: TOOL_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
  const close = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  const listens = followListening(child, log);
  try {
    await listens.first;
  } catch (err) {
    await close();
    throw err;
  }
  const reload = async (next: Obj): Promise<void> => {
    const again = listens.next(RELOAD_LIMIT_MS);
    await writeFile(file, JSON.stringify(next));
    await again;
  };
  return {
    get url() {
      return listens.url();
    },
    child,
    reload,
    close,
  };
}

interface Listening {
  /** The first "listening" line. */
  first: Promise<string>;
  /** The next one (the end of a reload), or an error if Prism exits or after `limitMs`. */
  next(limitMs: number): Promise<void>;
  url(): string;
}

/** Follows Prism's output for its "listening" lines; logs what it prints once it first listens. */
function followListening(child: ChildProcess, log: (line: string) => void): Listening {
  let seen = '';
  let current = '';
  const waiting: Array<(exited?: Error) => void> = [];
  const first = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      const text = chunk.toString();
      // Its start-up lines name its own port, which is not the one to call: only later lines are logged.
      if (current !== '') for (const line of text.split('\n')) if (line.trim() !== '') log(line);
      seen = (seen + text).slice(-4096);
      const url = LISTENING.exec(seen)?.[1];
      if (url === undefined) return;
      seen = '';
      if (current === '') resolve(url);
      current = url;
      waiting.splice(0).forEach((done) => done());
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      const exited = new Error(`prism exited with ${code}${current === '' ? ' before listening' : ''}:\n${seen}`);
      reject(exited);
      waiting.splice(0).forEach((done) => done(exited));
    });
    child.once('error', reject);
  });
  const next = (limitMs: number): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`prism did not reload its document within ${limitMs / 1000} s`)), limitMs);
      waiting.push((exited) => {
        clearTimeout(timer);
        if (exited) reject(exited);
        else resolve();
      });
    });
  return { first, next, url: () => current };
}
