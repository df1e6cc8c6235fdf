// What `listen` keeps between runs, in a small JSON file: the cursor after the last forwarded
// event (a restart resumes there, so nothing is lost) and the session signing secret (so the
// receiver's configured secret stays valid). One file per service URL and key, under the
// user's cache folder, readable by the user only.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export interface ListenState {
  cursor: string | null;
  secret: string | null;
}

export function defaultStatePath(baseUrl: string, apiKey: string, env: NodeJS.ProcessEnv): string {
  const cache = env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  const id = createHash('sha256').update(`${baseUrl}\n${apiKey}`).digest('hex').slice(0, 16);
  return path.join(cache, 'payments-webhooks', `listen-${id}.json`);
}

export async function loadState(file: string): Promise<ListenState> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { cursor: null, secret: null };
    throw err;
  }
  const parsed = JSON.parse(text) as Partial<ListenState>;
  return { cursor: typeof parsed.cursor === 'string' ? parsed.cursor : null, secret: typeof parsed.secret === 'string' ? parsed.secret : null };
}

/** Written whole to a temporary file and renamed over the old one: a kill never leaves half a file. */
export async function saveState(file: string, state: ListenState): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, JSON.stringify(state), { mode: 0o600 });
  await rename(temporary, file);
}
