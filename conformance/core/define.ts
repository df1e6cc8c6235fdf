// The one way to write a check. A target's rule book (its name and its catalogue) types the
// rules a check may name: `covers` accepts only ids of that catalogue, so a typo or another
// target's rule fails `npm run typecheck` instead of showing as "no check" in the coverage.
import type { Check, CheckContext, CheckOutcome, SpecRule } from './check.ts';
import type { CatalogueEntry } from './coverage.ts';

/** A target's name and the catalogue of rules in its scope (see coverage.ts). */
export interface RuleBook<Id extends string = string> {
  target: string;
  catalogue: readonly CatalogueEntry<Id>[];
}

/** The rules of a rule book's target: `covers` names entries of its catalogue only. */
export type RuleOf<B extends RuleBook> = B extends RuleBook<infer Id> ? SpecRule<Id> : never;

/** A rule that covers no catalogue entry (a schema pointer, a message of the AsyncAPI document). */
export type UncatalogedRule = SpecRule<never>;

export function ruleBook<const Id extends string>(target: string, catalogue: readonly CatalogueEntry<Id>[]): RuleBook<Id> {
  return { target, catalogue };
}

export interface CheckDefinition<Id extends string> {
  /** The target's rule book: its name prefixes the id, its catalogue types the rules. */
  book: RuleBook<Id>;
  /** The id after `<target>.`, e.g. `rules.refund-pending-confirmation-only`. */
  id: string;
  title: string;
  /** Per operation or per event type, for example `order.paid` or `stateful rules`. */
  group: string;
  /** The rules this check enforces (at least one). */
  rules: readonly SpecRule<NoInfer<Id>>[];
  run(ctx: CheckContext): Promise<CheckOutcome>;
}

export function defineCheck<Id extends string>(def: CheckDefinition<Id>): Check {
  const { book, id, title, group, rules, run } = def;
  return { id: `${book.target}.${id}`, title, target: book.target, group, rules: [...rules], run };
}
