// The rules the api target enforces, quoted from the contract (the interface document, the
// product decisions written into spec/, and the OpenAPI documents), so a failure names the rule
// in the contract's own words.
import { INTERFACE, MANAGEMENT_API, ORDERS_API, PRODUCT, entry } from '../core/coverage.ts';
import { ruleBook, type RuleOf } from '../core/define.ts';
import { answerRules, contractCatalogue, documentFile, documentRule } from '../core/contract-rules.ts';
import { apiNoCheck } from './no-check.ts';

/** The rules in the api target's scope, for the coverage summary; `covers` names these ids. */
export const API_CATALOGUE = [
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
  entry('product#outcome-unknown', PRODUCT, 'Errors: after 504 outcome-unknown the same request again (same Idempotency-Key or thirdPartyId) settles it: the stored write replayed, one record'),
  entry('product#store-unavailable', PRODUCT, 'Errors: 503 store-unavailable wrote nothing; retrying is safe'),
  // Every rule of the four OpenAPI documents (x-rules, documented statuses and problem types).
  ...contractCatalogue((r) => r.document !== 'webhooks', apiNoCheck),
] as const;

export const API = ruleBook('api', API_CATALOGUE);

/**
 * The derived rules an answer of `operationId` judges: its documented status and, for a
 * problem, its documented type (judgeProblem also holds the problem's `status` to the HTTP status).
 */
export function answerRule(operationId: string, status: number, slug?: string): ApiRule {
  return { source: `the documented responses of ${operationId}`, quote: `${status}${slug ? ` ${slug}` : ''}`, covers: answerRules(operationId, status, slug) };
}
/** A rule the `info` of `document` writes for all its operations (none when that document does not write it). */
export function infoRule(document: string, slug: string, quote: string): ApiRule {
  return { source: `${documentFile(document)}#/info/description`, quote, covers: documentRule(document, slug) };
}
/** A rule of the api target: its `covers` names entries of API_CATALOGUE only. */
export type ApiRule = RuleOf<typeof API>;

export const AUTH_RULE: ApiRule = {
  covers: ['interface#auth-key-hash'],
  source: 'transactions.openapi.yaml#/info/description (Authentication)',
  quote:
    'Every request carries two headers: x-api-key, the API client\'s public identifier, and x-api-hash, its secret. Missing or wrong credentials answer 401.',
};

export const MEMBER_AUTH_RULE: ApiRule = {
  covers: ['interface#auth-key-hash'],
  source: 'management.openapi.yaml#/info/description (Authentication and roles)',
  quote: 'Either credential is accepted on every operation: a developer-portal member token, Authorization: Bearer <token> ... or an API key (x-api-key and x-api-hash) with the webhooks_manage permission. Missing or wrong credentials answer 401.',
};

export const TENANT_HEADER_RULE: ApiRule = {
  covers: ['product#tenant-mismatch'],
  source: 'transactions.openapi.yaml#/info/description (Tenancy)',
  quote: 'GET /transactions requires the header x-tenant-id; every other operation accepts it optionally. When present it must be the tenant of the key, otherwise the answer is 403 (tenant-mismatch).',
};

export const VALIDATION_RULE: ApiRule = {
  covers: ['product#validation'],
  source: 'spec/README.md (Conventions) and common/problem-types.yaml#/validation-failed',
  quote:
    'Request bodies and response objects are closed (additionalProperties: false): unknown request fields are a 400. validation-failed (400): a field is missing or invalid; `errors` lists each one with its JSON pointer.',
};

export const DECIMAL_RULE: ApiRule = {
  covers: ['product#amounts'],
  source: 'common/schemas.yaml#/Amount (x-decimal)',
  quote: 'Greater than zero, at most 8 decimal places and at most 15 significant digits, so that the value is exact in every JSON parser.',
};

export const PROBLEM_RULE: ApiRule = {
  source: 'common/schemas.yaml#/Problem',
  quote: 'Every error body is application/problem+json (RFC 9457): type (a stable URI), title, status, detail.',
};

export const NO_5XX_RULE: ApiRule = {
  source: 'spec/README.md (Conventions)',
  quote: 'Every operation has ... every error response it can produce (including 401, 413/415 for JSON bodies, 429 and 500). A malformed request is a client error (4xx), never an internal one.',
};

