// Forwards one event to the merchant's local receiver, signed exactly as the service signs a
// delivery (the package's deliveryHeaders: Service-Signature, Service-Event-Id, Content-Type,
// User-Agent), and measures the receiver's answer.
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
  forward(eventId: string, body: string): Promise<ForwardResult>;
}

/** Deadline of one forward: a hung receiver must not stop the stream for long. */
const FORWARD_TIMEOUT_MS = 10_000;

export function createForwarder(url: string, secret: string, deps: { now: () => number; fetch?: typeof fetch } = { now: Date.now }): Forwarder {
  return {
    async forward(eventId, body) {
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
