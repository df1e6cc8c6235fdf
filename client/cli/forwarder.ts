// Forwards one event to the merchant's local receiver, signed exactly as the service signs a
// delivery (the package's deliveryHeaders: Service-Signature, Service-Event-Id, Content-Type,
// User-Agent), and measures the receiver's answer. A forward the receiver did not take (it
// could not be reached, or answered 5xx or 429) is tried again with back-off, a bounded number
// of times, each time signed anew.
import { deliveryHeaders } from '../webhooks/index.ts';
import { describe } from './stream-reader.ts';

export interface ForwardResult {
  /** The receiver's HTTP status, or null when it could not be reached. */
  status: number | null;
  /** Why it could not be reached. */
  error: string | null;
  ms: number;
}

export interface Forwarder {
  forward(url: string, eventId: string, body: string): Promise<ForwardResult>;
}

/** Deadline of one forward: a hung receiver must not stop the stream for long. */
const FORWARD_TIMEOUT_MS = 10_000;

export function createForwarder(secret: string, deps: { now: () => number; fetch?: typeof fetch } = { now: Date.now }): Forwarder {
  return {
    async forward(url, eventId, body) {
      const started = deps.now();
      const headers = deliveryHeaders(secret, eventId, body, Math.floor(started / 1000));
      try {
        const res = await (deps.fetch ?? fetch)(url, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS) });
        await res.arrayBuffer().catch(() => undefined);
        return { status: res.status, error: null, ms: deps.now() - started };
      } catch (err) {
        return { status: null, error: describe(err), ms: deps.now() - started };
      }
    },
  };
}

/** Tries of one forward, the first included. */
export const FORWARD_ATTEMPTS = 5;
const FIRST_RETRY_MS = 500;

/** Whether the receiver may take the event on a later try. */
export function retryable(r: ForwardResult): boolean {
  return r.status === null || r.status >= 500 || r.status === 429;
}

export interface RetryDeps {
  /** Waits ms, or less when the signal ends the session. */
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  signal: AbortSignal;
  /** Told before each wait: the failed try's result, the wait, the try that failed (1, 2, ...). */
  onRetry: (result: ForwardResult, waitMs: number, attempt: number) => void;
}

/**
 * Forwards until the receiver takes the event, answers a status a retry cannot change, or
 * FORWARD_ATTEMPTS tries failed (0.5 s, 1 s, 2 s, 4 s apart). Null when the session ended
 * while waiting: the event is then not forwarded, and a restart forwards it.
 */
export async function forwardWithRetry(forwarder: Forwarder, url: string, eventId: string, body: string, deps: RetryDeps): Promise<ForwardResult | null> {
  for (let attempt = 1; ; attempt += 1) {
    const result = await forwarder.forward(url, eventId, body);
    if (!retryable(result) || attempt === FORWARD_ATTEMPTS) return result;
    const wait = FIRST_RETRY_MS * 2 ** (attempt - 1);
    deps.onRetry(result, wait, attempt);
    await deps.sleep(wait, deps.signal);
    if (deps.signal.aborted) return null;
  }
}
