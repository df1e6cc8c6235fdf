// startMock: Prism's engine per document, in this process, behind the front on the one base URL.
// Used by `npm run mock` and by other scripts that need the mock (start, use, close).
//
// The port is bound first, before the documents and Prism are loaded: a port in use is known
// at once, and a request that arrives while the documents load waits for them.
import { serve, type ServerType } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { generateSecret } from '../../signing/signature.ts';

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
  /** The front's refusals and ignored preferences, one line each; default dropped. */
  refusals?: (line: string) => void;
}

export interface RunningMock {
  url: string;
  secrets: { webhook: string; callback: string };
  /**
   * Serves the documents of generated/ as they are now: each document that changed gets a new
   * Prism instance and the front recompiles its validators; the others keep serving. Also
   * `POST /_mock/reload` (npm run dev calls it after a good save).
   */
  reload(): Promise<void>;
  close(): Promise<void>;
}

type Fetch = (req: Request) => Response | Promise<Response>;

/** Listens on host:port; rejects with the listen error (EADDRINUSE: the port is in use). */
export function listenOn(fetch: Fetch, port: number, host: string): Promise<ServerType> {
  return new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch, port, hostname: host }, () => {
      s.off('error', reject);
      resolve(s);
    });
    s.once('error', reject);
  });
}

export function closeServer(server: ServerType): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    // Idle keep-alive connections would hold close() for their timeout.
    if ('closeAllConnections' in server) server.closeAllConnections();
  });
}

export function urlOf(server: ServerType, host: string): string {
  const port = (server.address() as AddressInfo).port;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export async function startMock(opts: MockOptions = {}): Promise<RunningMock> {
  const host = opts.host ?? '127.0.0.1';
  const secrets = { webhook: opts.webhookSecret ?? generateSecret(), callback: opts.callbackSecret ?? generateSecret() };
  let serving: Promise<Fetch> | null = null;
  const server = await listenOn(async (req) => (await (serving as Promise<Fetch>))(req), opts.port ?? 4010, host);
  const url = urlOf(server, host);
  const loaded = loadMock(opts, secrets, () => url);
  serving = loaded.then((m) => m.fetch);
  try {
    const mock = await loaded;
    return {
      url,
      secrets,
      reload: mock.reload,
      async close() {
        await closeServer(server);
        await mock.close();
      },
    };
  } catch (err) {
    serving = Promise.resolve(() => new Response(null, { status: 503 }));
    await closeServer(server);
    throw err;
  }
}

/** The documents, Prism and the front (loaded after the port is bound: they take the time). */
async function loadMock(opts: MockOptions, secrets: RunningMock['secrets'], selfUrl: () => string): Promise<{ fetch: Fetch; reload(): Promise<void>; close(): Promise<void> }> {
  const [{ serveDocuments }, { createMockFront }, { createMockSender }] = await Promise.all([import('./served.ts'), import('./front.ts'), import('./webhooks.ts')]);
  const documents = await serveDocuments(opts.log === undefined ? {} : { log: opts.log });
  const sender = createMockSender();
  const newFront = (): ReturnType<typeof createMockFront> =>
    createMockFront({
      apis: documents.mocked(),
      prism: documents.prism,
      selfUrl,
      webhookSecret: secrets.webhook,
      callbackSecret: secrets.callback,
      sender,
      ...(opts.refusals === undefined ? {} : { log: opts.refusals }),
    });
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
  return { fetch, reload, close: () => sender.close() };
}
