// The adaptive limit of attempts in flight per destination (AIMD, as TCP's congestion window or
// Netflix's concurrency-limits). A fixed limit of 4 capped one fast endpoint at 4 POSTs at a
// time: under load its deliveries fell behind the orders (issue 58). Here each destination
// starts at `initial`, gains one per window of healthy answers (a window: as many healthy
// answers as the limit) up to `max`, and is halved (not below 1) on a sign of overload.
//
// - Healthy: a 2xx within `healthyMs`. It counts only while the destination was using its
//   whole limit (its attempts in flight, this one included, at least the limit): a destination
//   that a trickle of traffic never filled proves nothing about more, and must not grow to the
//   max and then receive a burst (TCP's congestion window validation).
// - Overload: no answer (network error, timeout), a 5xx, a 429, or any answer slower than
//   `healthyMs`. The attempts in flight when the limit was halved are one congestion event:
//   their overloads do not halve it again (TCP reduces once per window). Launch numbers tell
//   them apart, so no clock is needed.
// - Neutral: any other answer (a fast 3xx or 4xx but 429): the receiver refused the delivery,
//   which says nothing about how many it can take at once.

export interface EndpointLimitSettings {
  /** The limit a destination starts at (and returns to once forgotten). */
  initial: number;
  /** The most it grows to. */
  max: number;
  /** A 2xx answered within this is healthy; any answer slower is overload. */
  healthyMs: number;
  /** Destinations remembered; the memory is emptied when it would grow past this. */
  memory?: number;
}

/** What the limit learns from an attempt (SendOutcome's fields). */
export interface Answer {
  success: boolean;
  statusCode: number | null;
  durationMs: number;
}

/** Where the attempt stood among the destination's others. */
export interface AnswerContext {
  /** The attempt's launch number (the dispatcher's `seq`, increasing). */
  seq: number;
  /** The last launch number so far, any destination. */
  lastSeq: number;
  /** The destination's attempts in flight as it answered, itself included. */
  inFlight: number;
}

export type Verdict = 'healthy' | 'overload' | 'neutral';

export interface EndpointLimits {
  /** How many attempts `dest` may have in flight now. */
  limit(dest: string): number;
  /** Learns from an attempt to `dest` that ended. */
  record(dest: string, answer: Answer, at: AnswerContext): void;
}

/** Destinations whose limit is remembered (as health.ts remembers outcomes). */
export const LIMIT_MEMORY_SIZE = 10_000;

export function verdict(answer: Answer, healthyMs: number): Verdict {
  const { statusCode, durationMs } = answer;
  if (statusCode === null || statusCode >= 500 || statusCode === 429 || durationMs > healthyMs) return 'overload';
  return answer.success ? 'healthy' : 'neutral';
}

interface DestState {
  limit: number;
  /** Healthy answers in the current window. */
  healthy: number;
  /** Launches up to this one were in flight when the limit was last halved. */
  halvedAtSeq: number;
}

export function endpointLimits(settings: EndpointLimitSettings): EndpointLimits {
  const { initial, max, healthyMs, memory = LIMIT_MEMORY_SIZE } = settings;
  if (!(Number.isInteger(initial) && Number.isInteger(max) && initial >= 1 && max >= initial)) {
    throw new RangeError(`the per-destination limit must start at a positive integer no greater than its max, not ${initial} (max ${max})`);
  }
  const states = new Map<string, DestState>();

  function stateOf(dest: string): DestState {
    let st = states.get(dest);
    if (st === undefined) {
      if (states.size >= memory) states.clear();
      st = { limit: initial, healthy: 0, halvedAtSeq: -Infinity };
      states.set(dest, st);
    }
    return st;
  }

  return {
    limit: (dest) => states.get(dest)?.limit ?? initial,
    record(dest, answer, { seq, lastSeq, inFlight }) {
      const v = verdict(answer, healthyMs);
      if (v === 'neutral') return;
      const st = stateOf(dest);
      if (v === 'overload') {
        if (seq <= st.halvedAtSeq) return; // in flight when it was halved: the same event
        st.limit = Math.max(1, Math.floor(st.limit / 2));
        st.healthy = 0;
        st.halvedAtSeq = lastSeq;
        return;
      }
      if (inFlight < st.limit || st.limit >= max) return;
      st.healthy += 1;
      if (st.healthy >= st.limit) {
        st.limit += 1;
        st.healthy = 0;
      }
    },
  };
}
