// `npm run mock -- --stateful`: the reference server's own code (buildApp: every API, the
// sandbox, the event stream, the delivery engine and the payout callbacks) on a SQLite store, on
// the mock's base URL, with test tenants whose credentials it prints and writes to a JSON file
// (tenants.ts). The store is a temporary folder removed when the mock stops, or a state folder
// (`--state DIR`) kept across restarts. The server's settings come from the environment
// (serverSettings), with a development server's defaults. docs/mock.md describes it.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { GivenCredentials } from '../../server/domain/admin.ts';
import { AppError } from '../../server/domain/errors.ts';
import { newRequestId } from '../../server/domain/ids.ts';
import { problemResponse } from '../../server/http/problem.ts';
import type { Services } from '../../server/domain/context.ts';
import { generateSecret } from '../../signing/signature.ts';
import { SettingError } from '../lib/settings.ts';
import { closeServer, listenOn, urlOf } from './start.ts';
import type { MockTenant } from './tenants.ts';

export interface StatefulOptions {
  port?: number;
  host?: string;
  /** The first tenant's credentials; each one absent is generated. */
  given?: GivenCredentials;
  /** How many test tenants; default 1. */
  tenants?: number;
  /** A folder kept across restarts (store, secrets key, tenants file); default a temporary one. */
  stateDir?: string;
  /** Where the tenants' credentials are written too (always also `<state folder>/tenants.json`). */
  tenantsFile?: string;
  /** The environment the server's settings are read from (serverSettings); default none. */
  env?: NodeJS.ProcessEnv;
  /** Signs POST /_mock/webhooks calls that name no secret; default a new whsec_ secret. */
  webhookSecret?: string;
  /** One line per refusal, with its reason; default dropped. */
  refusals?: (line: string) => void;
  /** One line per other answer; default none. */
  access?: (line: string) => void;
  /** Called once the port is bound, before the store is open (a request now waits for it). */
  listening?: (url: string) => void;
}

export interface RunningStatefulMock {
  url: string;
  tenants: MockTenant[];
  /** The first tenant. */
  tenant: MockTenant;
  services: Services;
  stateDir: string;
  /** True when stateDir is temporary: close() removes it. */
  temporary: boolean;
  /** The tenants file in the state folder. */
  tenantsFile: string;
  webhookSecret: string;
  close(): Promise<void>;
}

/** The settings that fix the first tenant's credentials: name → field. */
export const CREDENTIAL_SETTINGS = {
  MOCK_TENANT_ID: 'tenantId',
  MOCK_API_KEY: 'apiKey',
  MOCK_API_HASH: 'apiHash',
  MOCK_MEMBER_TOKEN: 'memberToken',
  MOCK_CALLBACK_SECRET: 'callbackSecret',
} as const satisfies Record<string, keyof GivenCredentials>;

/**
 * The server settings of docs/operations.md that make sense on a developer's machine, read from
 * the environment. The rest are the mock's: NODE_ENV development, DATA_DIR the state folder,
 * the embedded store (no DATABASE_URL), the port and host of MOCK_PORT/--port, MOCK_HOST/--host.
 */
export const PASSED_SETTINGS = [
  'WEBHOOK_ALLOW_INSECURE_URLS',
  'WEBHOOK_RETRY_SCALE',
  'RATE_LIMIT_RPS',
  'AUTH_CACHE_TTL_MS',
  'LIST_CACHE_MB',
  'REQUEST_DEADLINE_MS',
  'SHUTDOWN_GRACE_MS',
  'VALIDATE_RESPONSES',
  'CHECK_NESTED_TRANSACTIONS',
  'RETENTION_LIVE',
  'RETENTION_TEST',
  'IDEMPOTENCY_KEY_RETENTION',
  'PRUNER',
  'PRUNE_INTERVAL',
  'PRUNE_BATCH',
  'PRUNE_PAUSE',
  'PRUNE_BUSY_SHARE',
  'SECRETS_KEY',
  'METRICS_TOKEN',
  'DOCS_DIR',
  'LOG_LEVEL',
] as const;

/** The mock's defaults where they differ from the server's: a local receiver works, and its JSON log is quiet. */
export const MOCK_DEFAULTS: Readonly<Record<string, string>> = { WEBHOOK_ALLOW_INSECURE_URLS: 'true', LOG_LEVEL: 'warn' };

