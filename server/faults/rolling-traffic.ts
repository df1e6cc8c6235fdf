// The callers of the release test (rolling-upgrade.test.ts): orders at a steady rate through a
// rotation of instances, a payout with its settlement for some of them and, once asked, a
// deposit that pays some, each sent again after a Retry-After refusal, at most
// MAX_ANSWERS_AWAITED unanswered at once (see the test's header for why).
import { randomBytes } from 'node:crypto';
import { tally } from './report.ts';

export const ORDERS_PER_SECOND = 100;
/** One payout (created, then settled) for this many orders. */
export const ORDERS_PER_PAYOUT = 10;
/** The sender looks this often and sends what fell due since (one timer, not one per order). */
const SEND_EVERY_MS = 50;
/** Requests sent and not answered yet, at most (a refusal's wait for Retry-After is not one). */
export const MAX_ANSWERS_AWAITED = 100;

export interface Creds {
  apiKey: string;
  apiHash: string;
}

/** When a request was first sent and when it was acknowledged (ms since the epoch). */
export interface Window {
  sent: number;
  acked: number;
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
  retryAfter: string | null;
  /** Which instance answered (its label). */
  by: string;
  /** An earlier attempt was answered 504 outcome-unknown: it may have gone in. */
  afterUnknown: boolean;
}

/**
 * Callers behind a load balancer: requests go round the instances in rotation; an instance
 * is taken out before it is stopped and put back once ready, as an orchestrator does.
 */
export class Traffic {
  readonly rotation: Array<{ url: string; label: string }> = [];
  readonly refusals = tally();
  readonly failures: string[] = [];
  /** Acknowledged orders: key → order id, and who acknowledged each. */
  readonly orders = new Map<string, string>();
  readonly orderAckedBy: Array<{ by: string; at: number }> = [];
  readonly payouts = new Map<string, string>();
  readonly settled = new Set<string>();
  /**
   * Payouts whose settlement was answered 504 outcome-unknown, then 409 not-settleable when sent
   * again (the first attempt went in, a loaded machine's request deadline past): settled once
   * the database shows them completed.
   */
  readonly settledEarlier = new Set<string>();
  private n = 0;
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private readonly prefix = randomBytes(3).toString('hex');
  /** Requests on their way to each instance (url → count). */
  private readonly pending = new Map<string, number>();
  private unanswered = 0;
  /** How many times the sender found MAX_ANSWERS_AWAITED unanswered and held what fell due. */
  held = 0;
  /** One acknowledged order in this many is then paid; 0: none is. */
  payEvery = 0;
  /** Orders paid (their deposit acknowledged). */
  readonly paid = new Set<string>();
  /** Order event (`<type> <orderId>`) → the window of the request that made it. */
  readonly windows = new Map<string, Window>();

  constructor(
    private readonly creds: Creds,
    private readonly notifyUrl: string,
  ) {}

  private pick(): { url: string; label: string } {
    const target = this.rotation[this.n % this.rotation.length];
    if (!target) throw new Error('no instance in rotation');
    return target;
  }

