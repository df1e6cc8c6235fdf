// Which rules of which document a run covered. Each target names the rules in its scope (a
// catalogue entry per numbered rule or error row of the interface document and PRODUCT.md);
// each SpecRule a check enforces says which entries it covers (`covers`). After the run an
// entry is `covered` when a check covering it passed or failed, `not_reached` when every
// such check was skipped (the reasons say why, e.g. --skip-slow), and `no_check` when the
// suite has no check for it (the entry says why a black-box run cannot observe it).
import type { CheckResult, CoverageStatus, RuleCoverage } from './check.ts';

export interface CatalogueEntry {
  /** Stable id, e.g. `interface#signatures-4`. */
  id: string;
  /** The document: `payments-service-interface.md`, `PRODUCT.md`, or the OpenAPI document that alone writes the rule. */
  document: string;
  /** Where in it, e.g. `Webhook signatures, verification rule 4`. */
  rule: string;
  /** Why no check exists, for entries a black-box run cannot observe. */
  unobservable?: string;
}

export type { CoverageStatus, RuleCoverage };

const INTERFACE = 'payments-service-interface.md';
const PRODUCT = 'PRODUCT.md';
/** Rules written only in the OpenAPI documents (decisions of spec/, not of the seed). */
const ORDERS_API = 'orders.openapi.yaml';
const MANAGEMENT_API = 'management.openapi.yaml';

const entry = (id: string, document: string, rule: string, unobservable?: string): CatalogueEntry => ({ id, document, rule, ...(unobservable ? { unobservable } : {}) });
const numbered = (prefix: string, section: string, n: number): CatalogueEntry[] =>
  Array.from({ length: n }, (_, i) => entry(`interface#${prefix}-${i + 1}`, INTERFACE, `${section} ${i + 1}`));

/** Verification rules 1-8 (§ Webhook signatures). */
export const SIGNATURE_RULES = numbered('signatures', 'Webhook signatures, verification rule', 8);
/** Delivery rules 1-8 (§ Delivery rules). */
export const DELIVERY_RULES = numbered('delivery', 'Delivery rules, rule', 8);

const MERCHANT_SIDE = 'a duty of the merchant\'s business logic after verification (reading the order, pausing fulfilment, recovery); a black-box request cannot observe it';

export const RECEIVER_CATALOGUE: readonly CatalogueEntry[] = [
  ...SIGNATURE_RULES,
  entry('interface#delivery-1', INTERFACE, 'Delivery rules, rule 1 (only a 2xx accepts a delivery)'),
  entry('interface#delivery-3', INTERFACE, 'Delivery rules, rule 3 (handle duplicates by event id)'),
  entry('interface#delivery-4', INTERFACE, 'Delivery rules, rule 4 (read the latest order before fulfilment)', MERCHANT_SIDE),
  entry('interface#delivery-5', INTERFACE, 'Delivery rules, rule 5 (a review event stops automatic fulfilment)', MERCHANT_SIDE),
  entry('interface#receiver-2xx', INTERFACE, 'Webhook receiver: 2xx only after durably accepting the event'),
  entry('interface#errors-receiver-reject', INTERFACE, 'Errors: webhook receiver | signature invalid, or timestamp outside 300 seconds'),
];

