// vitest globalSetup (once per `vitest run`, in the main process): the PostgreSQL server on
// which tests create their databases. POSTGRES_TEST_URL (default the local trust-auth server)
// when it answers; otherwise an embedded PostgreSQL started for this run and stopped, its data
// folder removed, when the run ends — also when the run is interrupted or killed.
// The URL reaches every worker through `provide` (see postgres-setup.ts), with the name of a
// database migrated once for the run: the test servers' databases are copies of it (a
// CREATE DATABASE ... TEMPLATE, about a fifth of creating one and migrating it), dropped with
// the run. Tests that need an empty database still create one (createTestDatabase()).
import type { TestProject } from 'vitest/node';
import { unexpectedNode, unsupportedNode } from '../runtime.ts';
import { postgresAnswers, startEmbeddedPostgres } from './embedded-postgres.ts';

export const DEFAULT_POSTGRES_TEST_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresTestUrl: string;
    /** A migrated database no session stays connected to: what test servers' databases copy. */
    postgresMigratedUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const wrongNode = unsupportedNode() ?? unexpectedNode();
  if (wrongNode) throw new Error(wrongNode);
  process.stdout.write(`Node ${process.versions.node} (${process.execPath})\n`);
  const configured = process.env.POSTGRES_TEST_URL ?? DEFAULT_POSTGRES_TEST_URL;
  let url = configured;
  let stopEmbedded = async (): Promise<void> => undefined;
  if (!(await postgresAnswers(configured))) {
    const started = Date.now();
    const embedded = await startEmbeddedPostgres();
    process.stdout.write(`PostgreSQL: nothing answers at ${new URL(configured).host}; embedded PostgreSQL started for this run in ${Date.now() - started} ms\n`);
    url = embedded.url;
    stopEmbedded = () => embedded.stop();
  }
  project.provide('postgresTestUrl', url);
  const migrated = await migratedDatabase(url);
  project.provide('postgresMigratedUrl', migrated.url);
  return async () => {
    try {
      await migrated.drop();
    } finally {
      await stopEmbedded();
    }
  };
}

/** A new database on the server at `url`, migrated, with no session left connected to it. */
async function migratedDatabase(url: string): Promise<{ url: string; drop(): Promise<void> }> {
  // testing.ts reads the server's address when it loads.
  process.env.POSTGRES_TEST_URL = url;
  const { createTestDatabase } = await import('../store/postgres/testing.ts');
  const { openPostgresStore } = await import('../store/postgres/store.ts');
  const db = await createTestDatabase();
  try {
    const store = await openPostgresStore({ connectionString: db.url, poolSize: 1 });
    try {
      await store.migrate();
    } finally {
      await store.close();
    }
  } catch (err) {
    await db.drop();
    throw err;
  }
  return db;
}
