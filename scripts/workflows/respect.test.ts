// The Arazzo workflows of spec/workflows/ under `redocly respect`, against the bundled server on
// loopback: every workflow passes, and a server whose answer breaks a flow fails it, by the
// success criterion written for that rule (respect's JSON report names the failed checks).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/app/build-app.ts';
import { startTestServer, type TestServer } from '../../server/testing/harness.ts';
import { wrapApp } from '../../conformance-tests/mutants/servers/wrap.ts';
import { build as buildIdempotencyRawBytes } from '../../conformance-tests/mutants/servers/idempotency-raw-bytes.ts';
import { runWorkflows } from './respect.ts';

interface Check {
  name: string;
  passed: boolean;
  condition?: string;
}
interface Report {
  files: Record<string, { executedWorkflows: Array<{ workflowId: string; executedSteps: Array<{ stepId: string; checks?: Check[] }> }> }>;
}

let work: string;
beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'workflows-test-'));
});
afterAll(() => rm(work, { recursive: true, force: true }));

/** Runs respect on the named workflows against a server with a fresh tenant; the failed checks by step. */
async function respect(server: TestServer, workflows?: string[]): Promise<{ code: number; failed: string[]; ran: string[]; output: string }> {
  const tenant = await server.newTenant();
  const jsonOutput = path.join(work, `report-${Math.random().toString(36).slice(2)}.json`);
  const result = await runWorkflows({ baseUrl: server.url, apiKey: tenant.apiKey, apiHash: tenant.apiHash, jsonOutput, output: () => undefined, ...(workflows ? { workflows } : {}) });
  const report = JSON.parse(await readFile(jsonOutput, 'utf8')) as Report;
  const executed = Object.values(report.files).flatMap((f) => f.executedWorkflows);
  const failed = executed.flatMap((w) => w.executedSteps.flatMap((s) => (s.checks ?? []).filter((c) => !c.passed).map((c) => `${w.workflowId}/${s.stepId}: ${c.name}${c.condition ? ` ${c.condition}` : ''}`)));
  return { code: result.code, failed: [...new Set(failed)], ran: executed.map((w) => w.workflowId).sort(), output: result.output };
}

describe('spec/workflows under redocly respect', () => {
  // The control of the two below: the same workflows pass against the server without the
  // defect. (CI runs all seven against `npm start` and the stateful mock: .ci/run, "workflows".)
  it('the workflows the mutants break pass against the bundled server', async () => {
    const server = await startTestServer();
    try {
      const run = await respect(server, ['payoutLookup', 'orderIdempotentReplay']);
      expect(run.failed, run.output).toEqual([]);
      expect(run.code, run.output).toBe(0);
      expect(run.ran).toEqual(['orderIdempotentReplay', 'payoutLookup']);
    } finally {
      await server.close();
    }
  }, 120_000);

  it('fails when a repeated thirdPartyId answers 409 naming another transaction (a mutated answer)', async () => {
    // The defect: the 409 duplicate-third-party-id still has the documented shape, but its
    // existingTransactionId is not the stored payout's, so a client's retry would lose it.
    const server = await startTestServer({
      build: (services, config) =>
        wrapApp(buildApp(services, config), () => async (c, next) => {
          await next();
          if (c.req.path !== '/transactions/payout' || c.res.status !== 409) return;
          const problem = (await c.res.json()) as Record<string, unknown>;
          c.res = Response.json({ ...problem, existingTransactionId: 'txn_01JD4W9Q6S2V5K8X3M7N0PBRT4' }, { status: 409, headers: { 'content-type': 'application/problem+json' } });
        }),
    });
    try {
      const run = await respect(server, ['payoutLookup']);
      expect(run.code).not.toBe(0);
      expect(run.failed).toEqual(['payoutLookup/findByThirdPartyId: success criteria check $response.body#/existingTransactionId == $steps.createPayout.outputs.transactionId']);
    } finally {
      await server.close();
    }
  }, 120_000);

  it("fails when a repeated Idempotency-Key's body is compared byte for byte (the conformance suite's mutant)", async () => {
    const server = await startTestServer({ build: buildIdempotencyRawBytes });
    try {
      const run = await respect(server, ['orderIdempotentReplay']);
      expect(run.code).not.toBe(0);
      expect(run.failed).toContain('orderIdempotentReplay/replaySameBody: success criteria check $statusCode == 201');
      expect(run.failed.every((f) => f.startsWith('orderIdempotentReplay/replaySameBody: '))).toBe(true);
    } finally {
      await server.close();
    }
  }, 120_000);
});
