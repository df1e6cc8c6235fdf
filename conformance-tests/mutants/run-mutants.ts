// The suite catches broken implementations: the relevant target passes against the bundled
// server and fails against each deliberately broken variant of it (conformance/mutants/
// servers/), on the very checks that enforce the broken rule. (The api target against the mock,
// `npm run mock`, is scripts/mock.test.ts.) The mutants are spread over several test files
// (mutants-*.test.ts), each a share of them, so that they run side by side in the suite's
// workers instead of one long file at the end of the run.
import { describe, it } from 'vitest';
import { startTestServer } from '../../server/testing/harness.ts';
import type { TestServer, TestServerOptions } from '../../server/testing/harness.ts';
import { TargetRegistry } from '../../conformance/core/target.ts';
import { createApiTarget } from '../../conformance/api/target.ts';
import { apiArgs, counts, idsWith, onlyChecks, runTarget, senderArgs, SHORT_QUIET, startSink } from '../testing/run.ts';
import type { TargetRun } from '../testing/run.ts';
import { SERVER_MUTANTS } from './servers/index.ts';
import type { ServerMutant } from './servers/index.ts';

/** Ten attempts of the real schedule in about 6 s; the 10 s attempt timeout is not scaled. */
const ENV = { WEBHOOK_RETRY_SCALE: '0.0001' };
/**
 * The sender runs pass --skip-slow (the slow-answer check runs in conformance-tests/sender.test.ts
 * and for the mutants marked `slow`: the 10 s timeout) and short quiet periods: a server on the
 * scaled schedule sends within milliseconds, so 1 s sees what the default 5 s would
 * (sender.test.ts keeps one run with the defaults), and a sender run takes 30 s instead of 45.
 */
/**
 * Mutant runs side by side share two cores (and other suites): answers can take seconds. A
 * generous per-answer deadline and at most three runs at once per file keep a slow machine from
 * failing a check by chance, which the `failsOnly` assertions would take for a wrong catch.
 */
const LOADED_MACHINE = ['--timeout-ms', '60000'];
const PARALLEL_RUNS = 3;
const RUN_TIMEOUT_MS = 600_000;

let running = 0;
const waiting: Array<() => void> = [];
async function slot<T>(fn: () => Promise<T>): Promise<T> {
  if (running >= PARALLEL_RUNS) await new Promise<void>((resolve) => waiting.push(resolve));
  running += 1;
  try {
    return await fn();
  } finally {
    running -= 1;
    waiting.shift()?.();
  }
}

function runAgainst(target: 'api' | 'sender', build?: ServerMutant['build'], slow = false, args: string[] = [], only?: readonly string[]): Promise<TargetRun> {
  return slot(() => runOnce(target, build, slow, args, only));
}

/**
 * The checks an api mutant's run needs: all of them when it asserts `failsOnly` (no other check
 * fails), else only its `mustFail` checks, the one question its test asks (an api run is ~1.5 s
 * of CPU, the bulk of the file; the control runs every check against the bundled server).
 */
export function apiChecksOf(mutant: Pick<ServerMutant, 'target' | 'failsOnly' | 'mustFail'>): readonly string[] | undefined {
  return mutant.target === 'api' && mutant.failsOnly === undefined ? mutant.mustFail : undefined;
}

async function runOnce(target: 'api' | 'sender', build: ServerMutant['build'] | undefined, slow: boolean, args: string[], only: readonly string[] | undefined): Promise<TargetRun> {
  const opts: TestServerOptions = { env: ENV, ...(build ? { build } : {}) };
  const server: TestServer = await startTestServer(opts);
  const sink = await startSink();
  try {
    const a = await server.newTenant('Tenant A');
    if (target === 'sender') return await runTarget(senderArgs(server, a, [...(slow ? [] : ['--skip-slow']), ...SHORT_QUIET, ...LOADED_MACHINE, ...args]));
    const b = await server.newTenant('Tenant B');
    const registry = only === undefined ? undefined : new TargetRegistry([onlyChecks(createApiTarget(), only)]);
    return await runTarget([...(await apiArgs(server, a, b, sink.url)), ...LOADED_MACHINE, ...args], registry);
  } finally {
    await server.close();
    await sink.close();
  }
}

