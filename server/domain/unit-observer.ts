// What tracing (server/observability/tracing/) hears of the group commits (sqlite/ and
// postgres/group-commit.ts) without the store knowing of tracing: when a unit of work was
// queued, started, reached its batch's COMMIT and was durable. Unset (tracing off), the
// committers call nothing and allocate nothing for it.

/** Told of every unit a group committer queues. */
export interface UnitObserver {
  /** A unit is queued; called in its caller's async context, with the function that runs it. */
  queued<F extends (...args: never[]) => unknown>(run: F): ObservedUnit<F>;
}

/** One queued unit, as its observer follows it (times: performance.now() milliseconds). */
export interface ObservedUnit<F> {
  /**
   * What the batch runs instead of `run`: the same function bound to its caller's context. A
   * batch runs many callers' units in the context of whichever started it; bound, what a unit
   * does (the spans it opens, the trace context it records) belongs to its own caller.
   */
  readonly run: F;
  /** Its batch started it: it waited in the queue until `atMs`. Called again when it runs again. */
  started(atMs: number): void;
  /** Its batch sends COMMIT. */
  committing(atMs: number): void;
  /** Its caller is answered: committed and durable (`ok`), or failed. */
  ended(atMs: number, ok: boolean): void;
}
