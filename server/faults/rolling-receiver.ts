// The webhook receiver of the release test (rolling-upgrade.test.ts), one path per endpoint, and
// the rule a routed endpoint's receipts are judged by.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook } from '../../client/webhooks/index.ts';
import type { Window } from './rolling-traffic.ts';

/** An endpoint subscribed to one event type, added during the last phase. */
export interface Routed {
  path: string;
  type: string;
  /** When its creation was sent and answered. */
  window: Window;
}

export interface OrderEvent {
  id: string;
  type: string;
  order_id: string;
}

/**
 * What a routed endpoint received against its rule: exactly its type's events made after it was
 * added. An event whose request was acknowledged before the endpoint's creation was sent must
 * not reach it (`early`); one whose request was sent after the creation was answered must
 * (`missed`, `after` of them); one made while both were in flight may or may not (`overlapping`).
 */
export function judge(r: Routed, events: readonly OrderEvent[], got: ReadonlyMap<string, number>, windows: ReadonlyMap<string, Window>) {
  const typeOf = new Map(events.map((e) => [e.id, e.type]));
  const verdict = { received: got.size, otherType: [...got.keys()].filter((id) => typeOf.get(id) !== r.type).length, before: 0, early: 0, after: 0, missed: 0, overlapping: 0, unknown: 0 };
  for (const e of events) {
    if (e.type !== r.type) continue;
    const w = windows.get(`${e.type} ${e.order_id}`);
    if (!w) verdict.unknown++;
    else if (w.acked < r.window.sent) {
      verdict.before++;
      if (got.has(e.id)) verdict.early++;
    } else if (w.sent > r.window.acked) {
      verdict.after++;
      if (!got.has(e.id)) verdict.missed++;
    } else verdict.overlapping++;
  }
  return verdict;
}

/** A receiver per path: the endpoints (active, disabled, routed), the payouts' notifyUrl. */
export class Receiver {
  readonly byPath = new Map<string, Map<string, number>>();
  /**
   * Every delivery as it came, to verify its signature at the end (a routed endpoint's secret is
   * known only once its creation is answered, and its first delivery may come before that).
   */
  private readonly raw: Array<{ path: string; id: string; body: Buffer; headers: Record<string, string | string[] | undefined> }> = [];
  /**
   * Deliveries awaited (path and event id) and not received yet: kept as they arrive, so that
   * waiting for them all reads a count instead of matching every delivery row again per look.
   */
  private readonly awaited = new Set<string>();
  private server: Server | null = null;
  url = '';
  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const seen = this.byPath.get(req.url ?? '') ?? new Map<string, number>();
        this.byPath.set(req.url ?? '', seen);
        const id = String(req.headers['service-event-id'] ?? '');
        this.raw.push({ path: req.url ?? '', id, body: Buffer.concat(chunks), headers: req.headers });
        seen.set(id, (seen.get(id) ?? 0) + 1);
        this.awaited.delete(`${req.url ?? ''} ${id}`);
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  /** The deliveries to the paths of `secrets` (path → its endpoint's secret) that do not verify with it, and why. */
  unverified(secrets: ReadonlyMap<string, string>): string[] {
    const bad: string[] = [];
    for (const d of this.raw) {
      const secret = secrets.get(d.path);
      if (secret === undefined) continue;
      try {
        verifyWebhook({ rawBody: d.body, headers: d.headers, secrets: secret });
      } catch (err) {
        bad.push(`${d.path} ${d.id}: ${(err as Error).message}`);
      }
    }
    return bad;
  }
  received(p: string): Map<string, number> {
    return this.byPath.get(p) ?? new Map();
  }
  /** Awaits the delivery of event `id` at path `p`, unless it has come already. */
  await(p: string, id: string): void {
    if (!this.received(p).has(id)) this.awaited.add(`${p} ${id}`);
  }
  /** The deliveries awaited that have not come, a few of them named. */
  outstanding(): { count: number; some: string[] } {
    return { count: this.awaited.size, some: [...this.awaited].slice(0, 3) };
  }
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server?.closeAllConnections();
      this.server?.close(() => resolve());
    });
  }
}
