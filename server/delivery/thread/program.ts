// Where the sending thread's program is, for whoever bundles the server and for main.ts, which
// looks for it beside its own bundle: one name for both.

/** The thread's source, relative to the repository root. */
export const SENDER_THREAD_PROGRAM = 'server/delivery/thread/sender-thread.ts';

/** The file name (without extension) of a program's bundle: its path with / as __. */
export function bundleName(program: string): string {
  return program.replace(/\.tsx?$/, '').replaceAll('/', '__');
}