export const SENDER_CATALOGUE: readonly CatalogueEntry[] = [
  entry('interface#headers', INTERFACE, 'Request headers on each webhook delivery'),
  entry('interface#signatures-1', INTERFACE, 'Webhook signatures, verification rule 1 (the header the sender writes)'),
  entry('interface#signatures-2', INTERFACE, 'Webhook signatures, verification rule 2 (the HMAC the sender computes)'),
  entry('interface#signatures-6', INTERFACE, 'Webhook signatures, verification rule 6 (t describes the attempt)'),
  entry('interface#signatures-8', INTERFACE, 'Webhook signatures, verification rule 8 (after a rotation only a request already in flight carries the previous secret)'),
  entry('interface#delivery-1', INTERFACE, 'Delivery rules, rule 1 (10 s timeout; non-2xx, redirect, timeout unsuccessful)'),
  entry('interface#delivery-2', INTERFACE, 'Delivery rules, rule 2 (retried with backoff, up to ten attempts)'),
  entry('interface#delivery-3', INTERFACE, 'Delivery rules, rule 3 (repeats keep the event id)'),
  entry('interface#delivery-6', INTERFACE, 'Delivery rules, rule 6 (no active endpoint, no delivery)'),
  entry('interface#delivery-7', INTERFACE, 'Delivery rules, rule 7 (a surplus after paid sends no webhook)'),
  entry('interface#delivery-8', INTERFACE, 'Delivery rules, rule 8 (a URL edit, rotation or disabling makes older pending deliveries disabled)'),
  entry('interface#versioning-1', INTERFACE, 'Versioning, rule 1 (events carry apiVersion v2)'),
  entry('interface#versioning-2', INTERFACE, 'Versioning, rule 2 (pending deliveries of an older version are not sent to the new destination)'),
  entry('interface#versioning-3', INTERFACE, 'Versioning, rule 3 (a retried failed delivery carries the original event id and payload)'),
  entry('interface#limits-timeout', INTERFACE, 'Limits: webhook request timeout, 10 seconds per attempt'),
  entry('interface#limits-attempts', INTERFACE, 'Limits: send attempts, up to 10 per cycle'),
  entry('interface#tx-2', INTERFACE, 'Transactions API rule 2 (notifyUrl is called when the payout completes)'),
  entry('interface#events-test', INTERFACE, 'Webhook data of webhook.test (data.environment)'),
  entry('product#callback', PRODUCT, 'Webhooks: payout-completed callbacks signed with the callback secret'),
  entry('management#callback-rotation', MANAGEMENT_API, 'POST /v2/webhooks/callback-secret/rotate: pending callbacks go on, their next attempts signed with the new secret'),
];

export const API_CATALOGUE: readonly CatalogueEntry[] = [
  entry('interface#auth-key-hash', INTERFACE, 'Authentication: x-api-key and x-api-hash on every operation'),
  entry('interface#auth-tenant-header', INTERFACE, 'Authentication: x-tenant-id required on GET /transactions'),
  entry('interface#tx-1', INTERFACE, 'Transactions API rule 1 (a payout is a pending credit deducted from the wallet)'),
  entry('interface#tx-2', INTERFACE, 'Transactions API rule 2 (notifyUrl is called when the payout completes)', 'a delivery: the sender target checks the payout-completed callback'),
  entry('interface#tx-3', INTERFACE, 'Transactions API rule 3 (durationInMonths defaults to 3)'),
  entry('interface#tx-4', INTERFACE, 'Transactions API rule 4 (staking asset KRU)'),
  entry('interface#tx-5', INTERFACE, 'Transactions API rule 5 (refunds apply to pending_confirmation)'),
  entry('interface#errors-payout-duplicate', INTERFACE, 'Errors: POST /transactions/payout | same third party id'),
  entry('interface#errors-staking-duplicate', INTERFACE, 'Errors: POST /transactions/staking/payout | same third party id'),
  entry('interface#errors-permission', INTERFACE, 'Errors: GET /transactions/users | permission denied'),
  entry('interface#errors-search-parameter', INTERFACE, 'Errors: GET /transactions | neither orderNumber nor txHash'),
  entry('interface#errors-internal', INTERFACE, 'Errors: every Transactions API operation | internal failure', 'needs an internal failure of the implementation, which a request cannot cause on purpose'),
  entry('interface#errors-cancelled-order', INTERFACE, 'Errors: GET /v2/orders/:orderId | cancelled order 404 (payments stay readable)'),
  entry('product#status-codes', PRODUCT, 'Errors: creations 201, reads 200; problem+json with a stable type'),
  entry('product#validation', PRODUCT, 'Errors: 400 malformed or invalid input (field by field)'),
  entry('product#json-body', PRODUCT, 'Errors: 413 body too large, 415 not JSON, 400 malformed JSON'),
  entry('product#permissions', PRODUCT, 'Credentials: a missing permission is 403'),
  entry('product#tenant-mismatch', PRODUCT, 'Credentials: x-tenant-id other than the key\'s tenant is 403'),
  entry('product#isolation', PRODUCT, 'Credentials: nothing of one tenant environment is visible to another'),
  entry('product#amounts', PRODUCT, 'Transactions: exact decimal amounts, at most 8 places, greater than zero'),
  entry('product#insufficient-funds', PRODUCT, 'Transactions: 422 insufficient-funds when the wallet cannot cover a payout'),
  entry('product#payout-settles', PRODUCT, 'Transactions: a payout is pending until completed or cancelled'),
  entry('product#revoke', PRODUCT, 'Transactions: revoke 404 unknown, 409 not an active staking payout'),
  entry('product#refund', PRODUCT, 'Transactions: refund 404 unknown, 409 other state, 422 unknown account'),
  entry('product#search', PRODUCT, 'Transactions: GET /transactions answers one record or 404'),
  entry('product#orders-404', PRODUCT, 'Orders: 404 when unknown or cancelled'),
  entry('product#destinations', PRODUCT, 'Webhooks: destination rules for endpoint URLs and notifyUrl (400 naming the rule)'),
  entry('product#one-endpoint', PRODUCT, 'Paths: 409 while the environment has an active endpoint'),
  entry('orders#idempotency-replay', ORDERS_API, 'POST /v2/orders, Retries: the same Idempotency-Key and body replays the first answer; another body is 422 idempotency-key-reused'),
  entry('orders#idempotency-json', ORDERS_API, 'POST /v2/orders, Retries: the same body is compared as JSON (key order and white space do not matter)'),
  entry('orders#no-key', ORDERS_API, 'POST /v2/orders, Retries: without an Idempotency-Key every request creates an order'),
];

