// `npm run mock -- --stateful`: the reference server's own code (buildApp: every API, the
// sandbox, the event stream, the delivery engine and the payout callbacks) on a SQLite store, on
// the mock's base URL, with test tenants whose credentials it prints and writes to a JSON file
// (tenants.ts). The store is a temporary folder removed when the mock stops, or a state folder
// (`--state DIR`) kept across restarts. The server's settings come from the environment
// (serverSettings), with a development server's defaults; MOCK_ENDPOINT_URL and
// MOCK_ENDPOINT_SECRET pin tenant 1's test webhook endpoint (pinnedEndpointSettings), the one
// thing the API never lets a caller choose (pin-endpoint.ts). docs/mock.md describes it.
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { GivenCredentials } from '../../server/domain/admin.ts';
import { AppError } from '../../server/domain/errors.ts';
import { newRequestId } from '../../server/domain/ids.ts';
import { problemResponse } from '../../server/http/problem.ts';
import type { Services } from '../../server/domain/context.ts';
import { generateSecret } from '../../signing/signature.ts';
import type { SignatureScheme } from '../../server/domain/model.ts';
import { WEBHOOK_URL_MAX_LENGTH } from '../../generated/vocabulary.ts';
import { SettingError } from '../lib/settings.ts';
import { GENERATED_DIR } from '../lib/specs.ts';
import { ENDPOINT_SETTINGS } from './cli.ts';
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
  /** Tenant 1's test endpoint, pinned (MOCK_ENDPOINT_*, pinnedEndpointSettings); default none. */
  endpoint?: PinnedEndpointSettings;
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
  /** The pinned endpoint as found and left (not its secret); null without MOCK_ENDPOINT_URL. */
  endpoint: PinnedEndpointState | null;
  close(): Promise<void>;
}

