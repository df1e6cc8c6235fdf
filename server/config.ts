// Settings come from the environment; every one is listed in docs/operations.md.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { portalSettings, type PortalSettings } from './portal/settings.ts';
import { retentionSettings, type RetentionSettings } from './retention/settings.ts';
import { parseKeyRing } from './domain/secrets.ts';
import { ATTEMPT_TIMEOUT_MS } from './delivery/schedule.ts';
import { DEFAULT_HEALTHY_LATENCY_MS, DEFAULT_MAX_PER_ENDPOINT_LIMIT, DEFAULT_PER_ENDPOINT_LIMIT } from './delivery/worker/limits.ts';
import { DEFAULT_DISABLE_AFTER_MS } from './domain/endpoints/health.ts';

/** The folder `npm run docs` builds the HTML API reference into. */
export const DEFAULT_DOCS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'api');

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** The built HTML API reference served on /docs (`npm run docs` writes it). */
  docsDir: string;
  databaseUrl: string | null;
  logLevel: string;
  nodeEnv: string;
  /** Development setting: http and loopback webhook URLs on any port. Refused in production. */
  allowInsecureUrls: boolean;
  /** Factor applied to the retry schedule (1 = the real schedule). */
  retryScale: number;
  /** WEBHOOK_DISABLE_AFTER (seconds, default 5 days): how long every attempt to an endpoint must fail before it is disabled (issue 69). */
  disableAfterMs: number;
  /** The key ring that seals signing secrets (domain/secrets.ts parseKeyRing: one base64url key of 32 bytes, or `id:key,...` newest first); generated into DATA_DIR when unset (SQLite only). */
  secretsKey: string | null;
  /** Validate every response against the spec (tests and development). */
  validateResponses: boolean;
  /** Requests per second per credential (0 = no limit), per instance. */
  rateLimitPerSecond: number;
  /** Who may read /metrics: a bearer token on the main port, and/or a separate listener. */
  metrics: MetricsConfig;
  /** PostgreSQL connections per instance (each open transaction or read holds one while it runs). */
  databasePoolSize: number;
  /** Deadlines of every wait for PostgreSQL (store/postgres/deadlines.ts). */
  databaseDeadlines: { statementMs: number; connectMs: number; transactionMs: number };
  /** Store calls waiting for PostgreSQL at most before more are refused with 503 (admission control). */
  databaseMaxQueued: number;
  /** SIGTERM: the process exits within this, whatever still waits (requests, deliveries, the database). */
  shutdownGraceMs: number;
  /** Every API answer (the event stream aside) within this: 503 for a read, 504 outcome-unknown for a write (0: none). */
  requestDeadlineMs: number;
  /** How long verified credentials are trusted without the store (0 = ask the store every time). */
  authCacheTtlMs: number;
  /** Bytes of rendered list pages kept per instance (LIST_CACHE_MB; 0 = none; http/page-cache.ts). */
  listCacheBytes: number;
  /** Refuse a store call made inside a store transaction (store/nesting-guard.ts); default off in production only. */
  checkNestedTransactions: boolean;
  /** DELIVERY_WORKER=off: this instance serves the APIs only and sends no webhooks (PostgreSQL
   * only: other instances of the same database deliver what it queues). */
  deliveryWorker: boolean;
  /** DELIVERY_THREAD=off: the webhooks' HTTP requests run on the API's own thread instead of a
   * sending thread of their own (delivery/thread/). */
  deliveryThread: boolean;
  /** Each destination's adaptive limit of webhook attempts in flight (delivery/worker/endpoint-limit.ts). */
  endpointConcurrency: EndpointConcurrency;
  /** What expires and how the pruner removes it (retention/settings.ts). */
  retention: RetentionSettings;
  /** The portal's relying party (passkeys) and re-verification window (portal/settings.ts). */
  portal: PortalSettings;
}

export interface EndpointConcurrency {
  /** WEBHOOK_ENDPOINT_CONCURRENCY: where the limit starts. */
  initial: number;
  /** WEBHOOK_ENDPOINT_MAX_CONCURRENCY: the most it grows to. */
  max: number;
  /** WEBHOOK_ENDPOINT_HEALTHY_MS: a 2xx within this grows it; a slower answer halves it. */
  healthyMs: number;
}

export interface MetricsConfig {
  /** METRICS_TOKEN: /metrics on the main port answers only `Authorization: Bearer <token>`. */
  token: string | null;
  /** METRICS_PORT: /metrics (and /readyz, /healthz) on a listener of their own, e.g. bound to a private address. */
  port: number | null;
  /** METRICS_HOST: the address of that listener (default 127.0.0.1). */
  host: string;
}

