// One batch on one connection (see ../group-commit.ts): the units it took, either a bulk kind's
// alone as their one statement (a transaction of its own), or BEGIN and each unit in the
// savepoint `unit` (a bulk kind's units in one). The only part that sends BEGIN, SAVEPOINT,
// RELEASE and ROLLBACK TO; it answers nobody: what each unit left is in `run.done`, for the commit.
import pg from 'pg';
import type { Logger } from 'pino';
import { undoAfter } from '../db.ts';
import { DeadlineExceeded } from '../deadlines.ts';
import { destroyConnection } from '../pg-internals.ts';
import { OutcomeUnknown } from '../../../domain/store-errors.ts';
import type { Timers } from '../../../timers.ts';
import type { LoneTurns, Turn, TurnHolder } from './turns.ts';
import type { BulkStatement, Outcome, Unit } from './units.ts';

export type Done = { unit: Unit; ok: true; outcome: Outcome<unknown> } | { unit: Unit; ok: false; err: unknown };

/** The state of the batch executing on `client`. */
export interface Run extends TurnHolder {
  client: pg.PoolClient;
  /** The savepoint `unit` is open (the next unit may start at once). */
  savepoint: boolean;
  done: Done[];
  /** It changed transactions (see ../group-commit.ts): the loops count it. */
  hot: boolean;
  /** Units that a bulk statement wrote. */
  bulkUnits: number;
  /** Its one statement ran outside BEGIN/COMMIT, or it holds nothing: there is no COMMIT to send. */
  selfCommitted: boolean;
  /** Destroys the connection when the batch outlives transactionMs; cleared once it is over. */
  deadline: unknown;
}

export interface BatchContext {
  turns: LoneTurns;
  log: Logger;
  /** A unit of the batch changed transactions (called for each such unit). */
  hot(): void;
  /** Units it took and never started go back to the queue. */
  putBack(units: Unit[]): void;
}

/** A batch's units in the order they run: alone, or together with the others of their bulk kind. */
type Group = { kind: BulkStatement<unknown, unknown> | null; units: Unit[] };

/** SQLSTATE of a statement sent after an earlier one aborted the (sub)transaction. */
const IN_FAILED_TRANSACTION = '25P02';

/** The database answered (an error of its own): the statement's outcome is known. */
export const answeredByDatabase = (err: unknown): boolean => err instanceof pg.DatabaseError;

/** A connection for a batch, destroyed should the batch outlive transactionMs; throws when none can be had. */
export async function beginBatch(
  pool: pg.Pool,
  turn: Turn | null,
  o: { deadlineTimers: Timers; transactionMs: number; onDestroyed?: (() => void) | undefined },
): Promise<Run> {
  const client = await pool.connect();
  const deadline = o.deadlineTimers.setTimeout(() => {
    o.onDestroyed?.();
    destroyConnection(client, new DeadlineExceeded('a store transaction', o.transactionMs));
  }, o.transactionMs);
  return { client, savepoint: false, done: [], hot: false, bulkUnits: 0, selfCommitted: false, deadline, turn };
}

/**
 * Executes the units a batch took (in `run.done` afterwards). Returns the error that leaves
 * nothing of the batch standing, or null.
 */
export async function executeBatch(run: Run, taken: Unit[], ctx: BatchContext): Promise<unknown> {
  const groups = inGroups(taken);
  if (groups.length === 0) {
    run.selfCommitted = true; // every unit it took had waited too long: nothing to commit
    return null;
  }
  if (ctx.turns.claim(run, groups.length === 1 && groups[0]!.kind !== null ? groups[0]!.units.length : 0)) {
    const ran = await runWhole(run, groups[0]!.kind!, groups[0]!.units, ctx);
    ctx.turns.end(run, true);
    if (ran) return null;
    groups[0]!.kind = null;
  }
  try {
    await run.client.query('BEGIN; SAVEPOINT unit');
    run.savepoint = true;
  } catch (err) {
    // Could not even begin (the connection died meanwhile): the units it took fail.
    for (const unit of groups.flatMap((g) => g.units)) run.done.push({ unit, ok: false, err });
    return err;
  }
  return runGroups(run, groups, ctx);
}

