// The end of a batch (see ../group-commit.ts): COMMIT (or ROLLBACK), the connection released,
// the other instances notified and each unit's caller answered, in the order that keeps a
// caller from reading a page staler than its own write.
import type { Logger } from 'pino';
import { mapError } from '../db.ts';
import { OutcomeUnknown } from '../../../domain/store-errors.ts';
import type { Timers } from '../../../timers.ts';
import { answeredByDatabase, type Done, type Run } from './batch.ts';
import type { Unit } from './units.ts';

/** Batches committed, the units of work they held, and how many of those a bulk statement wrote. */
export interface CommitStats {
  batches: number;
  units: number;
  bulkUnits: number;
}

export interface CommitContext {
  /** See GroupCommitOptions.notify (../group-commit.ts). */
  notify(deliveries: boolean, changed: ReadonlySet<string>): Promise<unknown>;
  log: Logger;
  /** What the batch deadline (run.deadline) was set with. */
  deadlineTimers: Timers;
  stats: CommitStats;
  /** Queues a unit again after a deadlock; false when it may not (its caller is answered here). */
  rerun(unit: Unit, err: unknown): boolean;
}

/** Commits the executed batch (or, `fatal`, rolls it back) and answers every unit it ran. */
export async function commitBatch(run: Run, fatal: unknown, ctx: CommitContext): Promise<void> {
  const { client, done, deadline } = run;
  let broken: Error | undefined;
  const observed = done.filter((d) => d.unit.observed !== undefined);
  if (observed.length > 0) {
    const at = performance.now();
    for (const d of observed) d.unit.observed!.committing(at);
  }
  if (fatal === null) fatal = await sendCommit(run, ctx.stats);
  ctx.deadlineTimers.clearTimeout(deadline);
  if (fatal !== null) {
    // A connection whose ROLLBACK failed is in an unknown state: destroyed rather than reused.
    await client.query('ROLLBACK').catch((e: unknown) => {
      broken = e instanceof Error ? e : new Error(String(e));
    });
  }
  client.release(broken);
  if (fatal !== null) {
    if (fatal instanceof OutcomeUnknown) ctx.log.warn({ err: { message: errorMessage(fatal.cause) }, units: done.length }, 'connection lost at COMMIT: outcome unknown');
    for (const d of done) answerAfterBatch(d, fatal, ctx);
    return;
  }
  const deliveries = done.some((d) => d.ok && d.outcome.notify);
  const changed = new Set<string>();
  for (const d of done) if (d.ok && d.outcome.touched) for (const id of d.outcome.touched) changed.add(id);
  if (changed.size > 0) {
    // Other instances' cached pages must be stale before the writer hears of its write.
    await notifyCommitted(deliveries, changed, ctx);
    for (const d of done) answerAfterBatch(d, null, ctx);
    return;
  }
  // Deliveries alone: other instances would only find them sooner, and this instance's
  // workers wake as each unit is answered; a round trip (p99 3 ms at 1 000 orders/s) the caller need not wait.
  for (const d of done) answerAfterBatch(d, null, ctx);
  await notifyCommitted(deliveries, changed, ctx);
}

/** COMMIT, unless the batch committed itself; the error that leaves nothing of it known to stand, or null. */
async function sendCommit({ client, done, bulkUnits, selfCommitted }: Run, stats: CommitStats): Promise<unknown> {
  try {
    const result = selfCommitted ? null : await client.query('COMMIT');
    if (result?.command === 'ROLLBACK') throw new Error('batch rolled back at COMMIT');
    stats.batches += 1;
    stats.units += done.length;
    stats.bulkUnits += bulkUnits;
    return null;
  } catch (err) {
    // COMMIT was sent: without the database's own answer, it may have gone in.
    return answeredByDatabase(err) ? err : new OutcomeUnknown(err);
  }
}

/** Tells every instance what the committed batch changed (see GroupCommitOptions.notify). */
async function notifyCommitted(deliveries: boolean, changed: ReadonlySet<string>, ctx: CommitContext): Promise<void> {
  if (!deliveries && changed.size === 0) return;
  try {
    await ctx.notify(deliveries, changed);
  } catch (err) {
    ctx.log.warn({ err: { message: (err as Error).message } }, 'could not notify the other instances of a commit: they see it within their safety bounds');
  }
}

/**
 * Answers a unit after its batch ended. When the batch did not commit, every unit gets the
 * batch's error, also those that had failed on their own: their error may rest on data of the
 * batch that is now gone. A deadlocked unit runs again instead, when it may.
 */
function answerAfterBatch(d: Done, fatal: unknown, ctx: CommitContext): void {
  if (fatal === null && d.ok) {
    d.outcome.committed();
    d.unit.observed?.ended(performance.now(), true);
    d.unit.resolve(d.outcome.value);
    return;
  }
  const err = fatal ?? (d.ok ? null : d.err);
  if (ctx.rerun(d.unit, err)) return;
  d.unit.observed?.ended(performance.now(), false);
  d.unit.reject(mapError(err));
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
