// A webhook endpoint on loopback that records every event it is sent (by its Service-Event-Id)
// and when, and answers 200.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Receiver {
  url: string;
  /** Event id → times received. */
  readonly receipts: ReadonlyMap<string, number>;
  /** When each receipt came, in order (ms since the epoch). */
  readonly times: readonly number[];
  /** Event id → when it first came. */
  readonly firstAt: ReadonlyMap<string, number>;
  close(): Promise<void>;
}

export async function startReceiver(now: () => number = Date.now): Promise<Receiver> {
  const receipts = new Map<string, number>();
  const times: number[] = [];
  const firstAt = new Map<string, number>();
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['service-event-id'] ?? '');
      receipts.set(id, (receipts.get(id) ?? 0) + 1);
      times.push(now());
      if (!firstAt.has(id)) firstAt.set(id, now());
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    receipts,
    times,
    firstAt,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