/** BEGIN was sent: each group in turn. */
async function runGroups(run: Run, groups: Group[], ctx: BatchContext): Promise<unknown> {
  let i = 0;
  try {
    for (; i < groups.length; i++) {
      const group = groups[i]!;
      const more = i + 1 < groups.length;
      // A unit whose caller was answered while earlier ones ran is never started.
      group.units = group.units.filter((u) => !u.answered);
      if (group.kind !== null && group.units.length > 0 && (await runBulk(run, group.kind, group.units, more, ctx))) continue;
      for (const [k, unit] of group.units.entries()) {
        if (!unit.answered) await runUnit(run, unit, more || k + 1 < group.units.length, ctx);
      }
    }
    return null;
  } catch (err) {
    // The batch's own statements failed (connection lost): nothing of it stands. The units it
    // had not started go back to the queue, as if it had never taken them.
    for (const unit of groups[i]!.units) if (!unit.answered && !run.done.some((d) => d.unit === unit)) run.done.push({ unit, ok: false, err });
    ctx.putBack(groups.slice(i + 1).flatMap((g) => g.units.filter((u) => !u.answered)));
    return err;
  }
}

/**
 * A batch of one bulk kind's units only: its one statement is a transaction of its own, without
 * the round trips of BEGIN, a savepoint and COMMIT (a third of a batch of orders' waits). False
 * when it failed: nothing of it stands, and the units run alone in a transaction.
 */
async function runWhole(run: Run, kind: BulkStatement<unknown, unknown>, units: Unit[], ctx: BatchContext): Promise<boolean> {
  const outcomes = await bulkOutcomes(run, kind, units, ctx);
  if (outcomes instanceof OutcomeUnknown) {
    // The statement was sent and commits by itself: it may stand. No second try.
    for (const unit of units) run.done.push({ unit, ok: false, err: outcomes });
    run.selfCommitted = true;
    return true;
  }
  if (outcomes === null) {
    notWritten(units); // the database refused the statement: a transaction of its own, nothing of it stands
    return false;
  }
  units.forEach((unit, k) => succeeded(run, unit, outcomes[k]!, ctx));
  run.bulkUnits += units.length;
  run.selfCommitted = true;
  return true;
}

/**
 * The outcomes of a bulk run, or null when it threw (logged); OutcomeUnknown when it ran
 * alone (a transaction of its own) and its connection was lost before the answer.
 */
async function bulkOutcomes(run: Run, kind: BulkStatement<unknown, unknown>, units: Unit[], ctx: BatchContext): Promise<Outcome<unknown>[] | OutcomeUnknown | null> {
  for (const unit of units) {
    unit.sent = true;
    unit.observed?.started(performance.now());
  }
  try {
    const outcomes = await kind.run(run.client, units.map((u) => u.bulk!.item));
    if (outcomes.length !== units.length) throw new Error(`a bulk run answered ${outcomes.length} outcomes for ${units.length} units`);
    return outcomes;
  } catch (err) {
    if (!run.savepoint && isConnectionLost(err)) return new OutcomeUnknown(err);
    ctx.log.warn({ err: { message: (err as Error).message }, units: units.length }, 'a bulk statement failed: its units run one by one');
    return null;
  }
}

/** One unit, in its own savepoint; `more`: another unit follows it in this batch. */
async function runUnit(run: Run, unit: Unit, more: boolean, ctx: BatchContext): Promise<void> {
  await openSavepoint(run);
  // Its caller may have been answered while the savepoint opened: then it never starts.
  if (unit.answered) return;
  let outcome: Outcome<unknown>;
  unit.sent = true;
  unit.observed?.started(performance.now());
  try {
    outcome = await unit.attempt(run.client);
  } catch (err) {
    await undoAfter(err, () => rollbackUnit(run));
    notWritten([unit]);
    run.done.push({ unit, ok: false, err });
    return;
  }
  if (await releaseUnit(run, more)) succeeded(run, unit, outcome, ctx);
  else {
    notWritten([unit]);
    run.done.push({ unit, ok: false, err: caughtInside() });
  }
}

