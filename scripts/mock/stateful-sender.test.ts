// Issue 50's goal: the delivery scenario (retries, a redirect, the ten-attempt limit, a manual
// retry, rotations, recovery, a disabled endpoint) passes against `npm run mock -- --stateful`
// as against the server. payments-conformance sender runs against the mock with the options of
// the reference's short run (conformance-tests/sender.test.ts: --skip-slow, short quiet
// periods, the retry schedule scaled by WEBHOOK_RETRY_SCALE=0.0001): no check fails, and every
// check the suite lists passes except the ones --skip-slow skips, as on the reference.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { counts, idsWith, runTarget, senderArgs, SHORT_QUIET, type TargetRun } from '../../conformance-tests/testing/run.ts';
import type { MockTenant, TenantsFile } from './tenants.ts';
import { spawnMock, type SpawnedMock } from './testing/spawn.ts';

/** The reference run's options besides the credentials (conformance-tests/sender.test.ts, the short run). */
const REFERENCE_OPTIONS = ['--skip-slow', ...SHORT_QUIET];
/** As the reference server runs for the sender target: ten attempts in about 6 s. */
const RETRY_SCALE = '0.0001';

let mock: SpawnedMock;
let dir: string;
let run: TargetRun;
let seconds: number;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'mock-sender-'));
  const tenantsFile = path.join(dir, 'tenants.json');
  mock = await spawnMock(['--stateful', '--tenants-file', tenantsFile, '--quiet'], { WEBHOOK_RETRY_SCALE: RETRY_SCALE });
  const t = (JSON.parse(await readFile(tenantsFile, 'utf8')) as TenantsFile).tenants[0] as MockTenant;
  const started = performance.now();
  run = await runTarget(senderArgs({ url: mock.url }, t, REFERENCE_OPTIONS));
  seconds = (performance.now() - started) / 1000;
  console.log(`sender target against npm run mock -- --stateful: ${counts(run.report)} in ${seconds.toFixed(1)} s`);
}, 180_000);

afterAll(async () => {
  await mock?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('passes payments-conformance sender with the reference run options: 0 failures, every listed check passed but the --skip-slow ones', () => {
  expect(idsWith(run.report, 'failed'), run.output).toEqual([]);
  expect(idsWith(run.report, 'not_implemented')).toEqual([]);
  // What the reference's short run skips: only the checks that need the 10 s held answer.
  const skipped = run.report.checks.filter((c) => c.status === 'skipped');
  expect(skipped.map((c) => [c.id, c.reason?.startsWith('--skip-slow:')])).toEqual(skipped.map((c) => [c.id, true]));
  const all = run.report.checks.map((c) => c.id);
  expect(idsWith(run.report, 'passed').sort()).toEqual(all.filter((id) => !skipped.some((c) => c.id === id)).sort());
  // The scenario issue 50 names, among them.
  expect(idsWith(run.report, 'passed')).toEqual(expect.arrayContaining(['sender.retry.after-failure', 'sender.attempts.at-most-ten', 'sender.retry.manual-same-event']));
  // A receiver's Retry-After holds on the mock too: it runs the server's delivery engine (issue 69).
  expect(idsWith(run.report, 'passed')).toEqual(expect.arrayContaining(['sender.retry-after.delivery', 'sender.retry-after.endpoint']));
  expect(run.exitCode).toBe(0);
});
