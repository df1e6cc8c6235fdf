// `payments-conformance receiver --scheme standard-webhooks` against receivers built on the
// official standardwebhooks package: the correct one passes every check (its secret given with
// or without whsec_), and each mutant fails, among others, the check meant for its broken rule.
import { afterEach, describe, expect, it } from 'vitest';
import { runTarget } from './testing/run.ts';
import { STANDARD_MUTANTS, STANDARD_ROUND_FIVE, startStandardReceiver, type StandardDefect } from './mutants/receivers/standard.ts';
import type { RunningReceiver } from './mutants/receivers/serve.ts';

const SECRET = `whsec_${Buffer.from('Conformance_Standard_Receiver_33b').toString('base64')}`;
const PREVIOUS = `whsec_${Buffer.from('Conformance_Standard_Previous_33bb').toString('base64')}`;
const running: RunningReceiver[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.close()));
});

/** The receiver knows the current and the previous secret; the suite is given both. */
async function check(receiverSecret: string, suiteSecret: string, defect: StandardDefect | null = null) {
  const receiver = await startStandardReceiver([receiverSecret, PREVIOUS], defect);
  running.push(receiver);
  return runTarget(['receiver', '--scheme', 'standard-webhooks', '--url', receiver.url, '--secret', suiteSecret, '--previous-secret', PREVIOUS, '--seed', '40']);
}

const failed = (run: Awaited<ReturnType<typeof check>>): string[] => run.report.checks.filter((c) => c.status === 'failed').map((c) => c.id);

describe('receiver --scheme standard-webhooks', () => {
  it('a receiver on the official library passes every check, the secret given with or without whsec_', async () => {
    for (const [receiverSecret, suiteSecret] of [[SECRET, SECRET], [SECRET.slice(6), SECRET], [SECRET, SECRET.slice(6)]] as const) {
      const run = await check(receiverSecret, suiteSecret);
      expect(failed(run), run.output).toEqual([]);
      expect(run.exitCode).toBe(0);
      expect(run.report.checks.length).toBeGreaterThanOrEqual(20);
      expect(run.report.checks.every((c) => c.status === 'passed')).toBe(true);
    }
  });

  it.each(Object.entries(STANDARD_MUTANTS) as Array<[StandardDefect, string]>)('the mutant %s fails %s', async (defect, meant) => {
    const run = await check(SECRET, SECRET, defect);
    expect(run.exitCode).not.toBe(0);
    expect(failed(run)).toContain(meant);
  });

  it.each(Object.entries(STANDARD_ROUND_FIVE) as Array<[StandardDefect, string]>)('the mutant %s fails %s and no other check', async (defect, meant) => {
    const run = await check(SECRET, SECRET, defect);
    expect(run.exitCode).toBe(1);
    expect(failed(run), run.output).toEqual([meant]);
  });

  it('without --previous-secret, reports the rotation check as not reached, with the reason', async () => {
    const receiver = await startStandardReceiver([SECRET]);
    running.push(receiver);
    const run = await runTarget(['receiver', '--scheme', 'standard-webhooks', '--url', receiver.url, '--secret', SECRET, '--seed', '40']);
    expect(run.exitCode).toBe(0);
    const rotation = run.report.checks.find((c) => c.id === 'receiver.standard.rotation.previous-secret');
    expect(rotation?.status).toBe('skipped');
    expect(rotation?.reason).toMatch(/no --previous-secret/);
  });

  it('refuses a secret that is not base64 and an unknown scheme', async () => {
    const receiver = await startStandardReceiver([SECRET]);
    running.push(receiver);
    const bad = await runTarget(['receiver', '--scheme', 'standard-webhooks', '--url', receiver.url, '--secret', 'whsec_not*base64*at*all*but*long*enough*to*pass']).catch((e: Error) => e);
    expect(String(bad instanceof Error ? bad.message : bad.output)).toMatch(/not a Standard Webhooks secret/);
    const callback = await runTarget(['receiver', '--scheme', 'standard-webhooks', '--url', receiver.url, '--secret', SECRET, '--callback-secret', SECRET]).catch((e: Error) => e);
    expect(String(callback instanceof Error ? callback.message : callback.output)).toMatch(/--callback-secret do not apply with --scheme standard-webhooks/);
  });
});
