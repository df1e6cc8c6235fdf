// `npm run mock -- --stateful`: the reference server's own code (buildApp: every API, the
// sandbox, the event stream, the delivery engine and the payout callbacks) on a temporary SQLite
// store, on the mock's base URL, with a test tenant whose credentials it prints. A created order
// can be read back, the sandbox moves orders and payouts, PATCH sticks; webhooks and callbacks
// are signed and sent, to loopback too (the development destination rules). Nothing is kept: the
// store is removed when the mock stops. Credentials can be fixed through settings (MOCK_API_KEY,
// ...: docs/mock.md), so that a frontend's .env can hold them.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { CreatedTenant, GivenCredentials } from '../../server/domain/admin.ts';
import { AppError } from '../../server/domain/errors.ts';
import { newRequestId } from '../../server/domain/ids.ts';
import { problemResponse } from '../../server/http/problem.ts';
import type { Services } from '../../server/domain/context.ts';
import { SettingError } from '../lib/settings.ts';
import { closeServer, listenOn, urlOf } from './start.ts';

export interface StatefulOptions {
  port?: number;
  host?: string;
  /** The test tenant's credentials; each one absent is generated. */
  given?: GivenCredentials;
  /** The server's log level (its JSON lines on stdout); default warn. */
  logLevel?: string;
}

export interface RunningStatefulMock {
  url: string;
  tenant: CreatedTenant;
  services: Services;
  close(): Promise<void>;
}

/** The settings that fix the test tenant's credentials: name → field. */
export const CREDENTIAL_SETTINGS = {
  MOCK_TENANT_ID: 'tenantId',
  MOCK_API_KEY: 'apiKey',
  MOCK_API_HASH: 'apiHash',
  MOCK_MEMBER_TOKEN: 'memberToken',
  MOCK_CALLBACK_SECRET: 'callbackSecret',
} as const satisfies Record<string, keyof GivenCredentials>;

/** The credentials the environment fixes; an API key needs its hash (and the other way round). */
export function givenCredentials(env: NodeJS.ProcessEnv): GivenCredentials {
  const given: GivenCredentials = {};
  for (const [name, field] of Object.entries(CREDENTIAL_SETTINGS)) {
    const value = env[name];
    if (value) given[field] = value;
  }
  if ((given.apiKey === undefined) !== (given.apiHash === undefined)) throw new SettingError('MOCK_API_KEY and MOCK_API_HASH go together: set both or neither');
  if (given.apiKey !== undefined && !given.apiKey.startsWith('pk_test_')) throw new SettingError('MOCK_API_KEY must start with pk_test_ (a test key)');
  return given;
}

type Fetch = (req: Request) => Response | Promise<Response>;

/** `listen` binds the port (listenOn; tests see what it serves before the store is open). */
export async function startStatefulMock(opts: StatefulOptions = {}, listen = listenOn): Promise<RunningStatefulMock> {
  const host = opts.host ?? '127.0.0.1';
  // Exists before the port is bound: a request that arrives while the folder is made and the
  // store opened waits for them.
  let serve!: (fetch: Promise<Fetch>) => void;
  const handler = new Promise<Fetch>((resolve) => (serve = resolve));
  // The port first: a port in use is said before anything is opened.
  const server = await listen(async (req) => (await handler)(req), opts.port ?? 4010, host);
  let dataDir: string | null = null;
  try {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'payments-mock-state-'));
    const opened = openServer(dataDir, opts);
    serve(opened.then((o) => o.fetch, () => notStarted));
    const { services, stop, tenant } = await opened;
    const folder = dataDir;
    return {
      url: urlOf(server, host),
      tenant,
      services,
      async close() {
        await closeServer(server);
        await stop();
        await services.store.close();
        await rm(folder, { recursive: true, force: true });
      },
    };
  } catch (err) {
    serve(Promise.resolve(notStarted));
    await closeServer(server);
    if (dataDir !== null) await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
}

/** The answer to requests that waited for a store that could not be opened. */
const notStarted: Fetch = (req) =>
  problemResponse(new AppError('store-unavailable', 'The stateful mock could not open its store.', { retryAfter: 5 }), new URL(req.url).pathname, newRequestId());

async function openServer(dataDir: string, opts: StatefulOptions): Promise<{ fetch: (req: Request) => Response | Promise<Response>; services: Services; stop(): Promise<void>; tenant: CreatedTenant }> {
  const [{ loadConfig }, { createLogger }, { openServices }, { buildApp }, { createTenant }] = await Promise.all([
    import('../../server/config.ts'),
    import('../../server/logger.ts'),
    import('../../server/services.ts'),
    import('../../server/app/build-app.ts'),
    import('../../server/domain/admin.ts'),
  ]);
  // A server in development: http and loopback destinations allowed, so a local receiver works.
  const config = loadConfig({ NODE_ENV: 'development', DATA_DIR: dataDir, WEBHOOK_ALLOW_INSECURE_URLS: 'true', LOG_LEVEL: opts.logLevel ?? 'warn' });
  const { services } = await openServices(config, createLogger(config.logLevel));
  const built = buildApp(services, config);
  await built.start();
  const tenant = await createTenant(services, { name: 'Mock Merchant', ...(opts.given ? { given: opts.given } : {}) });
  return { fetch: built.app.fetch, services, stop: built.stop, tenant };
}
