// How many batches run at once and when the next one begins (see ../group-commit.ts): loops
// take batches off the queue, one batch at a time each; a further loop starts only while no
// batch in flight changed transactions and after QUIET_BATCHES in a row that did not, and a
// lone bulk statement waits for its turn (turns.ts). No SQL here: a batch's connection, its
// execution and its commit are the functions it is given, so the scheduling runs on fakes too.
import type { Timers } from '../../../timers.ts';
import type { LoneTurns, Turn, TurnHolder } from './turns.ts';
import type { Unit, UnitQueue } from './units.ts';

/** Batches in a row without a change to transactions before several may execute at once: a
 * workload of payouts never gets there, one of orders at once (the first few batches). */
export const QUIET_BATCHES = 8;

/** What the loops see of a batch: its turn, and whether it changed transactions. */
export interface LoopRun extends TurnHolder {
  hot: boolean;
}

/** The database side of a batch. */
export interface BatchSteps<R extends LoopRun> {
  /** A connection for a batch holding `turn`; throws when none can be had. */
  begin(turn: Turn | null): Promise<R>;
  /** Runs the units taken; `hot()` when one of them changed transactions. Returns the batch's fatal error, or null. */
  execute(run: R, units: Unit[], hot: () => void): Promise<unknown>;
  /** Ends the batch (COMMIT or ROLLBACK) and answers its units; runs while the loop goes on. */
  commit(run: R, fatal: unknown): Promise<void>;
}

export interface LoopOptions<R extends LoopRun> {
  /** Units a batch takes at most. */
  maxBatch: number;
  /** Batches waiting for their COMMIT at once. */
  maxCommitting: number;
  /** Batches executing their units at once (after QUIET_BATCHES). */
  maxExecuting: number;
  /** The turn a loop waits for its batch's company. */
  timers: Timers;
  steps: BatchSteps<R>;
}

export class BatchLoops<R extends LoopRun> {
  /** Loops running, and those of them waiting to take their next batch's first unit. */
  private running = 0;
  private waiting = 0;
  /** Batches executing or committing that changed transactions. */
  private hotBatches = 0;
  /** Batches in a row, up to QUIET_BATCHES, that committed without changing transactions. */
  private quiet = 0;
  private readonly committing = new Set<Promise<void>>();

  constructor(
    private readonly units: UnitQueue,
    private readonly turns: LoneTurns,
    private readonly o: LoopOptions<R>,
  ) {}

  /** Loops taking batches off the queue. */
  get loops(): number {
    return this.running;
  }

  /** A unit was queued: a loop about to take a batch takes it too; otherwise another loop, if allowed, or a waiting one whose turn came. */
  kick(): void {
    if (this.waiting === 0 && this.running < this.executingAllowed()) void this.loop();
    else if (this.turns.waiting > 0 && this.turnOpen(false)) this.turns.wake(false);
  }

  /** More than one batch at once only after a run of batches that took no hot row. */
  private executingAllowed(): number {
    return this.hotBatches > 0 || this.quiet < QUIET_BATCHES ? 1 : this.o.maxExecuting;
  }

  private turnOpen(ended: boolean): boolean {
    return this.turns.open(this.units.loneNext(this.o.maxBatch), this.units.length, ended);
  }

  /** Takes batches off the queue until it is empty; several of these run under load. */
  private async loop(): Promise<void> {
    this.running += 1;
    try {
      for (;;) {
        let turn: Turn | null = null;
        this.waiting += 1;
        try {
          // One turn of the event loop, so that requests that arrived meanwhile join this batch.
          await new Promise<void>((resolve) => this.o.timers.setImmediate(resolve));
          // Checked in the same tick as kick() looks at `waiting`: no unit is left behind.
          if (this.units.length === 0) return;
          turn = await this.nextTurn();
          // Its units may have been answered meanwhile (a lone statement's turn has units).
          if (turn === null && this.units.length === 0) return;
        } finally {
          this.waiting -= 1;
        }
        await this.runBatch(turn);
        // A further loop retires once hot rows are in play; at least one loop goes on.
        if (this.running > this.executingAllowed()) return;
      }
    } finally {
      this.running -= 1;
    }
  }

  /** Waits until the next batch may begin; its turn when it would send a lone statement, else null. */
  private async nextTurn(): Promise<Turn | null> {
    let ended = false;
    for (;;) {
      while (this.committing.size >= this.o.maxCommitting) await Promise.race(this.committing);
      if (this.turnOpen(ended)) return this.units.loneNext(this.o.maxBatch) ? this.turns.take(Math.min(this.o.maxBatch, this.units.length)) : null;
      ended = await this.turns.wait();
    }
  }

  /** Executes one batch, then lets it commit in the background. */
  private async runBatch(turn: Turn | null): Promise<void> {
    let run: R;
    try {
      run = await this.o.steps.begin(turn);
    } catch (err) {
      // No connection within the deadline (database down or pool starved): every queued unit
      // would wait for the same host; they fail now, unwritten.
      this.turns.end({ turn }, false);
      this.units.failAll(err);
      return;
    }
    let fatal: unknown;
    try {
      // The units queued now, not those arriving while it executes: under a steady stream a batch
      // that took every arrival kept executing, one unit after the other, while its first caller
      // waited for the COMMIT (p99 29 ms at 1 000 orders/s); arrivals go to the next batch.
      fatal = await this.o.steps.execute(run, this.units.take(this.o.maxBatch), () => this.markHot(run));
    } finally {
      this.turns.end(run, true);
    }
    const commit = this.o.steps.commit(run, fatal);
    this.committing.add(commit);
    void commit.finally(() => {
      this.committing.delete(commit);
      if (run.hot) this.hotBatches -= 1;
      this.quiet = run.hot ? 0 : Math.min(QUIET_BATCHES, this.quiet + 1);
    });
  }

  private markHot(run: R): void {
    if (run.hot) return;
    run.hot = true;
    this.hotBatches += 1;
  }
}
