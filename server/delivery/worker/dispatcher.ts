// The dispatcher: a synchronous state machine over the leases this worker holds. It keeps the
// ready queues (claimed deliveries waiting for a slot, per destination), the send slots (two
// budgets, and the per-destination limit), and the set of leases held (ready, sending, or
// waiting to be recorded). It starts what has a slot, sizes claims (room and spread), and
// calls out through its hooks; it never waits, so every rule here is tested without I/O.
//
// - A destination that is not suspect sends from the shared budget (`concurrency`), at most
//   its adaptive limit at once (endpoint-limit.ts: it starts at `perEndpointLimit`, grows with
//   healthy answers up to `maxPerEndpointLimit` and halves on overload; freeSlot tells it each
//   answer before the freed slot is reused). A suspect one (health.ts) sends one attempt at a
//   time from the slow budget (`slowConcurrency`). Destinations that answered here last go first.
// - An attempt still open after `slowAfterMs` moves to the slow budget (moveToSlow, armed
//   through the `sharedFull` hook), so hanging destinations do not starve healthy ones.
//   Neither the slow budget nor the suspect deliveries waiting for it count against claims.
// - A prefetched delivery is sent only while its lease covers the attempt with SEND_MARGIN_MS
//   to spare and it waited at most PREFETCH_MAX_WAIT_MS; otherwise it is given back (`expired`).
// - A destination held back by its pace (pace.ts: a receiver's Retry-After, the endpoint's rate
//   cap) sends nothing before its open time: the dispatcher asks for a wake-up then (`wakeAt`)
//   and gives back at once what would be too old to send by then.
import type { Clock } from '../../domain/clock.ts';
import type { ClaimedDelivery } from '../../domain/store.ts';
import { endpointLimits, type Answer, type EndpointLimits } from './endpoint-limit.ts';
import { createPace, type Pace } from './pace.ts';
import type { DestinationHealth } from './health.ts';
import { toLease, type Lease } from './lease.ts';
import { PREFETCH_MAX_WAIT_MS, SEND_MARGIN_MS, type Limits } from './limits.ts';

export type Budget = 'shared' | 'slow';

/** A send slot: an attempt in flight. */
export interface Slot {
  readonly lease: Lease;
  /** Which budget it counts against. */
  budget: Budget;
  /** Launch order: moveToSlow moves what was launched up to a given point. */
  readonly seq: number;
}

export interface DispatcherHooks<S extends Slot> {
  /** Starts sending `lease`; the returned slot is freed with freeSlot once the answer is in. */
  start(lease: Lease, budget: Budget, seq: number): S;
  /** Prefetched leases too old to send: no longer held here, to be given back. */
  expired(leases: readonly Lease[]): void;
  /** The shared budget is full: open attempts should move to the slow one after slowAfterMs. */
  sharedFull(): void;
  /** A destination held back by its pace opens at `at`: dispatch again then. */
  wakeAt?(at: number): void;
}

export interface Dispatcher<S extends Slot> {
  /** Holds a claimed batch and starts what has a slot. */
  take(batch: readonly ClaimedDelivery[]): void;
  /** Starts every ready delivery that has a free slot. */
  dispatch(): void;
  /**
   * Frees the send slot of a finished attempt and starts what waits for it; false if it was
   * free already. `answer` (absent: the attempt was abandoned or broke) adapts its destination's limit first.
   */
  freeSlot(slot: S, answer?: Answer): boolean;
  /** The lease is no longer held here (recorded, lost, or given back). */
  letGo(lease: Lease): void;
  /** Moves the shared-budget attempts launched up to `seq` to the slow budget, as far as it has room; then dispatches. */
  moveToSlow(seq: number): void;
  /** Stops starting sends (shutdown). */
  stop(): void;
  /** Empties the ready queues: their leases, no longer held, are to be given back. */
  drainReady(): Lease[];
  /** How many deliveries to claim, once `recording` held leases are recorded (0: none). */
  claimRoom(recording?: number): number;
  /** ClaimOptions.spread: the shared slots what is held cannot fill. */
  spread(): { slots: number; perDestination: number };
  readyAt(dest: string): number;
  /** The destination's adaptive limit of attempts in flight now. */
  limitOf(dest: string): number;
  held(): number;
  sending(): ReadonlySet<S>;
  sharedInFlight(): number;
  slowFull(): boolean;
  lastSeq(): number;
}

