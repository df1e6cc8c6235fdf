// Test helpers of the conformance suite's own tests: run a target through the real command line
// (runCli, with a JSON report) against a server started by the test, and the command-line
// arguments for a tenant of the bundled server.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createApiKey, createServiceAccount } from '../../server/domain/admin.ts';
import { PERMISSIONS } from '../../generated/vocabulary.ts';
import type { TestServer, TestTenant } from '../../server/testing/harness.ts';
import type { CheckResult, CheckStatus } from '../../conformance/core/check.ts';
import { runCli } from '../../conformance/core/cli.ts';
import type { JsonReport } from '../../conformance/core/json.ts';
import type { Target } from '../../conformance/core/target.ts';
import { TargetRegistry } from '../../conformance/core/target.ts';
import { createTargetRegistry } from '../../conformance/targets.ts';

export interface TargetRun {
  exitCode: number;
  report: JsonReport;
  /** Everything the run printed. */
  output: string;
}

/**
 * `target` running only the checks named in `ids` (in its order), prepared as it prepares every
 * run: for a run whose only question is whether those checks fail.
 */
export function onlyChecks(target: Target, ids: readonly string[]): Target {
  const wanted = new Set(ids);
  return {
    ...target,
    async prepare(values, ctx) {
      const prepared = await target.prepare(values, ctx);
      const checks = prepared.checks.filter((c) => wanted.has(c.id));
      const missing = ids.filter((id) => !checks.some((c) => c.id === id));
      if (missing.length > 0) throw new Error(`the ${target.name} target has no check ${missing.join(', ')}`);
      return { ...prepared, checks };
    },
  };
}

/** `payments-conformance <args>` in-process (every target, or those of `registry`); the JSON report is parsed back. */
export async function runTarget(args: string[], registry: TargetRegistry = createTargetRegistry()): Promise<TargetRun> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'conformance-run-'));
  const file = path.join(dir, 'report.json');
  let output = '';
  const sink = { write: (s: string) => (output += s) };
  try {
    const exitCode = await runCli([...args, '--report', `json=${file}`], registry, { stdout: sink, stderr: sink });
    const report = JSON.parse(await readFile(file, 'utf8')) as JsonReport;
    return { exitCode, report, output };
  } catch (err) {
    throw new Error(`the run did not complete: ${err instanceof Error ? err.message : String(err)}\n${output}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function idsWith(report: JsonReport, status: CheckStatus): string[] {
  return report.checks.filter((c: CheckResult) => c.status === status).map((c) => c.id);
}

/** `passed 340, failed 0, skipped 1, not_implemented 0 (total 341)` */
export function counts(report: JsonReport): string {
  const t = report.totals;
  return `passed ${t.passed}, failed ${t.failed}, skipped ${t.skipped}, not_implemented ${t.not_implemented} (total ${t.total})`;
}

/** A loopback HTTP server that accepts anything with 200: a webhook destination for the api target. */
export async function startSink(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('accepted'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const REFUND_EMAIL = 'refunds@merchant.example';

/** Arguments of the api target for tenant `a` of the bundled server (`b` for the isolation checks). */
export async function apiArgs(server: TestServer, a: TestTenant, b: TestTenant, webhookUrl: string, seed = 20261122): Promise<string[]> {
  await createServiceAccount(server.services, { tenantId: a.tenantId, email: REFUND_EMAIL });
  const limited = await createApiKey(server.services, { tenantId: a.tenantId, environment: 'test', permissions: [], label: 'conformance: no permission' });
  const live = await createApiKey(server.services, { tenantId: a.tenantId, environment: 'live', permissions: [...PERMISSIONS], label: 'conformance: live key' });
  return [
    'api',
    '--base-url', server.url,
    '--api-key', a.apiKey,
    '--api-hash', a.apiHash,
    '--tenant-id', a.tenantId,
    '--member-token', a.memberToken,
    '--other-api-key', b.apiKey,
    '--other-api-hash', b.apiHash,
    '--other-tenant-id', b.tenantId,
    '--limited-api-key', limited.apiKey,
    '--limited-api-hash', limited.apiHash,
    '--live-api-key', live.apiKey,
    '--live-api-hash', live.apiHash,
    '--refund-email', REFUND_EMAIL,
    '--webhook-url', webhookUrl,
    '--seed', String(seed),
    '--quiet',
  ];
}

/** The sender target's quiet periods for a server on the scaled retry schedule (the default is 5 s). */
export const SHORT_QUIET = ['--quiet-ms', '1000'];

/** The credentials the sender target takes: a tenant of the bundled server, or of the stateful mock's tenants file. */
export type SenderTenant = Pick<TestTenant, 'apiKey' | 'apiHash' | 'tenantId' | 'memberToken' | 'callbackSecret'>;

/** Arguments of the sender target for tenant `a` of the bundled server (or of the stateful mock). */
export function senderArgs(server: Pick<TestServer, 'url'>, a: SenderTenant, extra: string[] = [], seed = 20261122): string[] {
  return [
    'sender',
    '--base-url', server.url,
    '--api-key', a.apiKey,
    '--api-hash', a.apiHash,
    '--tenant-id', a.tenantId,
    '--member-token', a.memberToken,
    '--callback-secret', a.callbackSecret,
    '--listen', '127.0.0.1:0',
    '--attempts-window-ms', '30000',
    '--seed', String(seed),
    '--quiet',
    ...extra,
  ];
}

/** The tenant's sandbox wallet balance, as answered. */
export async function walletBalance(t: TestTenant): Promise<string> {
  const { data } = await t.sandbox.GET('/sandbox/wallet');
  if (!data) throw new Error('the wallet could not be read');
  return data.balance;
}

/**
 * Leaves `amount` in the tenant's wallet (a new tenant holds 1000000) with one payout of the
 * rest: the repeated-run tests start short of what three runs would spend unreturned.
 */
export async function drainWalletTo(t: TestTenant, amount: number): Promise<void> {
  const rest = Number(await walletBalance(t)) - amount;
  const { response } = await t.transactions.POST('/transactions/payout', { body: { thirdPartyId: `drain-${Date.now().toString(36)}`, userId: 'user_drain', amount: rest } });
  const left = await walletBalance(t);
  if (response.status !== 201 || left !== String(amount)) throw new Error(`the wallet was not drained to ${amount} (payout answered ${response.status}, ${left} left)`);
}
