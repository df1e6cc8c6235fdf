// The claim's statements (claimSteps), driven by hand: which statement runs after which result.
// The store suite runs the same claims on both stores; this pins when the second step runs.
import { describe, expect, it } from 'vitest';
import { claimSteps, type QueueDialect, type StepResult } from './queue-sql.ts';
import type { ClaimedRow } from './rows.ts';
import type { ClaimOptions } from '../domain/store.ts';

const dialect: QueueDialect = {
  dueOf: () => '',
  leasePicked: () => '',
  window: (limit) => limit * 2,
  flag: (value) => value,
};
const options: ClaimOptions = { owner: 'w', now: 1_000, leaseMs: 30_000, limit: 10, perEndpointLimit: 4, spread: { slots: 8, perDestination: 4 } };
const row = (seq: number, destination: string): ClaimedRow => ({ seq, destination, next_attempt_at: seq }) as unknown as ClaimedRow;

/** The statements a claim runs when each is answered by the next of `results`, and what it returns. */
function run(o: ClaimOptions, results: StepResult[]): { texts: string[]; rows: number[] } {
  const steps = claimSteps(o, dialect);
  const texts: string[] = [];
  let step = steps.next({ rows: [], windowFull: false });
  while (!step.done) {
    texts.push(step.value.text);
    step = steps.next(results[texts.length - 1] ?? { rows: [], windowFull: false });
  }
  return { texts, rows: step.value.map((r) => r.seq) };
}

describe('claimSteps', () => {
  it('stops after a window that read fewer due rows than it may: it saw every one', () => {
    expect(run(options, [{ rows: [row(1, 'a'), row(2, 'a')], windowFull: false }])).toEqual({ texts: ['window'], rows: [1, 2] });
    expect(run(options, [{ rows: [], windowFull: false }])).toEqual({ texts: ['window'], rows: [] });
  });

  it('scans by destination after a full window that did not fill the claim (a destination at its limit filled the window)', () => {
    const r = run(options, [
      { rows: [row(5, 'a')], windowFull: true },
      { rows: [row(3, 'b')], windowFull: false },
    ]);
    expect(r).toEqual({ texts: ['window', 'byDestination'], rows: [3, 5] });
  });

  it('stops after a window that filled the claim, and tops up only held destinations when it may not spread', () => {
    const ten = Array.from({ length: 10 }, (_, i) => row(i, 'a'));
    expect(run(options, [{ rows: ten, windowFull: true }]).texts).toEqual(['window']);
    expect(run({ ...options, spread: { slots: 0, perDestination: 4 } }, [{ rows: [row(1, 'a')], windowFull: false }])).toEqual({ texts: ['held'], rows: [1] });
  });
});