/** Coverage of `catalogue` by the results; checks cover what their rules' `covers` name. */
export function coverage(catalogue: readonly CatalogueEntry[], results: readonly CheckResult[]): RuleCoverage[] {
  return catalogue.map((e) => {
    const mine = results.filter((r) => r.rules.some((rule) => rule.covers?.includes(e.id)));
    const ran = mine.filter((r) => r.status === 'passed' || r.status === 'failed');
    const base = { id: e.id, document: e.document, rule: e.rule, checks: mine.map((r) => r.id) };
    if (ran.length > 0) return { ...base, status: 'covered', reasons: [] };
    if (mine.length > 0) return { ...base, status: 'not_reached', reasons: [...new Set(mine.map((r) => `${r.id}: ${r.reason ?? r.status}`))] };
    return { ...base, status: 'no_check', reasons: [e.unobservable ?? 'no check of this suite covers it'] };
  });
}

/** The coverage block of the summary: counts per document, then every rule not covered with why. */
export function coverageLines(cov: readonly RuleCoverage[]): string[] {
  if (cov.length === 0) return [];
  const lines = ['rules covered by this run:'];
  for (const doc of [...new Set(cov.map((c) => c.document))]) {
    const of = cov.filter((c) => c.document === doc);
    const n = (s: CoverageStatus): number => of.filter((c) => c.status === s).length;
    lines.push(`  ${doc}: ${n('covered')} of ${of.length} covered, ${n('not_reached')} not reached, ${n('no_check')} without a check`);
    for (const c of of) lines.push(`    ${c.status === 'covered' ? 'covered    ' : c.status === 'not_reached' ? 'NOT REACHED' : 'no check   '} ${c.rule}${c.status === 'covered' ? ` (${c.checks.length} check${c.checks.length === 1 ? '' : 's'})` : `: ${c.reasons[0] ?? ''}${c.reasons.length > 1 ? ` (+${c.reasons.length - 1} more)` : ''}`}`);
  }
  return lines;
}