/** .ci/run runs the mutants once, on the pinned Node (SLOW_SUITES=skip for the other majors): they test the suite's logic, not the runtime. */
const SKIP = process.env.SLOW_SUITES === 'skip';

/** The bundled server passes both targets with the options every mutant gets: the control. */
export function describeControl(): void {
  describe.skipIf(SKIP).concurrent('the bundled server passes (the control for every mutant, with the same options)', () => {
    for (const target of ['api', 'sender'] as const) {
      it(`${target} target: zero failures`, async ({ expect }) => {
        const run = await runAgainst(target);
        console.log(`${target} target, bundled server: ${counts(run.report)}`);
        expect(idsWith(run.report, 'failed'), run.output).toEqual([]);
        expect(run.exitCode).toBe(0);
        // Every rule in the target's scope that a check claims is covered, except what these
        // options cannot reach (--skip-slow: the 10 s timeout); every other rule has its written
        // reason (the static map, payments-conformance coverage, lists them).
        const notReached = run.report.coverage.filter((c) => c.status === 'not_reached').map((c) => c.id);
        // (api: a fresh environment has no failed delivery to retry: api.retryDelivery.succeeds skips.)
        expect(notReached).toEqual(target === 'sender' ? ['interface#limits-timeout'] : ['retryDelivery#status-200']);
        const noCheck = run.report.coverage.filter((c) => c.status === 'no_check');
        console.log(`${target} target: ${run.report.coverage.length - notReached.length - noCheck.length} rules covered, ${noCheck.length} without a check`);
        expect(noCheck.filter((c) => c.reasons[0] === 'no check of this suite covers it').map((c) => c.id)).toEqual([]);
        if (target === 'api') expect(noCheck.map((c) => c.id)).toEqual(expect.arrayContaining(['interface#tx-2', 'interface#errors-internal']));
        expect(run.output).toMatch(/rules covered by this run:/);
      }, RUN_TIMEOUT_MS);
    }
  });
}

/** How many test files share each target's mutants: mutants-<target>-<n>.test.ts, n from 1. */
export const SHARES: Record<ServerMutant['target'], number> = { api: 2, sender: 4 };

/**
 * Share `share` (0-based) of `shares` of the mutants of `target`, in list order, round robin:
 * every mutant is in exactly one share (mutants-shares.test.ts checks it).
 */
export function mutantsOfShare(target: ServerMutant['target'], share: number, shares = SHARES[target]): ServerMutant[] {
  return SERVER_MUTANTS.filter((m) => m.target === target).filter((_, i) => i % shares === share);
}

/** Each mutant of the list fails the checks of the rule it breaks. Each is its own server and receiver on its own ports: they run side by side. */
export function describeMutants(mutants: readonly ServerMutant[]): void {
  describe.skipIf(SKIP).concurrent('each mutant fails the checks of the rule it breaks', () => {
    for (const mutant of mutants) {
      it(`${mutant.name} (${mutant.defect}): ${mutant.target} target fails ${mutant.mustFail.join(', ')}`, async ({ expect }) => {
        const run = await runAgainst(mutant.target, mutant.build, mutant.slow === true, mutant.args, apiChecksOf(mutant));
        const failed = idsWith(run.report, 'failed');
        console.log(`${mutant.target} target, mutant ${mutant.name}: ${counts(run.report)}; failed: ${failed.join(', ')}`);
        expect(failed, run.output).toEqual(expect.arrayContaining(mutant.mustFail));
        if (mutant.failsOnly) expect(failed.filter((id) => !mutant.failsOnly!.test(id)), run.output).toEqual([]);
        expect(run.exitCode).toBe(1);
      }, RUN_TIMEOUT_MS);
    }
  });
}
