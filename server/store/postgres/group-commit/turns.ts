// Lone bulk statements take turns (see ../group-commit.ts): each is a transaction of its own and
// pays a WAL flush, so at most LONE_IN_FLIGHT are in flight, and with one in flight the next
// begins once as many units are queued as that one holds, or once a lone statement ends. The
// rule alone: no timers, no SQL; the loops ask it and wait on it.

/** Lone bulk statements in flight at most. */
export const LONE_IN_FLIGHT = 2;

/** A lone bulk statement's place in flight, taken before its batch takes its units: how many it holds. */
export interface Turn {
  units: number;
}

/** Whatever holds a turn while it may send a lone statement (a batch). */
export interface TurnHolder {
  turn: Turn | null;
}

export class LoneTurns {
  /** In flight, oldest first. */
  private readonly inFlight: Turn[] = [];
  private readonly waiters: ((ended: boolean) => void)[] = [];

  /** Loops waiting for their turn. */
  get waiting(): number {
    return this.waiters.length;
  }

  /** Lone statements in flight. */
  get count(): number {
    return this.inFlight.length;
  }

  /**
   * Whether the batch that would begin now may: any batch but a lone statement (`loneNext`) at
   * once; that one beside at most one other, once `queued` units are as many as the other holds
   * or (`ended`) once a lone statement ended since its loop began to wait.
   */
  open(loneNext: boolean, queued: number, ended: boolean): boolean {
    if (!loneNext || this.inFlight.length === 0) return true;
    if (this.inFlight.length >= LONE_IN_FLIGHT) return false;
    return ended || queued >= this.inFlight[0]!.units;
  }

  take(units: number): Turn {
    const turn = { units };
    this.inFlight.push(turn);
    return turn;
  }

  /**
   * Whether a batch that took its units sends them as one lone statement: it holds `units` of
   * one bulk kind only (0: anything else) and has a turn. Should the queue have changed since
   * its turn was decided, it gives back a turn it no longer needs; a batch without one takes one
   * if there is room, else runs its statement inside BEGIN and COMMIT (never one too many in flight).
   */
  claim(holder: TurnHolder, units: number): boolean {
    if (units === 0) this.end(holder, false);
    else if (holder.turn !== null) holder.turn.units = units;
    else if (this.inFlight.length < LONE_IN_FLIGHT) holder.turn = this.take(units);
    return holder.turn !== null;
  }

  /** The holder sends no lone statement (any more): the waiting loops look again. `ended`: it sent one. */
  end(holder: TurnHolder, ended: boolean): void {
    if (holder.turn === null) return;
    this.inFlight.splice(this.inFlight.indexOf(holder.turn), 1);
    holder.turn = null;
    if (this.waiters.length > 0) this.wake(ended);
  }

  /** Resolves when woken: true when a lone statement ended meanwhile. */
  wait(): Promise<boolean> {
    return new Promise<boolean>((resolve) => this.waiters.push(resolve));
  }

  wake(ended: boolean): void {
    for (const wake of this.waiters.splice(0)) wake(ended);
  }
}
