// The messages between the delivery engine (main thread) and its sending thread
// (sender-thread.ts). Each direction carries batches: one message per turn of the sender's
// event loop, not one per attempt, so a busy queue pays for a structured clone per batch.
import type { SendOutcome } from '../sender.ts';

/** What the thread needs to build its sender: the destination policy's and the sender's settings. */
export interface SenderThreadSettings {
  allowInsecure: boolean;
  nodeEnv: string | undefined;
  timeoutMs: number;
  /** Test CA for https receivers (tests only). */
  ca?: string;
}

export interface Outgoing {
  id: number;
  url: string;
  body: string;
  headers: Record<string, string>;
}

/** Main → thread. */
export type ToThread = { type: 'send'; items: Outgoing[] } | { type: 'abort'; ids: number[] } | { type: 'close' };

/** Thread → main. */
export type FromThread = { type: 'done'; items: Array<{ id: number; outcome: SendOutcome }> } | { type: 'closed' };