interface DispatcherDeps<S extends Slot> {
  limits: Limits;
  health: DestinationHealth;
  clock: Clock;
  hooks: DispatcherHooks<S>;
  /** When each destination may send next; default a fresh one. */
  pace?: Pace;
}

/** The dispatcher's state; the helpers below read it, the dispatcher alone changes it. */
interface State<S extends Slot> {
  readonly limits: Limits;
  readonly health: DestinationHealth;
  readonly perDest: EndpointLimits;
  /** Claimed deliveries waiting for a slot, per destination. */
  readonly ready: Map<string, Lease[]>;
  /** Sends in flight per destination. */
  readonly sendingTo: Map<string, number>;
  readonly inFlight: Set<S>;
  /** Leases held: ready, sending, or waiting to be recorded. */
  readonly held: Set<Lease>;
  /** Attempts in flight per budget. */
  shared: number;
  slow: number;
  seq: number;
  stopped: boolean;
}

/** Whether a prefetched lease may still be sent at `now`. */
function sendable({ timeoutMs, leaseMs }: Limits, lease: Lease, now: number): boolean {
  const left = (lease.delivery.leaseExpiresAt ?? 0) - now;
  return left >= timeoutMs + SEND_MARGIN_MS && leaseMs - left <= PREFETCH_MAX_WAIT_MS;
}

/** Whether the next delivery of `dest` (suspect or not) has a slot now. */
function hasRoom(st: State<Slot>, dest: string, isSuspect: boolean): boolean {
  const { slowConcurrency, concurrency } = st.limits;
  return isSuspect ? st.slow < slowConcurrency && !st.sendingTo.has(dest) : st.shared < concurrency && (st.sendingTo.get(dest) ?? 0) < st.perDest.limit(dest);
}

/** Leases counted against claims: all held, less the slow budget's (up to slowConcurrency). */
function countedHeld(st: State<Slot>): number {
  let slowHeld = st.slow;
  for (const queue of st.ready.values()) if (queue.length > 0 && st.health.suspect(queue[0]!)) slowHeld += queue.length;
  return st.held.size - Math.min(slowHeld, st.limits.slowConcurrency);
}

/**
 * The shared slots what is held cannot fill. A destination that is not suspect fills up to
 * its limit less what it sends already from its ready queue; a suspect one sends from
 * the slow budget only, so it neither counts nor holds a spread back. Destinations beyond those
 * stay free for other instances: claims are exclusive, and a worker that took every destination
 * of a backlog left a second instance nothing to send. A new destination counts as its limit's
 * start (perDestination): that is what it may send at first.
 */
function spreadOf(st: State<Slot>): { slots: number; perDestination: number } {
  const { concurrency, perEndpointLimit } = st.limits;
  let covered = st.shared;
  for (const [dest, queue] of st.ready) {
    if (queue.length === 0 || st.health.suspect(queue[0]!)) continue;
    covered += Math.min(queue.length, Math.max(0, st.perDest.limit(dest) - (st.sendingTo.get(dest) ?? 0)));
  }
  return { slots: Math.max(0, concurrency - covered), perDestination: perEndpointLimit };
}

/** Moves shared-budget attempts launched up to `upTo` to the slow budget, as far as it has room. */
function moveOpen(st: State<Slot>, upTo: number): void {
  for (const slot of st.inFlight) {
    if (st.slow >= st.limits.slowConcurrency) break;
    if (slot.budget !== 'shared' || slot.seq > upTo) continue;
    slot.budget = 'slow';
    st.shared -= 1;
    st.slow += 1;
  }
}

/** Frees a slot's budget and destination counts; false if it was free already. */
function vacate(st: State<Slot>, slot: Slot): boolean {
  if (!st.inFlight.delete(slot)) return false;
  if (slot.budget === 'shared') st.shared -= 1;
  else st.slow -= 1;
  const n = (st.sendingTo.get(slot.lease.dest) ?? 1) - 1;
  if (n <= 0) st.sendingTo.delete(slot.lease.dest);
  else st.sendingTo.set(slot.lease.dest, n);
  return true;
}

