// The rules of the contract as the documents write them (generated/rules.ts, from the specs'
// `x-rules` and every operation's documented statuses and problem types; spec/README.md,
// "Rules with ids"), as catalogue entries of the coverage map. A check names the ids it judges
// in its rules' `covers`; a rule no check of a target judges carries the written reason why
// (`NoCheckReasons`), and the suite's tests fail on a rule with neither.
import { CONTRACT_RULES, type ContractRuleId } from '../../generated/rules.ts';
import type { CatalogueEntry } from './coverage.ts';

export type { ContractRuleId };

const IDS = new Set<string>(CONTRACT_RULES.map((r) => r.id));

/** The file a rule is written in, as reports name documents. */
export function documentFile(document: string): string {
  return document === 'webhooks' ? 'webhooks.asyncapi.yaml' : `${document}.openapi.yaml`;
}

export function isContractRule(id: string): id is ContractRuleId {
  return IDS.has(id);
}

/** `<operationId>#status-<code>` when the contract documents that status of the operation; none otherwise. */
export function statusRule(operationId: string, status: number | string): ContractRuleId[] {
  const id = `${operationId}#status-${String(status).toLowerCase()}`;
  return isContractRule(id) ? [id] : [];
}

/** `<operationId>#problem-<slug>` when the operation documents that problem type; none otherwise. */
export function problemRule(operationId: string, slug: string): ContractRuleId[] {
  const id = `${operationId}#problem-${slug}`;
  return isContractRule(id) ? [id] : [];
}

/** `<document>#<slug>` when that document's `info` writes the rule; none otherwise (a rule one document states and another does not). */
export function documentRule(document: string, slug: string): ContractRuleId[] {
  const id = `${document}#${slug}`;
  return isContractRule(id) ? [id] : [];
}

/** The status and problem rules an answer `status` `slug` of the operation judges. */
export function answerRules(operationId: string, status: number, slug?: string): ContractRuleId[] {
  return [...statusRule(operationId, status), ...(slug ? problemRule(operationId, slug) : [])];
}

/** Why no check of a target judges a rule, by id; a function answers for whole families (every `#status-500`). */
export type NoCheckReasons = (rule: (typeof CONTRACT_RULES)[number]) => string | undefined;

/**
 * Rules written in the API documents that only deliveries show (a webhook or a callback sent, or
 * not sent): the sender target's, in its catalogue; the api target's map gives them that reason.
 */
export const DELIVERY_RULES: readonly ContractRuleId[] = [
  'management#signature-scheme-headers',
  'updateWebhookEndpoint#scheme-headers',
  'updateWebhookEndpoint#url-edit-disables-pending',
  'updateWebhookEndpoint#disabling-disables-pending',
  'rotateWebhookSecret#rotation-disables-pending',
  'recoverDeliveries#window-once-per-request',
  'recoverDeliveries#paced',
  'rotateCallbackSecret#pending-callbacks-new-secret',
  'settleSandboxPayout#callback-every-outcome',
  // Several endpoints per environment (issue 68).
  'management#fan-out-per-endpoint',
  'management#fan-out-own-secret',
  'management#disabled-beside-active',
  'management#version-per-endpoint',
  'createWebhookEndpoint#event-types-default-every',
  'updateWebhookEndpoint#event-types-disables-pending',
  'sendTestWebhook#own-endpoint',
  'recoverDeliveries#per-endpoint',
  // Back-pressure and the rate cap (issue 69).
  'webhooks#retry-after',
  'webhooks#retry-after-endpoint',
  'management#max-per-second',
  // Endpoint health (issue 69).
  'management#disable-on-gone',
  'management#disable-after-failing',
  'management#disabled-stays-disabled',
  'management#operational-not-to-subject',
  'management#operational-disabled-gone',
  'management#operational-explicit',
];

/** The contract's rules `select` takes, as catalogue entries, each with its reason when it has one. */
export function contractCatalogue(select: (rule: (typeof CONTRACT_RULES)[number]) => boolean, reasons: NoCheckReasons): CatalogueEntry<ContractRuleId>[] {
  return CONTRACT_RULES.filter(select).map((r) => {
    const why = reasons(r);
    return { id: r.id, document: documentFile(r.document), rule: r.rule, ...('operation' in r ? { operation: r.operation } : {}), ...(why ? { unobservable: why } : {}) };
  });
}

export { CONTRACT_RULES };
