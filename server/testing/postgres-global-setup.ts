// vitest globalSetup (once per `vitest run`, in the main process): the PostgreSQL server on
// which tests create their databases. POSTGRES_TEST_URL (default the local trust-auth server)
// when it answers; otherwise an embedded PostgreSQL started for this run and stopped, its data
// folder removed, when the run ends — also when the run is interrupted or killed.
// The URL reaches every worker through `provide` (see postgres-setup.ts).
import type { TestProject } from 'vitest/node';
import { unexpectedNode, unsupportedNode } from '../runtime.ts';
import { postgresAnswers, startEmbeddedPostgres } from './embedded-postgres.ts';

export const DEFAULT_POSTGRES_TEST_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresTestUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const wrongNode = unsupportedNode() ?? unexpectedNode();
  if (wrongNode) throw new Error(wrongNode);
  process.stdout.write(`Node ${process.versions.node} (${process.execPath})\n`);
  const configured = process.env.POSTGRES_TEST_URL ?? DEFAULT_POSTGRES_TEST_URL;
  if (await postgresAnswers(configured)) {
    project.provide('postgresTestUrl', configured);
    return undefined;
  }
  const started = Date.now();
  const embedded = await startEmbeddedPostgres();
  process.stdout.write(`PostgreSQL: nothing answers at ${new URL(configured).host}; embedded PostgreSQL started for this run in ${Date.now() - started} ms\n`);
  project.provide('postgresTestUrl', embedded.url);
  return () => embedded.stop();
}