export const STATUS_RULE: ApiRule = {
  covers: ['product#status-codes'],
  source: 'PRODUCT.md § Errors',
  quote: 'Creations answer 201, reads and state changes 200.',
};

export const DUPLICATE_THIRD_PARTY_RULE: ApiRule = {
  source: `${INTERFACE} § Errors; transactions.openapi.yaml#/paths/~1transactions~1payout/post`,
  quote: 'thirdPartyId is unique per tenant environment among payouts. A repeat answers 409 (duplicate-third-party-id) with existingTransactionId, whatever the rest of the body, and creates nothing.',
};

export const STAKING_DEFAULT_RULE: ApiRule = {
  covers: ['interface#tx-3', 'createStakingPayout#default-duration', 'createStakingPayout#active-at-once'],
  source: `${INTERFACE} § Endpoints, Transactions API rule 3`,
  quote: 'When durationInMonths is omitted on a staking payout, 3 months applies.',
};

export const PAYOUT_SETTLES_RULE: ApiRule = {
  covers: ['interface#tx-1', 'product#payout-settles', 'createPayout#pending-until-settled', 'settleSandboxPayout#outcomes'],
  source: 'transactions.openapi.yaml#/paths/~1transactions~1payout/post',
  quote: 'The payout creates a locked/pending credit for the user: the transaction has the status pending until the funds are confirmed. The payout later settles as completed (notification status success) or cancelled.',
};

export const REFUND_RULE: ApiRule = {
  covers: ['interface#tx-5', 'product#refund', 'refundPayment#pending-confirmation-only'],
  source: `${INTERFACE} § Endpoints, Transactions API rule 5; transactions.openapi.yaml#/paths/~1transactions~1refund/post`,
  quote: 'The refund operation applies to payments in status pending_confirmation ... any other type or status (already refunded, confirmed, a payout...) answers 409 (not-refundable). On success the payment\'s status becomes refunded.',
};

export const CANCELLED_ORDER_RULE: ApiRule = {
  covers: ['interface#errors-cancelled-order', 'product#orders-404', 'getOrder#cancelled-404', 'listOrderPayments#after-cancel'],
  source: `${INTERFACE} § Order lookup`,
  quote: 'A cancelled order returns 404 (its payment history remains available for reconciliation).',
};

export const ISOLATION_RULE: ApiRule = {
  covers: ['product#isolation'],
  source: 'PRODUCT.md § Credentials and tenancy',
  quote: 'API keys, wallets, webhook endpoints, orders and transactions belong to one tenant environment. Nothing of one tenant environment is ever visible to another.',
};

export const SEARCH_PARAMETER_RULE: ApiRule = {
  covers: ['interface#errors-search-parameter'],
  source: `${INTERFACE} § Errors`,
  quote: 'GET /transactions | neither orderNumber nor txHash supplied | error response: either orderNumber or txHash is required',
};

export const NOT_IMPLEMENTED_NOTE =
  'a documented operation answered as if it did not exist (404 route-not-found, 405, 501 or a 404 that is not one of the contract\'s problems)';

export const JSON_BODY_RULE: ApiRule = {
  covers: ['product#json-body'],
  source: `${INTERFACE} § Endpoints (Transactions API); PRODUCT.md § Errors`,
  quote: 'Request bodies are JSON (Content-Type: application/json). 400 malformed or invalid input, 413 body too large, 415 not JSON.',
};

export const PERMISSION_RULE: ApiRule = {
  covers: ['product#permissions'],
  source: `${INTERFACE} § Errors (GET /transactions/users: permission denied); PRODUCT.md § Credentials and tenancy`,
  quote: 'A key has permissions (payouts, staking, transactions_read, refunds, orders_read, orders_write, webhooks_manage). A missing permission: 403 ("permission denied" in the seed).',
};

export const TENANT_HEADER_REQUIRED_RULE: ApiRule = {
  covers: ['interface#auth-tenant-header', 'searchTransaction#tenant-header-required'],
  source: `${INTERFACE} § Authentication (x-tenant-id | GET /transactions); PRODUCT.md § Credentials and tenancy`,
  quote: 'x-tenant-id | GET /transactions | The tenant id. GET /transactions requires x-tenant-id; a value other than the key\'s tenant: 403.',
};

