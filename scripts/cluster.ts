// npm run start:cluster: a local two-instance cluster on one embedded PostgreSQL, for trying
// what several instances behind a load balancer do (shared state, shared delivery queue).
// PostgreSQL's data, its password and the SECRETS_KEY every instance shares are kept in
// DATA_DIR/cluster/, so a restart finds everything again; the first start creates the
// `payments` database and a demo tenant and prints its credentials once. The instances listen
// on PORT and PORT + 1. Ctrl-C or SIGTERM stops both instances (they drain their deliveries),
// then PostgreSQL; if this process is killed outright, the instances and PostgreSQL notice
// and stop themselves.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../server/config.ts';
import { createTenant } from '../server/domain/admin.ts';
import { createLogger } from '../server/logger.ts';
import { openServices } from '../server/services.ts';
import { DIST_DIR } from '../server/build/bundle.ts';
import { serverNodeArgs } from '../server/build/layout.ts';
import { whenReady } from '../server/lifecycle/supervision.ts';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../server/testing/embedded-postgres.ts';
import { BUNDLE_DIR_VARIABLE } from '../server/testing/server-bundle.ts';
import { ROOT } from './lib/specs.ts';

const DATABASE = 'payments';
const STOP_TIMEOUT_MS = 60_000;
const READY_TIMEOUT_MS = 60_000;

const base = loadConfig();
const clusterDir = path.join(base.dataDir, 'cluster');
const ports = [base.port, base.port + 1];
const log = createLogger(base.logLevel);

async function sharedSecretsKey(): Promise<string> {
  const file = path.join(clusterDir, 'secrets.key');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const key = randomBytes(32).toString('base64url');
  await writeFile(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  return key;
}

/** Creates the `payments` database when absent; true when it did. */
async function ensureDatabase(adminUrl: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    if (rowCount) return false;
    await client.query(`CREATE DATABASE ${DATABASE}`);
    return true;
  } finally {
    await client.end();
  }
}

function startInstance(port: number, env: NodeJS.ProcessEnv): ChildProcess {
  // What `npm start` runs: dist/, which npm run start:cluster has brought up to date (a test
  // run's own bundles under vitest), started by node itself, so a signal reaches the server.
  const bundles = process.env[BUNDLE_DIR_VARIABLE] ?? DIST_DIR;
  return spawn(process.execPath, serverNodeArgs(bundles), {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port) },
    // The IPC channel closes when this process dies, even by SIGKILL: the instance then stops
    // as on SIGTERM (server/main.ts) instead of serving on without its cluster.
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** Ready is what the instance says over its IPC channel (server/lifecycle/supervision.ts). */
async function ready(port: number, instance: ChildProcess): Promise<void> {
  await whenReady(instance, READY_TIMEOUT_MS).catch((err: Error) => {
    throw new Error(`the instance on port ${port} ${err.message}`);
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

let postgres: EmbeddedPostgres | null = null;
const instances: ChildProcess[] = [];
let stopping: Promise<never> | null = null;

function stop(reason: string, code: number): Promise<never> {
  stopping ??= (async () => {
    log.info({ reason }, 'cluster: stopping both instances, then PostgreSQL');
    await Promise.all(
      instances.map(async (child) => {
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
        child.kill('SIGTERM');
        await exited(child);
        clearTimeout(timer);
      }),
    );
    await postgres?.stop();
    log.info('cluster: stopped');
    process.exit(code);
  })();
  return stopping;
}

process.on('SIGINT', () => void stop('SIGINT', 0));
process.on('SIGTERM', () => void stop('SIGTERM', 0));

try {
  await mkdir(clusterDir, { recursive: true });
  const started = Date.now();
  postgres = await startEmbeddedPostgres({ dataDir: path.join(clusterDir, 'postgres') });
  const created = await ensureDatabase(postgres.url);
  const url = new URL(postgres.url);
  url.pathname = `/${DATABASE}`;
  const env = { DATABASE_URL: url.toString(), SECRETS_KEY: await sharedSecretsKey() };

  // Migrations once, before either instance starts; then the demo tenant of a new database.
  const config = loadConfig({ ...process.env, ...env });
  const { services } = await openServices(config, log);
  try {
    if (created) {
      const demo = await createTenant(services, { name: 'Demo Merchant' });
      process.stdout.write(`\nDemo tenant created. These secrets are shown once; keep them somewhere safe.\n${JSON.stringify(demo, null, 2)}\n\n`);
    }
  } finally {
    await services.store.close();
  }
  log.info({ postgres: `postgres://postgres@${url.host}/${DATABASE}`, passwordFile: path.join(clusterDir, 'postgres.password'), ms: Date.now() - started }, 'cluster: embedded PostgreSQL ready');

  for (const port of ports) {
    const child = startInstance(port, env);
    instances.push(child);
    child.once('exit', (code, signal) => {
      if (!stopping) void stop(`the instance on port ${port} exited (${signal ?? code})`, 1);
    });
  }
  await Promise.all(instances.map((child, i) => ready(ports[i]!, child)));
  process.stdout.write(`Cluster ready: ${ports.map((p) => `http://localhost:${p}`).join(' and ')} share one PostgreSQL. Ctrl-C stops everything.\n`);
} catch (err) {
  process.stderr.write(`cluster failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  await stop('start failed', 1);
}
