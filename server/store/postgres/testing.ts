// Throwaway PostgreSQL databases for tests and benchmarks: each gets a random name on the
// server of POSTGRES_TEST_URL (default: the local trust-auth server), and drop() removes it
// even while connections are still open.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

const ADMIN_URL = process.env.POSTGRES_TEST_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  /** Connection string of the new, empty database. */
  url: string;
  /** Drops the database (WITH (FORCE): open connections are terminated). Idempotent. */
  drop(): Promise<void>;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL, application_name: 'payments-tests' });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** `copyOf`: a copy of that test database (no session may be connected to it meanwhile), else empty. */
export async function createTestDatabase(copyOf?: TestDatabase): Promise<TestDatabase> {
  // Lowercase hex: a valid identifier without quoting, and no collision between parallel runs.
  const name = `payments_test_${randomBytes(8).toString('hex')}`;
  const template = copyOf === undefined ? '' : ` TEMPLATE ${new URL(copyOf.url).pathname.slice(1)}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}${template}`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  let dropped: Promise<void> | null = null;
  return {
    url: url.toString(),
    drop() {
      dropped ??= admin(async (c) => {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      });
      return dropped;
    },
  };
}