export const INSUFFICIENT_FUNDS_RULE: ApiRule = {
  covers: ['interface#tx-1', 'product#insufficient-funds', 'createPayout#insufficient-funds-nothing-written'],
  source: `${INTERFACE} § Endpoints, Transactions API rule 1; PRODUCT.md § Transactions`,
  quote: 'A payout deducts its amount from the tenant environment\'s distribution wallet at creation (422 insufficient-funds when the wallet cannot cover it).',
};

export const REFUND_ACCOUNT_RULE: ApiRule = {
  covers: ['product#refund'],
  source: 'PRODUCT.md § Transactions (Refund)',
  quote: 'Refund: txId must be a payment in pending_confirmation of the tenant (404 unknown, 409 any other state); email names a service account (422 when none has it).',
};

export const REVOKE_RULE: ApiRule = {
  covers: ['product#revoke'],
  source: 'PRODUCT.md § Transactions (Staking); transactions.openapi.yaml#/paths/~1transactions~1staking~1payout~1revoke/post',
  quote: 'Revoke: 404 for an unknown transaction of the tenant, 409 for one that is not an active staking payout.',
};

/** The 409 of a second revoke or a revoke of a payout: only the check that provokes it names the id. */
export const REVOKE_NOT_ACTIVE_RULE: ApiRule = {
  covers: ['product#revoke', 'revokeStakingPayout#not-active-409'],
  source: 'transactions.openapi.yaml#/paths/~1transactions~1staking~1payout~1revoke/post',
  quote: 'A transaction that is not an active staking payout (already revoked, or a payout, payment or refund) answers 409 (not-revocable); a second revoke of the same staking payout is therefore a 409.',
};

export const REFUND_ACCOUNT_UNCHANGED_RULE: ApiRule = {
  covers: ['product#refund', 'refundPayment#unknown-account-unchanged'],
  source: 'transactions.openapi.yaml#/paths/~1transactions~1refund/post',
  quote: 'email must belong to a service account; otherwise 422 (unknown-refund-account). Nothing changes on an error.',
};

export const SEARCH_NO_MATCH_RULE: ApiRule = {
  covers: ['product#search', 'searchTransaction#no-match-404'],
  source: 'transactions.openapi.yaml#/paths/~1transactions/get',
  quote: 'No match answers 404.',
};

export const NOT_FOUND_RULE: ApiRule = {
  covers: ['product#search', 'product#orders-404'],
  source: 'PRODUCT.md § Transactions and § Orders (v2)',
  quote: 'GET /transactions: one record (the most recent when several match), or 404. GET /v2/orders/:orderId: 404 when unknown or cancelled.',
};

export const DESTINATION_RULE: ApiRule = {
  covers: ['product#destinations'],
  source: `${INTERFACE} § Webhook configuration rule 5; PRODUCT.md § Webhooks (destination rules, notifyUrl)`,
  quote: 'URL rules: HTTPS; resolves to a public IPv4 address. Unsupported: localhost, private addresses, IPv6-only destinations, custom ports, credentials in the URL, URL fragments. notifyUrl follows the destination rules (400 when it breaks one).',
};

export const ENDPOINT_EXISTS_RULE: ApiRule = {
  covers: ['product#one-endpoint', 'createWebhookEndpoint#unique-active-url'],
  source: `${INTERFACE} § Resources (Webhook configuration); PRODUCT.md § Webhooks (several endpoints, issue 68)`,
  quote: 'Each configuration has exactly one destination URL. Two active endpoints of one environment with the same URL are a 409 endpoint-exists.',
};

export const STAKING_ASSET_RULE: ApiRule = {
  source: `${INTERFACE} § Endpoints, Transactions API rule 4; PRODUCT.md § Transactions (Staking)`,
  covers: ['interface#tx-4'],
  quote: 'Staking asset supported: KRU. asset must be KRU (400 otherwise).',
};

