// startMock: a Prism per document, each on a free loopback port, behind the front on the one base URL. Used by
// `npm run mock` and by other scripts that need the mock (start, use, close).
import { serve, type ServerType } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { generateSecret } from '../../signing/signature.ts';
import { createMockFront } from './front.ts';
import { serveDocuments } from './served.ts';
import { createMockSender } from './webhooks.ts';

export interface MockOptions {
  /** The base URL's port; 0 picks a free one. Default 4010. */
  port?: number;
  host?: string;
  /** Signs POST /_mock/webhooks without a secret; default a new whsec_ secret (see `secrets`). */
  webhookSecret?: string;
  /** Signs the payout-completed callbacks Prism fires; default a new whsec_ secret. */
  callbackSecret?: string;
  /** Prism's own log lines; default dropped. */
  log?: (line: string) => void;
}

export interface RunningMock {
  url: string;
  secrets: { webhook: string; callback: string };
  /**
   * Serves the documents of generated/ as they are now: the Prism of each document that changed
   * reloads it and the front recompiles its validators; the others keep serving. Also
   * `POST /_mock/reload` (npm run dev calls it after a good save).
   */
  reload(): Promise<void>;
  close(): Promise<void>;
}

export async function startMock(opts: MockOptions = {}): Promise<RunningMock> {
  const host = opts.host ?? '127.0.0.1';
  const secrets = { webhook: opts.webhookSecret ?? generateSecret(), callback: opts.callbackSecret ?? generateSecret() };
  const documents = await serveDocuments({ log: opts.log ?? (() => {}) });
  let url = '';
  const sender = createMockSender();
  const newFront = (): ReturnType<typeof createMockFront> =>
    createMockFront({ apis: documents.mocked(), prismUrl: documents.prismUrl, selfUrl: () => url, webhookSecret: secrets.webhook, callbackSecret: secrets.callback, sender });
  let front = newFront();
  // One reload at a time; a call made during one waits for it and then runs its own.
  let reloading: Promise<void> = Promise.resolve();
  const reload = (): Promise<void> => {
    reloading = reloading.catch(() => {}).then(async () => {
      try {
        await documents.refresh();
      } finally {
        // The compiled operations of every document that did reload (a front costs milliseconds).
        front = newFront();
      }
    });
    return reloading;
  };
  const fetch = async (req: Request): Promise<Response> => {
    if (req.method === 'POST' && new URL(req.url).pathname === '/_mock/reload') {
      try {
        await reload();
        return new Response(null, { status: 204 });
      } catch (err) {
        const detail = err instanceof Error ? err.message : String(err);
        return Response.json({ type: 'about:blank', title: 'The mock could not reload its documents', status: 503, detail }, { status: 503, headers: { 'content-type': 'application/problem+json' } });
      }
    }
    return front.fetch(req);
  };
  let server: ServerType;
  try {
    server = await new Promise<ServerType>((resolve, reject) => {
      const s = serve({ fetch, port: opts.port ?? 4010, hostname: host }, () => resolve(s));
      s.once('error', reject);
    });
  } catch (err) {
    await Promise.all([documents.close(), sender.close()]);
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    url,
    secrets,
    reload,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Idle keep-alive connections would hold close() for their timeout.
        if ('closeAllConnections' in server) server.closeAllConnections();
      });
      await Promise.all([documents.close(), sender.close()]);
    },
  };
}
