// The messages between the delivery engine (main thread) and its sending thread
// (sender-thread.ts). Sends and outcomes travel in batches (batch.ts): one message per turn of
// the event loop, not one per attempt.
import type { SendOutcome } from '../sender.ts';

/**
 * What the thread needs to build the sender the engine would build in-process (workerData): the
 * destination policy's settings and the sender's. Host names are resolved by the engine's own
 * policy, on the main thread (a `resolve` message), so its resolver is the one used.
 */
export interface SenderThreadSettings {
  allowInsecure: boolean;
  nodeEnv: string | undefined;
  timeoutMs: number;
  /** Trust anchors replacing the system CAs (the engine's `tls.ca`). */
  ca?: string | Buffer;
}

export interface Outgoing {
  id: number;
  url: string;
  body: string;
  headers: Record<string, string>;
}

/** The answer of the engine's policy to a host name: its checked address, or why it refused. */
export type Resolution = { id: number; address: string } | { id: number; refused: { rule: string; detail: string } } | { id: number; error: string };

/** Main → thread. */
export type ToThread =
  | { type: 'send'; items: Outgoing[] }
  | { type: 'abort'; ids: number[] }
  | { type: 'resolved'; answer: Resolution }
  | { type: 'close' };

/** Thread → main. The thread ends by exiting after `close`: the main side waits for its `exit`. */
export type FromThread = { type: 'done'; items: Array<{ id: number; outcome: SendOutcome }> } | { type: 'resolve'; id: number; hostname: string };
