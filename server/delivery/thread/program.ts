// The sending thread's program, relative to the repository root: bundled beside the server's
// (build/bundle.ts), and looked for there by main.ts.
export const SENDER_THREAD_PROGRAM = 'server/delivery/thread/sender-thread.ts';