/** A limit above the worker's shared budget of sends (64) could never be used; 1 024 only refuses nonsense. */
const MAX_ENDPOINT_CONCURRENCY = 1_024;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const MIN_METRICS_TOKEN_LENGTH = 16;

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Every setting is checked here, before anything is opened: a bad one is a clear message
  // and a non-zero exit, never a half-started process.
  const port = portSetting(env, 'PORT', 8080);
  const retryScale = Number(env.WEBHOOK_RETRY_SCALE ?? 1);
  if (!Number.isFinite(retryScale) || retryScale <= 0) throw new ConfigError(`WEBHOOK_RETRY_SCALE must be a positive number, not ${env.WEBHOOK_RETRY_SCALE}`);
  const disableAfter = Number(env.WEBHOOK_DISABLE_AFTER ?? DEFAULT_DISABLE_AFTER_MS / 1000);
  if (!Number.isInteger(disableAfter) || disableAfter <= 0) throw new ConfigError(`WEBHOOK_DISABLE_AFTER must be whole seconds above 0, not ${env.WEBHOOK_DISABLE_AFTER}`);
  const nodeEnv = env.NODE_ENV ?? 'development';
  const allowInsecureUrls = env.WEBHOOK_ALLOW_INSECURE_URLS === 'true';
  if (allowInsecureUrls && nodeEnv === 'production') {
    throw new ConfigError('WEBHOOK_ALLOW_INSECURE_URLS=true is a development setting and is refused when NODE_ENV=production');
  }
  const rateLimitPerSecond = Number(env.RATE_LIMIT_RPS ?? 1000);
  if (!Number.isFinite(rateLimitPerSecond) || rateLimitPerSecond < 0) throw new ConfigError(`RATE_LIMIT_RPS must be a number ≥ 0, not ${env.RATE_LIMIT_RPS}`);
  const authCacheTtlMs = Number(env.AUTH_CACHE_TTL_MS ?? 5000);
  if (!Number.isInteger(authCacheTtlMs) || authCacheTtlMs < 0 || authCacheTtlMs > 60_000) {
    throw new ConfigError(`AUTH_CACHE_TTL_MS must be whole milliseconds from 0 to 60000, not ${env.AUTH_CACHE_TTL_MS}`);
  }
  const listCacheMb = Number(env.LIST_CACHE_MB ?? 16);
  if (!Number.isInteger(listCacheMb) || listCacheMb < 0 || listCacheMb > 1024) {
    throw new ConfigError(`LIST_CACHE_MB must be a whole number of megabytes from 0 to 1024, not ${env.LIST_CACHE_MB}`);
  }
  const databasePoolSize = Number(env.DATABASE_POOL_SIZE ?? 20);
  if (!Number.isInteger(databasePoolSize) || databasePoolSize < 2 || databasePoolSize > 500) {
    throw new ConfigError(`DATABASE_POOL_SIZE must be a whole number from 2 to 500, not ${env.DATABASE_POOL_SIZE}`);
  }
  const databaseDeadlines = {
    statementMs: millisSetting(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 2_000, 100, 600_000),
    connectMs: millisSetting(env, 'DATABASE_CONNECT_TIMEOUT_MS', 2_000, 100, 600_000),
    transactionMs: millisSetting(env, 'DATABASE_TRANSACTION_TIMEOUT_MS', 4_000, 100, 600_000),
  };
  const databaseMaxQueued = countSetting(env, 'DATABASE_MAX_QUEUED', 1_024, 1, 1_000_000);
  const shutdownGraceMs = millisSetting(env, 'SHUTDOWN_GRACE_MS', 30_000, 1_000, 600_000);
  const requestDeadlineMs = millisSetting(env, 'REQUEST_DEADLINE_MS', 6_000, 0, 600_000);
  const databaseUrl = env.DATABASE_URL || null;
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// or postgresql:// URL');
  }
  const secretsKey = env.SECRETS_KEY || null;
  if (secretsKey !== null) {
    try {
      parseKeyRing(secretsKey);
    } catch (err) {
      throw new ConfigError((err as Error).message);
    }
  }
  if (databaseUrl !== null && secretsKey === null) {
    throw new ConfigError('SECRETS_KEY is required with DATABASE_URL: every instance must seal secrets with the same key');
  }
  const logLevel = env.LOG_LEVEL ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, not ${logLevel}`);
  const metricsToken = env.METRICS_TOKEN || null;
  if (metricsToken !== null && metricsToken.length < MIN_METRICS_TOKEN_LENGTH) {
    throw new ConfigError(`METRICS_TOKEN must be at least ${MIN_METRICS_TOKEN_LENGTH} characters`);
  }
  const metricsPort = env.METRICS_PORT ? portSetting(env, 'METRICS_PORT', 0) : null;
  const nested = env.CHECK_NESTED_TRANSACTIONS;
  if (nested !== undefined && nested !== 'true' && nested !== 'false') throw new ConfigError(`CHECK_NESTED_TRANSACTIONS must be true or false, not ${nested}`);
  const worker = env.DELIVERY_WORKER ?? 'on';
  if (worker !== 'on' && worker !== 'off') throw new ConfigError(`DELIVERY_WORKER must be on or off, not ${worker}`);
  // With the embedded store nobody else could deliver what this instance queues.
  if (worker === 'off' && databaseUrl === null) throw new ConfigError('DELIVERY_WORKER=off needs DATABASE_URL: another instance of that database must deliver the webhooks');
  const thread = env.DELIVERY_THREAD ?? 'on';
  if (thread !== 'on' && thread !== 'off') throw new ConfigError(`DELIVERY_THREAD must be on or off, not ${thread}`);
  const endpointConcurrency = endpointConcurrencySettings(env);
  let retention: RetentionSettings;
  try {
    retention = retentionSettings(env);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  let portal: PortalSettings;
  try {
    portal = portalSettings(env);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  return {
    portal,
    retention,
    deliveryWorker: worker === 'on',
    deliveryThread: thread === 'on',
    endpointConcurrency,
    checkNestedTransactions: nested === undefined ? nodeEnv !== 'production' : nested === 'true',
    rateLimitPerSecond,
    metrics: { token: metricsToken, port: metricsPort, host: env.METRICS_HOST ?? '127.0.0.1' },
    databasePoolSize,
    databaseDeadlines,
    databaseMaxQueued,
    shutdownGraceMs,
    requestDeadlineMs,
    authCacheTtlMs,
    listCacheBytes: listCacheMb * 1024 * 1024,
    port,
    host: env.HOST ?? '0.0.0.0',
    dataDir: path.resolve(env.DATA_DIR ?? './data'),
    docsDir: env.DOCS_DIR ? path.resolve(env.DOCS_DIR) : DEFAULT_DOCS_DIR,
    databaseUrl,
    logLevel,
    nodeEnv,
    allowInsecureUrls,
    retryScale,
    disableAfterMs: disableAfter * 1000,
    secretsKey,
    validateResponses: env.VALIDATE_RESPONSES === 'true' || (env.VALIDATE_RESPONSES === undefined && nodeEnv === 'development'),
  };
}

/** The adaptive per-destination limit: its start, its max (unset: 32, or the start if larger), its healthy latency. */
function endpointConcurrencySettings(env: NodeJS.ProcessEnv): EndpointConcurrency {
  const initial = countSetting(env, 'WEBHOOK_ENDPOINT_CONCURRENCY', DEFAULT_PER_ENDPOINT_LIMIT, 1, MAX_ENDPOINT_CONCURRENCY);
  const max = countSetting(env, 'WEBHOOK_ENDPOINT_MAX_CONCURRENCY', Math.max(DEFAULT_MAX_PER_ENDPOINT_LIMIT, initial), 1, MAX_ENDPOINT_CONCURRENCY);
  if (max < initial) throw new ConfigError(`WEBHOOK_ENDPOINT_MAX_CONCURRENCY (${max}) must be at least WEBHOOK_ENDPOINT_CONCURRENCY (${initial})`);
  // A healthy latency beyond the attempt deadline could never be exceeded by an answer.
  const healthyMs = millisSetting(env, 'WEBHOOK_ENDPOINT_HEALTHY_MS', DEFAULT_HEALTHY_LATENCY_MS, 1, ATTEMPT_TIMEOUT_MS);
  return { initial, max, healthyMs };
}

function portSetting(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  const port = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!/^\d*$/.test(raw ?? '') || !Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`${name} must be a port number, not ${raw}`);
  return port;
}

/** A duration setting (a `…_MS` variable): milliseconds, a whole number from min to max. */
function millisSetting(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  return wholeNumberSetting(env, name, fallback, min, max);
}

/** A count setting (requests queued, deliveries at once to an endpoint): a whole number from min to max. */
function countSetting(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  return wholeNumberSetting(env, name, fallback, min, max);
}

/** The variable `name` as a whole number from min to max, or fallback when it is unset or empty; a ConfigError names it otherwise. */
function wholeNumberSetting(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < min || n > max) throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, not ${raw}`);
  return n;
}
