// Test harness: the real server on a free loopback port with a temporary data folder and a
// fresh tenant, and typed clients that call it over HTTP.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { pino, type Logger } from 'pino';
import { createManagementClient, createOrdersClient, createSandboxClient, createTransactionsClient } from '../../client/api.ts';
import { loadConfig, type Config } from '../config.ts';
import { createApiKey, createTenant, type CreatedTenant } from '../domain/admin.ts';
import type { EnvironmentName, Permission } from '../domain/model.ts';
import type { Clock } from '../domain/clock.ts';
import type { Scope, Services } from '../domain/context.ts';
import { buildApp, type BuiltApp } from '../app/build-app.ts';
import { openServices } from '../services.ts';
import { answerClientErrors } from '../http/client-error.ts';
import { SERVER_LIMITS } from '../http/server-limits.ts';
import { sinkFile, sinkLogger, sinkText } from './secret-sink.ts';
import type { Resolver } from '../destination/policy.ts';

export interface TestServerOptions {
  clock?: Clock;
  resolve?: Resolver;
  /** Extra settings, as environment variables (defaults: insecure loopback URLs allowed, fast retries). */
  env?: NodeJS.ProcessEnv;
  /** Log lines go here (default: silent). */
  logLevel?: string;
  /** The logger to use instead (e.g. the production one, createLogger, writing to a capture). */
  log?: Logger;
  /**
   * Builds the app instead of `buildApp(services, config)`: the conformance suite's mutants
   * (conformance-tests/mutants/servers/) build the real app with one defect and wrap it.
   */
  build?: (services: Services, config: Config) => BuiltApp;
}

export interface TestTenant extends CreatedTenant {
  transactions: ReturnType<typeof createTransactionsClient>;
  orders: ReturnType<typeof createOrdersClient>;
  sandbox: ReturnType<typeof createSandboxClient>;
  management: ReturnType<typeof createManagementClient>;
}

export interface TestServer {
  url: string;
  config: Config;
  services: Services;
  dataDir: string;
  /** A new tenant with its own all-permissions test key, administrator member and clients. */
  newTenant(name?: string): Promise<TestTenant>;
  /** Clients for given credentials. */
  clientsFor(creds: { apiKey: string; apiHash: string; tenantId?: string; memberToken?: string }): Omit<TestTenant, keyof CreatedTenant>;
  /** Clients for a new key of the tenant with exactly these permissions, and the key. */
  keyWith(
    t: { tenantId: string },
    permissions: readonly Permission[],
    environment?: EnvironmentName,
  ): Promise<Omit<TestTenant, keyof CreatedTenant> & { apiKey: string; apiHash: string }>;
  /** The scope (tenant and environment) the domain functions take. */
  scopeOf(tenantId: string, environment?: EnvironmentName): Promise<Scope>;
  /** The id of one of the tenant's environments. */
  environmentId(tenantId: string, environment?: EnvironmentName): Promise<string>;
  close(): Promise<void>;
}

/**
 * The store under test: SQLite in the temporary data folder by default; with
 * TEST_STORE=postgres (the `postgres` vitest project) a fresh PostgreSQL database per server,
 * a copy of the run's migrated one.
 */
async function storeEnv(): Promise<{ env: NodeJS.ProcessEnv; drop(): Promise<void> }> {
  if (process.env.TEST_STORE !== 'postgres') return { env: {}, drop: async () => undefined };
  const { createTestDatabase } = await import('../store/postgres/testing.ts');
  // A copy of the run's migrated database (postgres-global-setup.ts): the server's own migrate() finds nothing to do.
  const migrated = process.env.POSTGRES_TEST_MIGRATED_URL;
  const db = await createTestDatabase(migrated ? { url: migrated, drop: async () => undefined } : undefined);
  return { env: { DATABASE_URL: db.url, SECRETS_KEY: randomBytes(32).toString('base64url') }, drop: () => db.drop() };
}

/** The app's fetch, appending every error body (status 400 and above) to the secrets sink. */
function sinkErrorBodies<Rest extends unknown[]>(fetch: (req: Request, ...rest: Rest) => Response | Promise<Response>): (req: Request, ...rest: Rest) => Promise<Response> {
  return async (req, ...rest) => {
    const res = await fetch(req, ...rest);
    if (res.status >= 400) sinkText(`${res.status} ${req.method} ${new URL(req.url).pathname}`, await res.clone().text());
    return res;
  };
}

export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'payments-test-'));
  const storage = await storeEnv();
  const config = loadConfig({
    ...storage.env,
    NODE_ENV: 'test',
    DATA_DIR: dataDir,
    WEBHOOK_ALLOW_INSECURE_URLS: 'true',
    VALIDATE_RESPONSES: 'true',
    LOG_LEVEL: opts.logLevel ?? 'silent',
    ...opts.env,
  });
  // With the run's secrets sink, the production logger (redaction included) writes there.
  const log = opts.log ?? (opts.logLevel === undefined ? sinkLogger() : null) ?? pino({ level: config.logLevel });
  const { services } = await openServices(config, log, { ...(opts.clock ? { clock: opts.clock } : {}), ...(opts.resolve ? { resolve: opts.resolve } : {}) });
  const { app, start, stop, metrics } = (opts.build ?? buildApp)(services, config);
  const fetch = sinkFile() === null ? app.fetch : sinkErrorBodies(app.fetch);
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch, hostname: '127.0.0.1', port: 0, serverOptions: SERVER_LIMITS }, () => resolve(s));
    answerClientErrors(s);
  });
  await start();
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const clientsFor: TestServer['clientsFor'] = (creds) => ({
    transactions: createTransactionsClient({ baseUrl: url, ...creds }),
    orders: createOrdersClient({ baseUrl: url, ...creds }),
    sandbox: createSandboxClient({ baseUrl: url, ...creds }),
    management: createManagementClient(creds.memberToken ? { baseUrl: url, memberToken: creds.memberToken } : { baseUrl: url, ...creds }),
  });

  const scopeOf: TestServer['scopeOf'] = async (tenantId, environment = 'test') => {
    const env = await services.store.read((tx) => tx.tenants.findEnvironment(tenantId, environment));
    if (!env) throw new Error(`no ${environment} environment for ${tenantId}`);
    return { tenantId, environmentId: env.id, environment };
  };

  return {
    url,
    config,
    services,
    dataDir,
    async newTenant(name = 'Test Merchant') {
      const t = await createTenant(services, { name });
      return { ...t, ...clientsFor({ apiKey: t.apiKey, apiHash: t.apiHash, tenantId: t.tenantId, memberToken: t.memberToken }) };
    },
    clientsFor,
    async keyWith(t, permissions, environment = 'test') {
      const k = await createApiKey(services, { tenantId: t.tenantId, environment, permissions });
      return { ...clientsFor({ apiKey: k.apiKey, apiHash: k.apiHash, tenantId: t.tenantId }), apiKey: k.apiKey, apiHash: k.apiHash };
    },
    scopeOf,
    async environmentId(tenantId, environment) {
      return (await scopeOf(tenantId, environment)).environmentId;
    },
    async close() {
      await stop();
      if (sinkFile() !== null) sinkText('metrics', await metrics.render());
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await services.store.close();
      await storage.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