/** An asset other than KRU: only the invalid case that sends one (not a missing or mistyped asset) judges it. */
export const STAKING_OTHER_ASSET_RULE: ApiRule = {
  covers: ['createStakingPayout#kru-only'],
  source: 'transactions.openapi.yaml#/paths/~1transactions~1staking~1payout/post',
  quote: 'The supported staking asset is KRU; any other asset is a 400 (validation-failed).',
};

export const PAYMENT_AMOUNT_RULE: ApiRule = {
  source: 'common/transactions.yaml#/Transaction; common/orders.yaml#/AssetId (x-asset-decimals)',
  quote:
    '`amount` has one meaning everywhere: the amount in the asset\'s units, never base units. A payment of an order carries `amount` when the order\'s asset has known decimals and amountBaseUnits / 10^decimals fits Amount; otherwise `amount` is absent and amountBaseUnits is the only amount: it is never rounded.',
};

const ORDERS_RETRIES = 'orders.openapi.yaml#/paths/~1v2~1orders/post (Retries)';

export const ORDER_IDEMPOTENCY_RULE: ApiRule = {
  covers: ['createOrder#idempotency-replay'],
  source: ORDERS_RETRIES,
  quote:
    'A later request with the same Idempotency-Key and the same body creates nothing and answers the first answer again (201, same Location), with Idempotent-Replayed: true. The same key with another body is refused with 422 idempotency-key-reused.',
};

export const USER_PAGING_RULE: ApiRule = {
  covers: ['listUserTransactions#foreign-cursor'],
  source: 'transactions.openapi.yaml#/paths/~1transactions~1users/get (Paging)',
  quote:
    'When older records remain, the answer carries a Next-Cursor header; pass its value as cursor for the next, older page; the last page has no Next-Cursor. A cursor that was not issued for this user\'s list is a 400 validation-failed.',
};

export const ORDER_IDEMPOTENCY_JSON_RULE: ApiRule = {
  covers: ['createOrder#idempotency-json'],
  source: ORDERS_RETRIES,
  quote:
    'A later request with the same key and the same body (compared as JSON: key order and white space do not matter) creates nothing and answers the first answer again (201, the order as it was created, same Location), with Idempotent-Replayed: true.',
};

export const ORDER_WITHOUT_KEY_RULE: ApiRule = {
  covers: ['createOrder#no-key-creates'],
  source: ORDERS_RETRIES,
  quote: 'Without the header every request creates an order.',
};

export const MEDIA_TYPE_RULE: ApiRule = {
  covers: ['product#json-body'],
  source: 'common/problem-types.yaml#/unsupported-media-type; RFC 9110 § 8.3.1 (Media Type)',
  quote: 'Request bodies must be application/json. The type and subtype tokens are case-insensitive; parameters (charset=utf-8) may follow.',
};

// ---- round four (api/strict.ts) ------------------------------------------------------------

export const LAST_PAGE_RULE: ApiRule = {
  covers: ['listUserTransactions#last-page-no-cursor'],
  source: 'transactions.openapi.yaml#/paths/~1transactions~1users/get (Paging)',
  quote: 'When older records remain, the answer carries a Next-Cursor header ... the last page has no Next-Cursor.',
};

export const PAGING_INSERTS_RULE: ApiRule = {
  covers: ['listUserTransactions#pages-stable-under-inserts'],
  source: 'transactions.openapi.yaml#/paths/~1transactions~1users/get (Paging)',
  quote: 'Pass its value as cursor ... for the next, older page; the last page has no Next-Cursor. Records created after the first page do not shift the pages.',
};

export const NEWEST_FIRST_RULE: ApiRule = {
  covers: ['listUserTransactions#newest-first'],
  source: 'transactions.openapi.yaml#/paths/~1transactions~1users/get',
  quote: 'Lists the transactions of a user in the tenant environment, newest first (by createdDate), at most limit of them.',
};

export const EVENTS_NEWEST_FIRST_RULE: ApiRule = {
  covers: ['listEvents#newest-first'],
  source: 'orders.openapi.yaml#/paths/~1v2~1events/get',
  quote: 'Lists every order event of the tenant environment, newest first',
};

export const EXACT_AMOUNT_RULE: ApiRule = {
  covers: ['product#amounts', 'transactions#exact-amounts'],
  source: 'transactions.openapi.yaml#/info/description (Money)',
  quote: 'The service stores each amount as the exact decimal that was sent, never rounds it through binary floating point, and answers it unchanged.',
};

