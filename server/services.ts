// Wiring: the store chosen by the settings, the secrets key, the destination policy.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { ConfigError, type Config } from './config.ts';
import { createAuthCaches } from './domain/auth.ts';
import { systemClock, type Clock } from './domain/clock.ts';
import type { Services } from './domain/context.ts';
import { createSecretBox, IMPLICIT_KEY_ID, parseKeyRing, type KeyRing } from './domain/secrets.ts';
import { assertSealingKeysHeld, MissingSealingKeyError } from './domain/secrets-rotation.ts';
import type { Store } from './domain/store.ts';
import { WriteFaults } from './domain/write-faults.ts';
import { openSqliteStore } from './store/sqlite/store.ts';
import { createDestinationPolicy, type Resolver } from './destination/policy.ts';

export interface ServiceOptions {
  clock?: Clock;
  /** DNS resolver for webhook destinations (tests inject one). */
  resolve?: Resolver;
  /** Called once the store is open, before pending migrations are applied (readiness). */
  onMigrating?: () => void;
}

/** The key ring (domain/secrets.ts parseKeyRing) of SECRETS_KEY, or of DATA_DIR/secrets.key (generated on first start, SQLite only). */
async function keyRing(config: Config): Promise<KeyRing> {
  // loadConfig checked SECRETS_KEY (a key ring, required with DATABASE_URL).
  if (config.secretsKey) return parseKeyRing(config.secretsKey);
  if (config.databaseUrl) throw new ConfigError('SECRETS_KEY is required with DATABASE_URL: every instance must seal secrets with the same key');
  await mkdir(config.dataDir, { recursive: true });
  const file = path.join(config.dataDir, 'secrets.key');
  if (existsSync(file)) {
    // The same form as SECRETS_KEY: a rotation adds `id:key,` before what the file holds.
    try {
      return parseKeyRing((await readFile(file, 'utf8')).trim(), file);
    } catch (err) {
      throw new ConfigError((err as Error).message);
    }
  }
  const key = randomBytes(32);
  await writeFile(file, `${key.toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  return [{ id: IMPLICIT_KEY_ID, key }];
}

export async function openStore(config: Config): Promise<{ store: Store; fresh: boolean }> {
  const guardNesting = config.checkNestedTransactions;
  if (config.databaseUrl) {
    // Loaded only when configured: a SQLite deployment never loads the PostgreSQL driver.
    const { openPostgresStore } = await import('./store/postgres/store.ts');
    const store = await openPostgresStore({
      connectionString: config.databaseUrl,
      poolSize: config.databasePoolSize,
      guardNesting,
      deadlines: config.databaseDeadlines,
      maxQueued: config.databaseMaxQueued,
    });
    return { store, fresh: false };
  }
  await mkdir(config.dataDir, { recursive: true });
  const file = path.join(config.dataDir, 'payments.db');
  const fresh = !existsSync(file);
  return { store: await openSqliteStore({ file, guardNesting }), fresh };
}

/**
 * Opens the store and applies pending migrations. Everything that can be checked without the
 * store (the secrets key) is checked first, then, once migrated, that the key ring holds every
 * key a stored value names; the store is closed again on any failure, so
 * a failed start leaves nothing open (a PostgreSQL LISTEN connection would keep the process alive).
 */
export async function openServices(config: Config, log: Logger, opts: ServiceOptions = {}): Promise<{ services: Services; fresh: boolean }> {
  const secrets = createSecretBox(await keyRing(config));
  const destinations = createDestinationPolicy({ allowInsecure: config.allowInsecureUrls, nodeEnv: config.nodeEnv, ...(opts.resolve ? { resolve: opts.resolve } : {}) });
  const { store, fresh } = await openStore(config);
  try {
    opts.onMigrating?.();
    await store.migrate();
    // A value sealed by a key this instance lacks could sign nothing: refuse, naming the key's id.
    await assertSealingKeysHeld(store, secrets);
  } catch (err) {
    await store.close().catch(() => undefined);
    throw err instanceof MissingSealingKeyError ? new ConfigError(err.message) : err;
  }
  const clock = opts.clock ?? systemClock;
  return { services: { store, clock, auth: createAuthCaches(clock, config.authCacheTtlMs), secrets, destinations, log, writeFaults: new WriteFaults() }, fresh };
}