/** What the banner says of the pinned endpoint: never its secret. */
export interface PinnedEndpointState {
  id: string;
  url: string;
  signatureScheme: SignatureScheme;
  outcome: 'created' | 'kept' | 'updated' | 'moved';
  previousUrl?: string;
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

export interface PinnedEndpointSettings {
  url: string;
  secret: string;
  /** Absent: a new endpoint's default (service-signature), a kept one's own. */
  signatureScheme?: SignatureScheme;
}

/** How to make a secret of the form new ones have (44 letters and digits after whsec_). */
const MAKE_A_SECRET = 'e.g. whsec_$(openssl rand -hex 22)';

/** The contract's WebhookSecret pattern and WebhookSignatureScheme values, as the server validates its answers. */
function endpointSchemas(): { secret: RegExp; schemes: readonly string[] } {
  const doc = JSON.parse(readFileSync(path.join(GENERATED_DIR, 'openapi', 'management.bundled.json'), 'utf8')) as {
    components: { schemas: { WebhookSecret: { pattern: string }; WebhookSignatureScheme: { enum: string[] } } };
  };
  return { secret: new RegExp(doc.components.schemas.WebhookSecret.pattern), schemes: doc.components.schemas.WebhookSignatureScheme.enum };
}

/**
 * Tenant 1's pinned test endpoint (MOCK_ENDPOINT_URL, MOCK_ENDPOINT_SCHEME, MOCK_ENDPOINT_SECRET),
 * null when none is set. The URL and the secret go together; the secret has the contract's
 * WebhookSecret form and is never repeated in a message. The URL's destination checks need the
 * server's policy: startStatefulMock applies them.
 */
export function pinnedEndpointSettings(env: NodeJS.ProcessEnv): PinnedEndpointSettings | null {
  const [url, scheme, secret] = ENDPOINT_SETTINGS.map((name) => env[name] || undefined) as [string | undefined, string | undefined, string | undefined];
  if (url === undefined && scheme === undefined && secret === undefined) return null;
  if (url === undefined) throw new SettingError(`${secret !== undefined ? 'MOCK_ENDPOINT_SECRET' : 'MOCK_ENDPOINT_SCHEME'} needs MOCK_ENDPOINT_URL, the URL of the endpoint to pin`);
  if (secret === undefined) throw new SettingError(`MOCK_ENDPOINT_URL needs MOCK_ENDPOINT_SECRET, the signing secret your receiver verifies with (${MAKE_A_SECRET})`);
  const schemas = endpointSchemas();
  if (!schemas.secret.test(secret)) throw new SettingError(`MOCK_ENDPOINT_SECRET is not a signing secret: whsec_ followed by 43 or 44 letters, digits, - or _ (${MAKE_A_SECRET})`);
  if (scheme !== undefined && !schemas.schemes.includes(scheme)) throw new SettingError(`MOCK_ENDPOINT_SCHEME must be one of ${schemas.schemes.join(', ')}, not ${scheme}`);
  if (url.length > WEBHOOK_URL_MAX_LENGTH) throw new SettingError(`MOCK_ENDPOINT_URL is longer than ${WEBHOOK_URL_MAX_LENGTH} characters`);
  return { url, secret, ...(scheme === undefined ? {} : { signatureScheme: scheme as SignatureScheme }) };
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
    if (!temporary) await openStateFolder(stateDir);
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
      endpoint: opened.endpoint,
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

/** What a new state folder's .gitignore says: everything in it (as pytest does for its cache folder). */
export const STATE_GITIGNORE = '# Made by npm run mock -- --stateful --state: plaintext API keys, member tokens and secrets; never commit them.\n*\n';

/**
 * The state folder, made when it does not exist: owner-only (0700: it holds plaintext keys, the
 * callback secret and the store's secrets key) with a .gitignore that ignores all of it, so the
 * documented `--state .mock-state` in a project folder stays out of git. A folder that exists is
 * the developer's: left as it is. Returns whether it was made.
 */
export async function openStateFolder(dir: string): Promise<boolean> {
  await mkdir(path.dirname(dir), { recursive: true });
  try {
    await mkdir(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  await writeFile(path.join(dir, '.gitignore'), STATE_GITIGNORE, { mode: 0o600 });
  return true;
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
  endpoint: PinnedEndpointState | null;
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
    // After the tenants file: a state folder keeps its tenants even when the pinned URL is refused.
    const endpoint = opts.endpoint ? await pinTenantEndpoint(services, list[0] as MockTenant, opts.endpoint) : null;
    const webhookSecret = opts.webhookSecret ?? generateSecret();
    const front = createStatefulFront({ server: built.app.fetch, sender, webhookSecret, refusals: opts.refusals ?? (() => {}), ...(opts.access ? { access: opts.access } : {}) });
    return { fetch: front.fetch, services, tenants: list, tenantsFile, webhookSecret, endpoint, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Tenant 1's test endpoint as pinned; a URL the destination checks refuse is a SettingError. */
async function pinTenantEndpoint(services: Services, tenant: MockTenant, pinned: PinnedEndpointSettings): Promise<PinnedEndpointState> {
  const { pinEndpoint } = await import('./pin-endpoint.ts');
  const env = await services.store.read((tx) => tx.tenants.findEnvironment(tenant.tenantId, 'test'));
  if (!env) throw new Error(`tenant ${tenant.tenantId} has no test environment`);
  try {
    const { endpoint: e, outcome, previousUrl } = await pinEndpoint(services, { tenantId: tenant.tenantId, environmentId: env.id, environment: 'test' }, { ...pinned, field: 'MOCK_ENDPOINT_URL' });
    return { id: e.id, url: e.url, signatureScheme: e.signatureScheme, outcome, ...(previousUrl === undefined ? {} : { previousUrl }) };
  } catch (err) {
    // The API's 400 destination-not-allowed, as a setting the developer got wrong.
    if (err instanceof AppError && err.slug === 'destination-not-allowed') throw new SettingError(err.detail.replace(/\.$/, ''));
    throw err;
  }
}