export const AMOUNT_DIGITS_RULE: ApiRule = {
  covers: ['product#amounts', 'product#validation', 'transactions#amount-digits'],
  source: 'common/schemas.yaml#/Amount (x-decimal maxSignificantDigits 15)',
  quote: 'Greater than zero, at most 8 decimal places and at most 15 significant digits, so that the value is exact in every JSON parser (no binary rounding).',
};

export const IDEMPOTENCY_TENANT_RULE: ApiRule = {
  covers: ['createOrder#idempotency-tenant'],
  source: ORDERS_RETRIES,
  quote: 'The first request with a key creates the order ... Keys are scoped to the tenant environment and kept with the order.',
};

export const WRITE_ISOLATION_RULE: ApiRule = {
  covers: ['product#isolation'],
  source: 'orders.openapi.yaml#/info/description',
  quote: 'nothing of one tenant environment is ever visible to another: an order of another tenant environment answers 404, exactly like an unknown id.',
};

const ERRORS_DECISION = 'spec/README.md § Product decisions (503 store-unavailable, 504 outcome-unknown); common/problem-types.yaml';

export const LOST_COMMIT_RULE: ApiRule = {
  covers: ['product#outcome-unknown', 'injectSandboxWriteFault#outcome-unknown-stored'],
  source: ERRORS_DECISION,
  quote:
    'Send the same request again (the same Idempotency-Key for an order, the same thirdPartyId for a payout) to settle it: the replayed answer, or a 409 naming the existing transaction, says it was stored; a 201 says it was not, and stores it now.',
};

export const STORE_UNAVAILABLE_RULE: ApiRule = {
  covers: ['product#store-unavailable', 'injectSandboxWriteFault#store-unavailable-nothing-written'],
  source: ERRORS_DECISION,
  quote: '503 store-unavailable (with Retry-After) promises that nothing was written ... Retrying is always safe.',
};

export const RECOVER_WINDOW_RULE: ApiRule = {
  covers: ['recoverDeliveries#until-after-since'],
  source: 'management.openapi.yaml#/paths/~1v2~1webhooks~1endpoints~1{endpointId}~1recover/post',
  quote: 'until defaults to now and must be later than since. ... 400: Invalid input (validation-failed), for example an until that is not later than since. Nothing was changed.',
};

export const STREAM_OPENING_RULE: ApiRule = {
  covers: ['streamEvents#opening-position'],
  source: 'orders.openapi.yaml#/paths/~1v2~1events~1stream/get',
  quote:
    'The stream opens with a message that carries only an id (after the comment : connected): the position the stream starts after, a cursor like any other. It is the sent cursor when resuming, else the position of "now". A client that keeps it before handling anything can resume from it, so that an event recorded while it was away is not missed even when no event had come yet.',
};

// ---- round seven (api/list-rules.ts) -------------------------------------------------------

export const EVENTS_TYPE_FILTER_RULE: ApiRule = {
  covers: ['listEvents#type-filter'],
  source: 'orders.openapi.yaml#/paths/~1v2~1events/get (parameter type)',
  quote: 'type: Only events of this type. Omit it for every order and operational event.',
};

export const EVENTS_FOREIGN_CURSOR_RULE: ApiRule = {
  covers: ['listEvents#foreign-cursor'],
  source: 'orders.openapi.yaml#/paths/~1v2~1events/get',
  quote: 'Page with cursor: pass the nextCursor of the previous page ... A cursor that was not issued by this operation answers 400.',
};

export const ORDER_PAYMENTS_OLDEST_FIRST_RULE: ApiRule = {
  covers: ['listOrderPayments#oldest-first'],
  source: 'orders.openapi.yaml#/paths/~1v2~1orders~1{orderId}~1payments/get',
  quote: 'Answers the payment history of an order: every deposit, verified or not, oldest first.',
};

export const SEARCH_MOST_RECENT_RULE: ApiRule = {
  covers: ['product#search', 'searchTransaction#most-recent'],
  source: 'transactions.openapi.yaml#/paths/~1transactions/get',
  quote: 'When several transactions match (an order can receive several payments), the most recent one (by createdDate) is returned.',
};
