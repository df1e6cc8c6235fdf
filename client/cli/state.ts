// What `listen` keeps between runs, in a small JSON file: the cursor after the last forwarded
// event, or the stream's opening position before any (a restart resumes there, so nothing is
// lost), the session signing secret (so the receiver's configured secret stays valid; a secret
// given by option or setting is not written) and the last events forwarded, with their bodies,
// for `resend`. One file per service URL and key, under the user's cache folder, readable by
// the user only.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** An event as it was last forwarded. */
export interface KeptEvent {
  id: string;
  type: string;
  /** The envelope, byte for byte as the stream gave it. */
  body: string;
  url: string;
  /** The receiver's last answer, or null when it could not be reached. */
  status: number | null;
}

export interface ListenState {
  cursor: string | null;
  secret: string | null;
  /** The last KEPT_EVENTS events forwarded, oldest first. */
  events: KeptEvent[];
}

export const KEPT_EVENTS = 50;

/** The state with `event` kept (replacing an earlier forward of the same id), the oldest dropped beyond KEPT_EVENTS. */
export function keep(state: ListenState, event: KeptEvent): void {
  state.events = [...state.events.filter((e) => e.id !== event.id), event].slice(-KEPT_EVENTS);
}

/** The kept event whose id is `id` or starts with it; throws when none or several match. */
export function findKept(state: ListenState, id: string): KeptEvent {
  const found = state.events.filter((e) => e.id.startsWith(id.toLowerCase()));
  if (found.length === 1) return found[0]!;
  if (found.length === 0) throw new Error(`no event ${id} among the last ${state.events.length} forwarded (up to ${KEPT_EVENTS} are kept)`);
  throw new Error(`${id} starts ${found.length} event ids: give more of it`);
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
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { cursor: null, secret: null, events: [] };
    throw err;
  }
  const parsed = JSON.parse(text) as Partial<ListenState>;
  return {
    cursor: typeof parsed.cursor === 'string' ? parsed.cursor : null,
    secret: typeof parsed.secret === 'string' ? parsed.secret : null,
    events: Array.isArray(parsed.events) ? parsed.events : [],
  };
}

/** Written whole to a temporary file and renamed over the old one: a kill never leaves half a file. */
export async function saveState(file: string, state: ListenState): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, JSON.stringify(state), { mode: 0o600 });
  await rename(temporary, file);
}
