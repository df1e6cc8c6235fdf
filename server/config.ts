// Settings come from the environment; every one is listed in the README.
import path from 'node:path';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | null;
  logLevel: string;
  nodeEnv: string;
  /** Development setting: http and loopback webhook URLs on any port. Refused in production. */
  allowInsecureUrls: boolean;
  /** Factor applied to the retry schedule (1 = the real schedule). */
  retryScale: number;
  /** Base64url of 32 bytes that seal signing secrets; generated into DATA_DIR when unset (SQLite only). */
  secretsKey: string | null;
  /** Validate every response against the spec (tests and development). */
  validateResponses: boolean;
  /** Requests per second per credential (0 = no limit), per instance. */
  rateLimitPerSecond: number;
  /** PostgreSQL connections per instance (each open transaction or read holds one while it runs). */
  databasePoolSize: number;
  /** How long verified credentials are trusted without the store (0 = ask the store every time). */
  authCacheTtlMs: number;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = Number(env.PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`PORT must be a port number, not ${env.PORT}`);
  const retryScale = Number(env.WEBHOOK_RETRY_SCALE ?? 1);
  if (!Number.isFinite(retryScale) || retryScale <= 0) throw new ConfigError(`WEBHOOK_RETRY_SCALE must be a positive number, not ${env.WEBHOOK_RETRY_SCALE}`);
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
  const databasePoolSize = Number(env.DATABASE_POOL_SIZE ?? 20);
  if (!Number.isInteger(databasePoolSize) || databasePoolSize < 2 || databasePoolSize > 500) {
    throw new ConfigError(`DATABASE_POOL_SIZE must be a whole number from 2 to 500, not ${env.DATABASE_POOL_SIZE}`);
  }
  return {
    rateLimitPerSecond,
    databasePoolSize,
    authCacheTtlMs,
    port,
    host: env.HOST ?? '0.0.0.0',
    dataDir: path.resolve(env.DATA_DIR ?? './data'),
    databaseUrl: env.DATABASE_URL ?? null,
    logLevel: env.LOG_LEVEL ?? 'info',
    nodeEnv,
    allowInsecureUrls,
    retryScale,
    secretsKey: env.SECRETS_KEY ?? null,
    validateResponses: env.VALIDATE_RESPONSES === 'true' || (env.VALIDATE_RESPONSES === undefined && nodeEnv === 'development'),
  };
}
