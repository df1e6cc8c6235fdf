// An open loop of POST /v2/orders: one request every 1/rate s whatever the answers do (a slow
// server gets more requests in flight, as from real callers), each with its own
// Idempotency-Key, spread over the instances in turn. Every request is recorded: when it was
// sent and answered, the status and problem type, the order acknowledged.
import { randomBytes } from 'node:crypto';
import { realTimers, type Timers } from '../timers.ts';

export interface Credentials {
  apiKey: string;
  apiHash: string;
}

export interface Sent {
  key: string;
  instance: number;
  sentAt: number;
  answeredAt: number | null;
  /** HTTP status; 0 for no answer (refused, reset, or the client's own cap). */
  status: number;
  /** The problem type's last segment, for an error answer. */
  problem?: string;
  orderId?: string;
  /** The replayed first answer to a repeated Idempotency-Key. */
  replayed?: boolean;
  retryAfter?: string | null;
  error?: string;
}

export interface LoadOptions {
  urls: string[];
  creds: Credentials;
  ratePerSecond: number;
  /** A request unanswered this long is abandoned by the caller (recorded as status 0). */
  callerCapMs: number;
  timers?: Timers;
  now?: () => number;
}

export interface OrderLoad {
  readonly sent: readonly Sent[];
  /** Stops sending and resolves once every request sent has its outcome. */
  stop(): Promise<void>;
}

/** Sends one order (or its retry, with the same key) and records the outcome. */
export async function sendOrder(url: string, creds: Credentials, key: string, callerCapMs: number, now: () => number = Date.now): Promise<Omit<Sent, 'instance'>> {
  const rec: Omit<Sent, 'instance'> = { key, sentAt: now(), answeredAt: null, status: 0 };
  try {
    const r = await fetch(`${url}/v2/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': creds.apiKey, 'x-api-hash': creds.apiHash, 'idempotency-key': key },
      body: JSON.stringify({ merchantReference: key, amountMinor: 1000 }),
      signal: AbortSignal.timeout(callerCapMs),
    });
    const body = (await r.json()) as { orderId?: string; type?: string };
    rec.answeredAt = now();
    rec.status = r.status;
    rec.retryAfter = r.headers.get('retry-after');
    if (body.orderId) rec.orderId = body.orderId;
    if (r.headers.get('idempotent-replayed') === 'true') rec.replayed = true;
    if (body.type) rec.problem = body.type.slice(body.type.lastIndexOf('/') + 1);
  } catch (err) {
    rec.error = (err as Error).name === 'TimeoutError' ? 'caller cap' : String((err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message);
  }
  return rec;
}

export function startOrderLoad(opts: LoadOptions): OrderLoad {
  const timers = opts.timers ?? realTimers;
  const now = opts.now ?? Date.now;
  const sent: Sent[] = [];
  const inFlight = new Set<Promise<void>>();
  const prefix = randomBytes(4).toString('hex');
  const interval = 1_000 / opts.ratePerSecond;
  const started = now();
  let n = 0;
  let timer: unknown = null;
  let running = true;

  const fire = (): void => {
    const instance = n % opts.urls.length;
    const key = `fault-${prefix}-${n++}`;
    const p = sendOrder(opts.urls[instance] as string, opts.creds, key, opts.callerCapMs, now).then((rec) => {
      sent.push({ ...rec, instance });
      inFlight.delete(p);
    });
    inFlight.add(p);
  };
  // Catches up on the schedule (open loop): a late tick sends what was due meanwhile.
  const tick = (): void => {
    timer = null;
    if (!running) return;
    const due = Math.floor((now() - started) / interval) + 1;
    while (n < due) fire();
    timer = timers.setTimeout(tick, Math.max(1, started + n * interval - now()));
  };
  tick();

  return {
    sent,
    async stop() {
      running = false;
      if (timer !== null) timers.clearTimeout(timer);
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
  };
}
