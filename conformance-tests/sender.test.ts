// The sender target against the bundled server, the 10 s slow-answer check included (it runs
// only here): every check passes, and the run's counts are printed for the record.
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../server/testing/harness.ts';
import type { TestServer } from '../server/testing/harness.ts';
import { counts, drainWalletTo, idsWith, runTarget, senderArgs, SHORT_QUIET, walletBalance } from './testing/run.ts';
import type { TargetRun } from './testing/run.ts';

let server: TestServer;
let run: TargetRun;
let tenant: Awaited<ReturnType<TestServer['newTenant']>>;
let dir: string;

/** What the wallet holds before the first run: two runs' payouts (2 × 150.25 each), not three. */
const START_BALANCE = 750;

beforeAll(async () => {
  // A scaled retry schedule (0.0001: ten attempts in about 6 s); the 10 s attempt timeout is not scaled.
  server = await startTestServer({ env: { WEBHOOK_RETRY_SCALE: '0.0001' } });
  tenant = await server.newTenant('Sender Tenant');
  await drainWalletTo(tenant, START_BALANCE);
  dir = await mkdtemp(join(tmpdir(), 'conformance-sender-'));
  // The one sender run with the suite's default quiet periods (5 s), as a partner runs it. It
  // rotates the callback secret: it saves the new one for the next run (README, "Running the sender target twice").
  run = await runTarget(senderArgs(server, tenant, ['--save-callback-secret', join(dir, 'callback-secret')]));
  console.log(`sender target against the bundled server: ${counts(run.report)}, seed ${run.report.seed}`);
}, 180_000);

afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('running the sender target three times in a row on one tenant (issue 67)', () => {
  it('passes again with the callback secret the last run saved (--callback-secret file:PATH), funding back what each run spent', async () => {
    // Before: each run kept its payouts' 300.5, so the third found the wallet short and failed
    // the payout-completed checks with 422 insufficient-funds.
    const file = join(dir, 'callback-secret');
    const saved = (await readFile(file, 'utf8')).trim();
    expect(saved).toMatch(/^whsec_/);
    expect(saved).not.toBe(tenant.callbackSecret);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const runs = [{ failed: idsWith(run.report, 'failed'), exitCode: run.exitCode, balanceAfter: await walletBalance(tenant) }];
    const secrets = [saved];
    const passed: string[][] = [];
    for (let n = 0; n < 2; n++) {
      // The later runs against the reference: short quiet periods (the first keeps the defaults).
      const args = senderArgs(server, tenant, ['--skip-slow', ...SHORT_QUIET, '--save-callback-secret', file]).map((v, i, all) => (all[i - 1] === '--callback-secret' ? `file:${file}` : v));
      const again = await runTarget(args);
      runs.push({ failed: idsWith(again.report, 'failed'), exitCode: again.exitCode, balanceAfter: await walletBalance(tenant) });
      passed.push(idsWith(again.report, 'passed'));
      secrets.push((await readFile(file, 'utf8')).trim());
    }
    const clean = { failed: [], exitCode: 0, balanceAfter: String(START_BALANCE) };
    expect(runs).toEqual([clean, clean, clean]);
    for (const ids of passed) expect(ids).toEqual(expect.arrayContaining(['sender.payout.completed.signature', 'sender.rotation.callback-secret']));
    expect(new Set(secrets).size).toBe(3);
  }, 240_000);
});