/** A bulk kind's units in one savepoint; false when that failed and nothing of them stands (each then runs alone). */
async function runBulk(run: Run, kind: BulkStatement<unknown, unknown>, units: Unit[], more: boolean, ctx: BatchContext): Promise<boolean> {
  await openSavepoint(run);
  const outcomes = await bulkOutcomes(run, kind, units, ctx);
  if (outcomes === null || outcomes instanceof OutcomeUnknown) {
    await rollbackUnit(run);
    notWritten(units);
    return false;
  }
  // Last in the batch, its savepoint is left to the COMMIT: a bulk run catches no error of
  // its own, so there is no aborted subtransaction to find (what releaseUnit looks for).
  if (more && !(await releaseUnit(run, more))) {
    notWritten(units);
    return false;
  }
  units.forEach((unit, k) => succeeded(run, unit, outcomes[k]!, ctx));
  run.bulkUnits += units.length;
  return true;
}

async function openSavepoint(run: Run): Promise<void> {
  if (run.savepoint) return;
  await run.client.query('SAVEPOINT unit');
  run.savepoint = true;
}

/** Undoes the unit alone, and releases the locks it took; the savepoint stays for the next one. */
async function rollbackUnit(run: Run): Promise<void> {
  await run.client.query('ROLLBACK TO SAVEPOINT unit');
  run.savepoint = true;
}

/**
 * Keeps the unit's writes; one round trip also opens the next one's savepoint when `more`.
 * False when the unit had caught a database error itself and gone on: then nothing of it
 * may commit, and it is rolled back.
 */
async function releaseUnit(run: Run, more: boolean): Promise<boolean> {
  try {
    await run.client.query(more ? 'RELEASE SAVEPOINT unit; SAVEPOINT unit' : 'RELEASE SAVEPOINT unit');
    run.savepoint = more;
    return true;
  } catch (err) {
    if ((err as { code?: unknown }).code !== IN_FAILED_TRANSACTION) throw err;
    await rollbackUnit(run);
    return false;
  }
}

function succeeded(run: Run, unit: Unit, outcome: Outcome<unknown>, ctx: BatchContext): void {
  run.done.push({ unit, ok: true, outcome });
  if ((outcome.touched?.size ?? 0) > 0) ctx.hot();
}

/**
 * Units rolled back to their savepoint (or whose lone statement the database refused): nothing
 * of them can commit, so a caller answered early hears that nothing was written, not
 * OutcomeUnknown (a bulk kind's units, before each runs alone).
 */
function notWritten(units: Unit[]): void {
  for (const unit of units) unit.sent = false;
}

/** No answer from the database (socket lost, destroyed by a deadline): not a statement's own error. */
function isConnectionLost(err: unknown): boolean {
  return !answeredByDatabase(err);
}

function caughtInside(): Error {
  return new Error('transaction rolled back: a statement failed earlier in it and the error was caught inside the transaction');
}

/** The units in the order they were queued, each bulk kind's together where its first one stands. */
export function inGroups(units: Unit[]): Group[] {
  const groups: Group[] = [];
  const byKind = new Map<BulkStatement<unknown, unknown>, Group>();
  for (const unit of units) {
    const kind = unit.bulk?.kind ?? null;
    const group = kind === null ? undefined : byKind.get(kind);
    if (group !== undefined) {
      group.units.push(unit);
      continue;
    }
    const created: Group = { kind, units: [unit] };
    groups.push(created);
    if (kind !== null) byKind.set(kind, created);
  }
  return groups;
}
