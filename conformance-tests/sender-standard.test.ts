// The sender target with `--scheme standard-webhooks` against the bundled server: the suite sets
// the endpoint's signatureScheme, and every delivery's Standard Webhooks headers verify with the
// suite's own reading of the standard (conformance/core/standard-signature.ts), retries and the
// rotation included. The slow (10 s) check runs in sender.test.ts only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../server/testing/harness.ts';
import { counts, idsWith, runTarget, senderArgs, SHORT_QUIET, type TargetRun } from './testing/run.ts';

let server: TestServer;
let run: TargetRun;
let tenantId: string;

beforeAll(async () => {
  server = await startTestServer({ env: { WEBHOOK_RETRY_SCALE: '0.0001' } });
  const a = await server.newTenant('Standard Sender Tenant');
  tenantId = a.tenantId;
  run = await runTarget(senderArgs(server, a, ['--scheme', 'standard-webhooks', '--skip-slow', ...SHORT_QUIET]));
  console.log(`sender target, standard-webhooks scheme: ${counts(run.report)}`);
}, 180_000);

afterAll(async () => {
  await server?.close();
});

describe('payments-conformance sender --scheme standard-webhooks against the bundled server', () => {
  it('passes every check it runs, signatures verified in the Standard Webhooks scheme', () => {
    expect(idsWith(run.report, 'failed'), run.output).toEqual([]);
    expect(run.exitCode).toBe(0);
    expect(idsWith(run.report, 'passed').length).toBeGreaterThan(10);
  });

  it('set the endpoint it configured to the standard-webhooks scheme', async () => {
    const environmentId = await server.environmentId(tenantId);
    const endpoints = await server.services.store.read((tx) => tx.endpoints.list(environmentId));
    expect(endpoints.map((e) => e.signatureScheme)).toEqual(['standard-webhooks']);
  });
});
