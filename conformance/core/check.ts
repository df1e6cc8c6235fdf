// The check model shared by every conformance target (receiver, api, sender).
//
// A check enforces one rule of the contract against the implementation under test. Its

// outcome is one of four statuses; a failure always carries evidence: what was sent, what
// came back, and which rule that breaks, so a partner can act on the report alone.

export const CHECK_STATUSES = ['passed', 'failed', 'skipped', 'not_implemented'] as const;
export type CheckStatus = (typeof CHECK_STATUSES)[number];

/**
 * The rule a check enforces, with where it is written.
 *
 * `source` points into the contract: a spec pointer such as
 * `webhooks.asyncapi.yaml#/components/messages/orderPaid`, or a section of the interface
 * document such as `payments-service-interface.md#webhook-signatures rule 4`. `quote` is the
 * rule in the document's own words.
 */
export interface SpecRule<Id extends string = string> {
  source: string;
  quote?: string;
  /**
   * The catalogue entries a check enforcing this rule covers (the catalogue of the target's
   * rules.ts). A target's rules are typed `SpecRule<its catalogue's ids>`, so an id that is not
   * in the catalogue fails the type check.
   */
  covers?: readonly Id[];
}

/** A request as it was sent; the body is cut to keep reports readable. */
export interface SentRequest {
  method: string;
  url: string;
  /** Header names as sent, values as sent (never a secret: signatures are HMACs, not keys). */
  headers: Record<string, string>;
  /** The body as text, cut at `bodyLimit` characters. */
  body: string;
  /** Size of the whole body in bytes. */
  bodyBytes: number;
  bodyTruncated: boolean;
}

/** What came back: a response, or the reason there was none (timeout, connection refused). */
export interface ReceivedResponse {
  status: number | null;
  headers: Record<string, string>;
  /** The response body as text, cut like the service keeps it (2 KiB). */
  body: string;
  bodyTruncated: boolean;
  durationMs: number;
  /** Set when no HTTP response arrived. */
  error?: string;
}

export interface Exchange {
  /** What this exchange was for, when a check makes several (`first delivery`, `second delivery`). */
  label?: string;
  request: SentRequest;
  response: ReceivedResponse;
}

/** Evidence of a failed check. */
export interface Failure {
  /** What is wrong, in one or two sentences. */
  message: string;
  /** The rule that the observed behaviour breaks. */
  rule: SpecRule;
  /** Every exchange the check made, in order. */
  exchanges: Exchange[];
}

export type CheckOutcome =
  | { status: 'passed'; notes?: string[]; exchanges?: Exchange[] }
  | { status: 'failed'; failure: Failure; notes?: string[] }
  | { status: 'skipped'; reason: string; notes?: string[] }
  | { status: 'not_implemented'; reason?: string };

export interface CheckContext {
  /** The run's seed (each check derives its own data from it when it needs randomness). */
  seed: number;
  signal: AbortSignal;
}

export interface Check {
  /** Stable id, `<target>.<...>`, usable in CI filters and bug reports. */
  id: string;
  title: string;
  /** `receiver`, `api` or `sender`. */
  target: string;
  /** Per operation or per event type, for example `order.paid` or `verification (orderWebhooks)`. */
  group: string;
  /** The rules this check enforces (at least one). */
  rules: SpecRule[];
  run(ctx: CheckContext): Promise<CheckOutcome>;
}

export interface CheckResult {
  id: string;
  title: string;
  target: string;
  group: string;
  rules: SpecRule[];
  status: CheckStatus;
  durationMs: number;
  /** Why the check was skipped or is not implemented. */
  reason?: string;
  failure?: Failure;
  notes: string[];
}

export interface GroupSummary {
  group: string;
  passed: number;
  failed: number;
  skipped: number;
  not_implemented: number;
  total: number;
  durationMs: number;
}

export interface RunReport {
  tool: string;
  target: string;
  seed: number;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  /** Run-level notes (for example: which options were used). */
  notes: string[];
  results: CheckResult[];
  /** Which rules of which document the run covered (when the target has a catalogue). */
  coverage?: RuleCoverage[];
}

/** Counts per group, in the order groups first appear. */
export function summarize(results: readonly CheckResult[]): GroupSummary[] {
  const groups = new Map<string, GroupSummary>();
  for (const r of results) {
    let g = groups.get(r.group);
    if (!g) {
      g = { group: r.group, passed: 0, failed: 0, skipped: 0, not_implemented: 0, total: 0, durationMs: 0 };
      groups.set(r.group, g);
    }
    g[r.status] += 1;
    g.total += 1;
    g.durationMs += r.durationMs;
  }
  return [...groups.values()];
}

export function totals(results: readonly CheckResult[]): Omit<GroupSummary, 'group'> {
  const t = { passed: 0, failed: 0, skipped: 0, not_implemented: 0, total: 0, durationMs: 0 };
  for (const r of results) {
    t[r.status] += 1;
    t.total += 1;
    t.durationMs += r.durationMs;
  }
  return t;
}

/** Whether the run passed: nothing failed (skipped and not implemented checks do not fail a run). */
export function runPassed(report: Pick<RunReport, 'results'>): boolean {
  return report.results.every((r) => r.status !== 'failed');
}

/** How far a run reached one rule of a document (see coverage.ts). */
export type CoverageStatus = 'covered' | 'not_reached' | 'no_check';

export interface RuleCoverage {
  id: string;
  document: string;
  /** The operation a rule of the contract applies to. */
  operation?: string;
  rule: string;
  status: CoverageStatus;
  /** The checks that cover it, in run order. */
  checks: string[];
  /** Why it was not reached (skip reasons) or has no check. */
  reasons: string[];
}
