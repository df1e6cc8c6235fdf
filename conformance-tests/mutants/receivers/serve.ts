// Shared plumbing of the deliberately broken receivers: a node:http server on 127.0.0.1 and
// a raw-body reader. Each mutant is the correct receiver with exactly one thing broken, to
// prove that the receiver target catches that mistake.
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RunningReceiver {
  url: string;
  close(): Promise<void>;
}

export interface MutantOptions {
  /** Current secret first, then the previous one during a rotation. */
  secrets: string[];
}

export type Handler = (req: IncomingMessage, rawBody: Buffer, res: ServerResponse) => void;

export async function listen(handler: Handler, path = '/webhooks'): Promise<RunningReceiver> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        handler(req, Buffer.concat(chunks), res);
      } catch (err) {
        reply(res, 500, { error: err instanceof Error ? err.message : String(err) });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

export function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