export function serverSettings(env: NodeJS.ProcessEnv, dataDir: string): NodeJS.ProcessEnv {
  const passed = Object.fromEntries(PASSED_SETTINGS.filter((name) => env[name] !== undefined && env[name] !== '').map((name) => [name, env[name]]));
  return { ...MOCK_DEFAULTS, ...passed, NODE_ENV: 'development', DATA_DIR: dataDir };
}

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
  // The port first: a port in use is said before anything is opened. The handler exists before
  // the port is bound: a request that arrives while the store is opened waits for it.
  let serve!: (f: Fetch) => void;
  const handler = new Promise<Fetch>((resolve) => (serve = resolve));
  const server = await listen(async (req) => (await handler)(req), opts.port ?? 4010, host);
  const url = urlOf(server, host);
  opts.listening?.(url);
  const temporary = opts.stateDir === undefined;
  let stateDir: string | null = null;
  try {
    stateDir = temporary ? await mkdtemp(path.join(os.tmpdir(), 'payments-mock-state-')) : path.resolve(opts.stateDir as string);
    if (!temporary) await mkdir(stateDir, { recursive: true });
    const opened = await openServer(stateDir, url, opts);
    serve(opened.fetch);
    const dir = stateDir;
    return {
      url,
      tenants: opened.tenants,
      tenant: opened.tenants[0] as MockTenant,
      services: opened.services,
      stateDir: dir,
      temporary,
      tenantsFile: opened.tenantsFile,
      webhookSecret: opened.webhookSecret,
      async close() {
        await closeServer(server);
        await opened.stop();
        if (temporary) await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    serve(notStarted);
    await closeServer(server);
    if (temporary && stateDir !== null) await rm(stateDir, { recursive: true, force: true });
    throw err;
  }
}

/** The answer to requests that waited for a store that could not be opened. */
const notStarted: Fetch = (req) =>
  problemResponse(new AppError('store-unavailable', 'The stateful mock could not open its store.', { retryAfter: 5 }), new URL(req.url).pathname, newRequestId());

interface OpenedServer {
  fetch: Fetch;
  services: Services;
  tenants: MockTenant[];
  tenantsFile: string;
  webhookSecret: string;
  stop(): Promise<void>;
}

async function openServer(dataDir: string, url: string, opts: StatefulOptions): Promise<OpenedServer> {
  const [{ loadConfig }, { createLogger }, { openServices }, { buildApp }, tenants, { createStatefulFront }, { createMockSender }] = await Promise.all([
    import('../../server/config.ts'),
    import('../../server/logger.ts'),
    import('../../server/services.ts'),
    import('../../server/app/build-app.ts'),
    import('./tenants.ts'),
    import('./stateful-front.ts'),
    import('./webhooks.ts'),
  ]);
  const config = loadConfig(serverSettings(opts.env ?? {}, dataDir));
  const { services } = await openServices(config, createLogger(config.logLevel));
  const built = buildApp(services, config);
  await built.start();
  const sender = createMockSender();
  const stop = async (): Promise<void> => {
    await built.stop();
    await services.store.close();
    await sender.close();
  };
  try {
    const tenantsFile = path.join(dataDir, 'tenants.json');
    const given = opts.given ?? {};
    const kept = await tenants.readTenantsFile(tenantsFile);
    const list = await tenants.provisionTenants(services, opts.tenants ?? 1, kept, given);
    const unapplied = tenants.unappliedCredentials(kept[0], given);
    if (unapplied.length > 0) opts.refusals?.(`the state folder's first tenant exists: its credentials are served, not the pinned ${unapplied.join(', ')}`);
    for (const file of [tenantsFile, ...(opts.tenantsFile ? [path.resolve(opts.tenantsFile)] : [])]) await tenants.writeTenantsFile(file, { baseUrl: url, tenants: list });
    const webhookSecret = opts.webhookSecret ?? generateSecret();
    const front = createStatefulFront({ server: built.app.fetch, sender, webhookSecret, refusals: opts.refusals ?? (() => {}), ...(opts.access ? { access: opts.access } : {}) });
    return { fetch: front.fetch, services, tenants: list, tenantsFile, webhookSecret, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
