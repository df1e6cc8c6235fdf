// Every wait of the server's background work (the delivery worker, the PostgreSQL store's
// listener and group commit) goes through Timers, so tests decide when each one ends; the real
// ones never keep the process alive (the HTTP server does).

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  /** Runs fn on the next turn of the event loop, after the I/O callbacks of this one. */
  setImmediate(fn: () => void): void;
}

export const realTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  setImmediate: (fn) => void setImmediate(fn),
};
