// Which rules of which document a run covered. Each target names the rules in its scope (a
// catalogue entry per rule of the contract's documents in its scope, from generated/rules.ts
// (contract-rules.ts), and per numbered rule or error row of the interface document and
// PRODUCT.md; the catalogues live in each target's rules.ts, beside the quoted rules that cover them);
// each SpecRule a check enforces says which entries it covers (`covers`). After the run an
// entry is `covered` when a check covering it passed or failed, `not_reached` when every
// such check was skipped (the reasons say why, e.g. --skip-slow), and `no_check` when the
// suite has no check for it (the entry says why a black-box run cannot observe it).
import type { CheckResult, CoverageStatus, RuleCoverage } from './check.ts';

export interface CatalogueEntry<Id extends string = string> {
  /** Stable id, e.g. `interface#signatures-4`: what a rule's `covers` names. */
  id: Id;
  /** The document: `payments-service-interface.md`, `PRODUCT.md`, or the OpenAPI document that alone writes the rule. */
  document: string;
  /** Where in it, e.g. `Webhook signatures, verification rule 4`, or the contract's sentence. */
  rule: string;
  /** The operation a rule of the contract applies to. */
  operation?: string;
  /** Why no check exists, for entries a black-box run cannot observe. */
  unobservable?: string;
}

export type { CoverageStatus, RuleCoverage };

export const INTERFACE = 'payments-service-interface.md';
export const PRODUCT = 'PRODUCT.md';
/** Rules written only in the OpenAPI documents (decisions of spec/, not of the seed). */
export const ORDERS_API = 'orders.openapi.yaml';
export const MANAGEMENT_API = 'management.openapi.yaml';

/** One catalogue entry; its id keeps its literal type, so the catalogue types `covers`. */
export const entry = <const Id extends string>(id: Id, document: string, rule: string, unobservable?: string): CatalogueEntry<Id> => ({ id, document, rule, ...(unobservable ? { unobservable } : {}) });

/** Entries `interface#<prefix>-<n>` of a numbered list of the interface document. */
export const numbered = <const P extends string, const N extends number>(prefix: P, section: string, numbers: readonly N[]): CatalogueEntry<`interface#${P}-${N}`>[] =>
  numbers.map((n) => entry(`interface#${prefix}-${n}` as `interface#${P}-${N}`, INTERFACE, `${section} ${n}`));

/** Coverage of `catalogue` by the results; checks cover what their rules' `covers` name. */
export function coverage(catalogue: readonly CatalogueEntry[], results: readonly CheckResult[]): RuleCoverage[] {
  return catalogue.map((e) => {
    const mine = results.filter((r) => r.rules.some((rule) => rule.covers?.includes(e.id)));
    const ran = mine.filter((r) => r.status === 'passed' || r.status === 'failed');
    const base = { id: e.id, document: e.document, ...(e.operation ? { operation: e.operation } : {}), rule: e.rule, checks: mine.map((r) => r.id) };
    if (ran.length > 0) return { ...base, status: 'covered', reasons: [] };
    if (mine.length > 0) return { ...base, status: 'not_reached', reasons: [...new Set(mine.map((r) => `${r.id}: ${r.reason ?? r.status}`))] };
    return { ...base, status: 'no_check', reasons: [e.unobservable ?? 'no check of this suite covers it'] };
  });
}

/**
 * The coverage block of the summary: counts per document, every rule not reached with why, and
 * the rules without a check counted per reason (the reports list each; `coverage` prints the map).
 */
export function coverageLines(cov: readonly RuleCoverage[]): string[] {
  if (cov.length === 0) return [];
  const lines = ['rules covered by this run:'];
  for (const doc of [...new Set(cov.map((c) => c.document))]) {
    const of = cov.filter((c) => c.document === doc);
    const n = (s: CoverageStatus): number => of.filter((c) => c.status === s).length;
    lines.push(`  ${doc}: ${n('covered')} of ${of.length} covered, ${n('not_reached')} not reached, ${n('no_check')} without a check`);
    for (const c of of.filter((x) => x.status === 'not_reached')) lines.push(`    NOT REACHED ${c.document.endsWith('.yaml') ? c.id : c.rule}: ${c.reasons[0] ?? ''}${c.reasons.length > 1 ? ` (+${c.reasons.length - 1} more)` : ''}`);
    const byReason = new Map<string, string[]>();
    for (const c of of.filter((x) => x.status === 'no_check')) byReason.set(c.reasons[0] ?? '', [...(byReason.get(c.reasons[0] ?? '') ?? []), c.id]);
    for (const [reason, ids] of byReason) lines.push(`    no check    ${ids.length === 1 ? ids[0] : `${ids.length} rules (${ids.slice(0, 3).join(', ')}${ids.length > 3 ? ', ...' : ''})`}: ${reason}`);
  }
  return lines;
}
