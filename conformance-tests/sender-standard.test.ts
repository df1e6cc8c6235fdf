// The sender target with `--scheme standard-webhooks` and `--scheme both` against the bundled
// server: the suite sets the endpoint's signatureScheme, every delivery carries the scheme's
// header sets (sender.scheme.required-headers), and each set verifies on its own with the
// suite's own reading of the standard (conformance/core/standard-signature.ts), retries and the
// rotation included. These are the controls of the round-five sender mutants (mutants/servers/
// round-five-sender.ts). Short quiet periods; the defaults and the slow (10 s) check run in
// sender.test.ts only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../server/testing/harness.ts';
import { counts, idsWith, runTarget, senderArgs, SHORT_QUIET, type TargetRun } from './testing/run.ts';

const SCHEMES = ['standard-webhooks', 'both'] as const;
const runs = new Map<string, { server: TestServer; run: TargetRun; tenantId: string }>();

beforeAll(async () => {
  await Promise.all(
    SCHEMES.map(async (scheme) => {
      const server = await startTestServer({ env: { WEBHOOK_RETRY_SCALE: '0.0001' } });
      const a = await server.newTenant(`Sender Tenant ${scheme}`);
      const run = await runTarget(senderArgs(server, a, ['--scheme', scheme, '--skip-slow', ...SHORT_QUIET]));
      console.log(`sender target, ${scheme} scheme: ${counts(run.report)}`);
      runs.set(scheme, { server, run, tenantId: a.tenantId });
    }),
  );
}, 240_000);

afterAll(async () => {
  await Promise.all([...runs.values()].map((r) => r.server.close()));
});

describe.each(SCHEMES)('payments-conformance sender --scheme %s against the bundled server', (scheme) => {
  it('passes every check it runs, each header set of the scheme required and verified', () => {
    const { run } = runs.get(scheme)!;
    expect(idsWith(run.report, 'failed'), run.output).toEqual([]);
    expect(run.exitCode).toBe(0);
    expect(idsWith(run.report, 'passed')).toEqual(expect.arrayContaining(['sender.scheme.required-headers', 'sender.rotation.new-secret', 'sender.retry.fresh-timestamp']));
  });

  it('set the endpoints it configured to the scheme (its own and the ones the fan-out checks add), all but the one pending.scheme switches', async () => {
    const { server, tenantId } = runs.get(scheme)!;
    const environmentId = await server.environmentId(tenantId);
    const endpoints = await server.services.store.read((tx) => tx.endpoints.list(environmentId));
    expect(endpoints.length).toBeGreaterThan(1);
    const switchedOnes = endpoints.filter((e) => e.url.endsWith('/pending-scheme'));
    expect(switchedOnes.map((e) => e.signatureScheme)).toEqual([scheme === 'both' ? 'service-signature' : 'both']);
    expect([...new Set(endpoints.filter((e) => !switchedOnes.includes(e)).map((e) => e.signatureScheme))]).toEqual([scheme]);
  });
});