describe('payments-conformance sender against the bundled server', () => {
  it('passes every check, the 10 s timeout and the ten-attempt limit included', () => {
    expect(idsWith(run.report, 'failed'), run.output).toEqual([]);
    expect(idsWith(run.report, 'skipped'), run.output).toEqual([]);
    expect(idsWith(run.report, 'passed')).toEqual(
      expect.arrayContaining(['sender.timeout.10s', 'sender.timeout.fresh-timestamp', 'sender.attempts.at-most-ten', 'sender.redirect.not-followed', 'sender.rotation.new-secret', 'sender.rotation.callback-secret', 'sender.fan-out.by-type', 'sender.fan-out.own-secret', 'sender.fan-out.disabled-beside', 'sender.fan-out.version-per-endpoint', 'sender.fan-out.test-own-endpoint',
        'sender.pending.disabled', 'sender.pending.rotated', 'sender.pending.event-types', 'sender.pending.scheme', 'sender.payout.completed.every-outcome', 'sender.recover.paced', 'sender.recover.per-endpoint']),
    );
    expect(run.exitCode).toBe(0);
  });

  it('checks headers, signature and payload of every message of the AsyncAPI document', () => {
    const ids = run.report.checks.map((c) => c.id);
    for (const message of ['order.created', 'order.paid', 'order.payment_review_required', 'webhook.test', 'payout.completed']) {
      expect(ids).toEqual(expect.arrayContaining([`sender.${message}.headers`, `sender.${message}.signature`, `sender.${message}.payload`]));
    }
  });

  it('names rules 6 and 8 in the coverage by the checks meant for them', () => {
    const coveredBy = (id: string): string[] => run.report.coverage.find((c) => c.id === id)?.checks ?? [];
    expect(coveredBy('interface#signatures-6')).toEqual(['sender.retry.fresh-timestamp', 'sender.timeout.fresh-timestamp', 'sender.retry.manual-fresh-timestamp']);
    expect(coveredBy('interface#signatures-8')).toEqual(['sender.rotation.new-secret', 'sender.rotation.callback-secret']);
    expect(coveredBy('rotateCallbackSecret#pending-callbacks-new-secret')).toEqual(['sender.rotation.callback-secret']);
    expect(coveredBy('recoverDeliveries#window-once-per-request')).toEqual(['sender.recover.window', 'sender.recover.same-event', 'sender.recover.after-change']);
    expect(coveredBy('management#signature-scheme-headers')).toEqual(['sender.scheme.required-headers']);
    // Issue 67's last sender rules, each by its own check.
    expect(coveredBy('updateWebhookEndpoint#disabling-disables-pending')).toEqual(['sender.pending.disabled']);
    expect(coveredBy('rotateWebhookSecret#rotation-disables-pending')).toEqual(['sender.pending.rotated']);
    expect(coveredBy('updateWebhookEndpoint#event-types-disables-pending')).toEqual(['sender.pending.event-types']);
    expect(coveredBy('updateWebhookEndpoint#scheme-headers')).toEqual(['sender.pending.scheme']);
    expect(coveredBy('settleSandboxPayout#callback-every-outcome')).toEqual(['sender.payout.completed.every-outcome']);
    expect(coveredBy('recoverDeliveries#paced')).toEqual(['sender.recover.paced']);
    expect(coveredBy('recoverDeliveries#per-endpoint')).toEqual(['sender.recover.per-endpoint']);
    expect(coveredBy('sendTestWebhook#own-endpoint')).toEqual(['sender.fan-out.test-own-endpoint']);
    expect(coveredBy('webhooks#retry-after')).toEqual(['sender.retry-after.delivery']);
    expect(coveredBy('management#operational-explicit')).toEqual(['sender.health.operational-explicit']);
    // The rules left without a check, each with its written reason (sender/rules.ts).
    expect(run.report.coverage.filter((c) => c.status === 'no_check').map((c) => c.id).sort()).toEqual(['management#disable-after-failing', 'management#max-per-second']);
  });

  it('cut the held answer at about 10 s', () => {
    const note = run.report.checks.find((c) => c.id === 'sender.timeout.10s')?.notes[0] ?? '';
    const seconds = Number(/cut after ([0-9.]+) s/.exec(note)?.[1]);
    expect(seconds).toBeGreaterThanOrEqual(9);
    expect(seconds).toBeLessThanOrEqual(11);
  });
});