export function createDispatcher<S extends Slot>({ limits, health, clock, hooks, pace = createPace() }: DispatcherDeps<S>): Dispatcher<S> {
  const perDest = endpointLimits({ initial: limits.perEndpointLimit, max: limits.maxPerEndpointLimit, healthyMs: limits.healthyLatencyMs });
  const st: State<S> = { limits, health, perDest, ready: new Map(), sendingTo: new Map(), inFlight: new Set(), held: new Set(), shared: 0, slow: 0, seq: 0, stopped: false };
  /** Leases too old to send, collected during one dispatch. */
  let expiring: Lease[] = [];
  /** The earliest open time of a destination held back by its pace, during one dispatch. */
  let wake = Infinity;

  function launch(lease: Lease, budget: Budget, now: number): void {
    if (budget === 'shared') st.shared += 1;
    else st.slow += 1;
    st.sendingTo.set(lease.dest, (st.sendingTo.get(lease.dest) ?? 0) + 1);
    pace.took(lease.dest, now, lease.maxPerSecond);
    st.inFlight.add(hooks.start(lease, budget, ++st.seq));
  }

  function expire(lease: Lease): void {
    st.held.delete(lease);
    expiring.push(lease);
  }

  /** A destination held back until `openAt`: what would be too old to send by then goes back now. */
  function holdBack(queue: Lease[], openAt: number): void {
    wake = Math.min(wake, openAt);
    let kept = 0;
    for (const lease of queue) {
      if (sendable(limits, lease, openAt)) queue[kept++] = lease;
      else expire(lease);
    }
    queue.length = kept;
  }

  /** Starts what one destination's queue can send now; true when it waits for the shared budget. */
  function dispatchQueue(dest: string, queue: Lease[]): boolean {
    while (queue.length > 0) {
      const now = clock.now();
      const openAt = pace.openAt(dest, now);
      if (openAt > now) {
        holdBack(queue, openAt);
        return false;
      }
      const isSuspect = health.suspect(queue[0]!);
      if (!hasRoom(st, dest, isSuspect)) return !isSuspect && st.shared >= limits.concurrency;
      const lease = queue.shift()!;
      if (sendable(limits, lease, now)) launch(lease, isSuspect ? 'slow' : 'shared', now);
      else expire(lease);
    }
    return false;
  }

  /** One pass over the ready queues: only the destinations that answered here last, or all. */
  function pass(answeredOnly: boolean): boolean {
    let waitingForShared = false;
    for (const [dest, queue] of st.ready) {
      if (answeredOnly && !health.answered(dest)) continue;
      if (dispatchQueue(dest, queue)) waitingForShared = true;
      if (queue.length === 0) st.ready.delete(dest);
    }
    return waitingForShared;
  }

  function dispatch(): void {
    if (st.stopped) return;
    wake = Infinity;
    const answeredWait = pass(true);
    const waitingForShared = pass(false) || answeredWait;
    // Also with nothing waiting here: a full shared budget holds claims back from spreading to
    // the destinations due in the store (spread), until hanging attempts move out of it.
    if (waitingForShared || st.shared >= limits.concurrency) hooks.sharedFull();
    if (expiring.length > 0) {
      const leases = expiring;
      expiring = [];
      hooks.expired(leases);
    }
    if (wake < Infinity) hooks.wakeAt?.(wake);
  }

  return {
    take(batch) {
      for (const claimed of batch) {
        const lease = toLease(claimed);
        st.held.add(lease);
        let queue = st.ready.get(lease.dest);
        if (queue === undefined) st.ready.set(lease.dest, (queue = []));
        queue.push(lease);
      }
      dispatch();
    },
    dispatch,
    freeSlot(slot, answer) {
      if (!st.inFlight.has(slot)) return false;
      if (answer !== undefined) perDest.record(slot.lease.dest, answer, { seq: slot.seq, lastSeq: st.seq, inFlight: st.sendingTo.get(slot.lease.dest) ?? 1 });
      vacate(st, slot);
      dispatch();
      return true;
    },
    letGo: (lease) => void st.held.delete(lease),
    moveToSlow(upTo) {
      if (st.stopped) return;
      moveOpen(st, upTo);
      dispatch();
    },
    stop: () => void (st.stopped = true),
    drainReady() {
      const leases = [...st.ready.values()].flat();
      st.ready.clear();
      for (const lease of leases) st.held.delete(lease);
      return leases;
    },
    claimRoom: (recording = 0) => Math.max(0, Math.min(limits.batchSize, limits.maxHeld - (countedHeld(st) - recording))),
    spread: () => spreadOf(st),
    readyAt: (dest) => st.ready.get(dest)?.length ?? 0,
    limitOf: (dest) => perDest.limit(dest),
    held: () => st.held.size,
    sending: () => st.inFlight,
    sharedInFlight: () => st.shared,
    slowFull: () => st.slow >= limits.slowConcurrency,
    lastSeq: () => st.seq,
  };
}