  /** One request; an answer carrying Retry-After is sent again after it (at most 20 times). */
  private async call(method: string, pathName: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer | null> {
    let afterUnknown = false;
    for (let attempt = 0; attempt < 20; attempt++) {
      const target = this.pick();
      let r: Response;
      this.pending.set(target.url, (this.pending.get(target.url) ?? 0) + 1);
      this.unanswered++;
      try {
        r = await fetch(`${target.url}${pathName}`, {
          method,
          headers: { 'content-type': 'application/json', 'x-api-key': this.creds.apiKey, 'x-api-hash': this.creds.apiHash, ...headers },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(30_000),
        });
      } catch (err) {
        this.pending.set(target.url, (this.pending.get(target.url) ?? 1) - 1);
        this.unanswered--;
        this.failures.push(`${method} ${pathName} to ${target.label}: no answer (${String((err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message)})`);
        return null;
      }
      const answer: Answer = { status: r.status, body: (await r.json().catch(() => ({}))) as Record<string, unknown>, retryAfter: r.headers.get('retry-after'), by: target.label, afterUnknown };
      this.pending.set(target.url, (this.pending.get(target.url) ?? 1) - 1);
      this.unanswered--;
      if (answer.retryAfter === null || answer.status < 400) return answer;
      const problem = String(answer.body.type ?? '').split('/').pop();
      if (problem === 'outcome-unknown') afterUnknown = true;
      this.refusals.add(`${answer.status} ${problem}`);
      await new Promise((resolve) => setTimeout(resolve, Math.min(Number(answer.retryAfter) || 1, 10) * 1000));
    }
    this.failures.push(`${method} ${pathName}: still refused after 20 tries`);
    return null;
  }

  private async order(i: number): Promise<void> {
    const key = `roll-${this.prefix}-${i}`;
    const sent = Date.now();
    const a = await this.call('POST', '/v2/orders', { merchantReference: key, amountMinor: 1000 }, { 'idempotency-key': key });
    if (!a) return;
    if ((a.status === 201 || a.status === 200) && typeof a.body.orderId === 'string') {
      this.orders.set(key, a.body.orderId);
      this.orderAckedBy.push({ by: a.by, at: Date.now() });
      this.windows.set(`order.created ${a.body.orderId}`, { sent, acked: Date.now() });
      if (this.payEvery > 0 && i % this.payEvery === 0) await this.deposit(a.body.orderId);
    } else this.failures.push(`order ${key}: ${a.status} ${JSON.stringify(a.body).slice(0, 200)} from ${a.by}`);
  }

  /** A verified deposit: the order (made without amountBaseUnits) is paid, order.paid emitted. */
  private async deposit(orderId: string): Promise<void> {
    const sent = Date.now();
    // Sent again after an outcome-unknown answer, it is a surplus: no second event.
    const a = await this.call('POST', `/sandbox/orders/${orderId}/deposits`, { amountBaseUnits: '1000', verified: true, txHash: `0x${randomBytes(32).toString('hex')}` });
    if (!a) return;
    if (a.status === 201 && (a.body.order as { paymentStatus?: string } | undefined)?.paymentStatus === 'paid') {
      this.paid.add(orderId);
      this.windows.set(`order.paid ${orderId}`, { sent, acked: Date.now() });
    } else this.failures.push(`deposit to ${orderId}: ${a.status} ${JSON.stringify(a.body).slice(0, 200)} from ${a.by}`);
  }

  /** A payout, then its settlement (whose callback goes to notifyUrl). */
  private async payout(j: number): Promise<void> {
    const thirdPartyId = `roll-${this.prefix}-p${j}`;
    const a = await this.call('POST', '/transactions/payout', { thirdPartyId, userId: 'user-roll', amount: 1, notifyUrl: this.notifyUrl });
    if (!a) return;
    // A retry after a refusal that had in fact gone in finds the first one (409, its id).
    const id = a.status === 201 ? a.body.transactionId : a.status === 409 ? a.body.existingTransactionId : undefined;
    if (typeof id !== 'string') return void this.failures.push(`payout ${thirdPartyId}: ${a.status} ${JSON.stringify(a.body).slice(0, 200)} from ${a.by}`);
    this.payouts.set(thirdPartyId, id);
    const s = await this.call('POST', `/sandbox/payouts/${id}/settle`, { status: 'success' });
    if (!s) return;
    if (s.status === 200) this.settled.add(id);
    // The contract's settlement of an outcome-unknown answer: the same request again. Its 409
    // says the payout is no longer pending: the earlier attempt went in (checked in the database).
    else if (s.status === 409 && s.afterUnknown && String(s.body.type ?? '').endsWith('/not-settleable')) this.settledEarlier.add(id);
    else this.failures.push(`settle ${id}: ${s.status} ${JSON.stringify(s.body).slice(0, 200)} from ${s.by}`);
  }

  start(): void {
    const interval = 1_000 / ORDERS_PER_SECOND;
    let last = Date.now();
    let owed = 1;
    const tick = (): void => {
      // What fell due since the last look (or while this process was busy) goes now, unless as
      // many requests as a pool holds are unanswered: then it is not sent at all (not queued to
      // go later in a burst).
      const now = Date.now();
      owed += (now - last) / interval;
      last = now;
      for (; owed >= 1; owed--) {
        if (this.unanswered >= MAX_ANSWERS_AWAITED) {
          this.held++;
          owed = 0;
          break;
        }
        const i = this.n++;
        const p = (i % ORDERS_PER_PAYOUT === 0 ? Promise.all([this.order(i), this.payout(i / ORDERS_PER_PAYOUT)]) : this.order(i)).then(() => undefined);
        this.inFlight.add(p);
        void p.finally(() => this.inFlight.delete(p));
      }
    };
    tick();
    this.timer = setInterval(tick, SEND_EVERY_MS);
  }

  /** Requests to `url` not answered yet. */
  pendingTo(url: string): number {
    return this.pending.get(url) ?? 0;
  }

  get sent(): number {
    return this.n;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }
}
