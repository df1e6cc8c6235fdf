// The rules the api target enforces, quoted from the contract (the interface document, the
// product decisions written into spec/, and the OpenAPI documents), so a failure names the rule
// in the contract's own words.
import type { SpecRule } from '../core/check.ts';

const INTERFACE = 'payments-service-interface.md';

export const AUTH_RULE: SpecRule = {
  covers: ['interface#auth-key-hash'],
  source: 'transactions.openapi.yaml#/info/description (Authentication)',
  quote:
    'Every request carries two headers: x-api-key, the API client\'s public identifier, and x-api-hash, its secret. Missing or wrong credentials answer 401.',
};

export const MEMBER_AUTH_RULE: SpecRule = {
  covers: ['interface#auth-key-hash'],
  source: 'management.openapi.yaml#/info/description (Authentication and roles)',
  quote: 'Either credential is accepted on every operation: a developer-portal member token, Authorization: Bearer <token> ... or an API key (x-api-key and x-api-hash) with the webhooks_manage permission. Missing or wrong credentials answer 401.',
};

export const TENANT_HEADER_RULE: SpecRule = {
  covers: ['product#tenant-mismatch'],
  source: 'transactions.openapi.yaml#/info/description (Tenancy)',
  quote: 'GET /transactions requires the header x-tenant-id; every other operation accepts it optionally. When present it must be the tenant of the key, otherwise the answer is 403 (tenant-mismatch).',
};

export const VALIDATION_RULE: SpecRule = {
  covers: ['product#validation'],
  source: 'spec/README.md (Conventions) and common/problem-types.yaml#/validation-failed',
  quote:
    'Request bodies and response objects are closed (additionalProperties: false): unknown request fields are a 400. validation-failed (400): a field is missing or invalid; `errors` lists each one with its JSON pointer.',
};

export const DECIMAL_RULE: SpecRule = {
  covers: ['product#amounts'],
  source: 'common/schemas.yaml#/Amount (x-decimal)',
  quote: 'Greater than zero, at most 8 decimal places and at most 15 significant digits, so that the value is exact in every JSON parser.',
};

export const PROBLEM_RULE: SpecRule = {
  source: 'common/schemas.yaml#/Problem',
  quote: 'Every error body is application/problem+json (RFC 9457): type (a stable URI), title, status, detail.',
};

export const NO_5XX_RULE: SpecRule = {
  source: 'spec/README.md (Conventions)',
  quote: 'Every operation has ... every error response it can produce (including 401, 413/415 for JSON bodies, 429 and 500). A malformed request is a client error (4xx), never an internal one.',
};

export const STATUS_RULE: SpecRule = {
  covers: ['product#status-codes'],
  source: 'PRODUCT.md § Errors',
  quote: 'Creations answer 201, reads and state changes 200.',
};

export const DUPLICATE_THIRD_PARTY_RULE: SpecRule = {
  source: `${INTERFACE} § Errors; transactions.openapi.yaml#/paths/~1transactions~1payout/post`,
  quote: 'thirdPartyId is unique per tenant environment among payouts. A repeat answers 409 (duplicate-third-party-id) with existingTransactionId, whatever the rest of the body, and creates nothing.',
};

export const STAKING_DEFAULT_RULE: SpecRule = {
  covers: ['interface#tx-3'],
  source: `${INTERFACE} § Endpoints, Transactions API rule 3`,
  quote: 'When durationInMonths is omitted on a staking payout, 3 months applies.',
};

export const PAYOUT_SETTLES_RULE: SpecRule = {
  covers: ['interface#tx-1', 'product#payout-settles'],
  source: 'transactions.openapi.yaml#/paths/~1transactions~1payout/post',
  quote: 'The payout creates a locked/pending credit for the user: the transaction has the status pending until the funds are confirmed. The payout later settles as completed (notification status success) or cancelled.',
};

export const REFUND_RULE: SpecRule = {
  covers: ['interface#tx-5', 'product#refund'],
  source: `${INTERFACE} § Endpoints, Transactions API rule 5; transactions.openapi.yaml#/paths/~1transactions~1refund/post`,
  quote: 'The refund operation applies to payments in status pending_confirmation ... any other type or status (already refunded, confirmed, a payout...) answers 409 (not-refundable). On success the payment\'s status becomes refunded.',
};

export const CANCELLED_ORDER_RULE: SpecRule = {
  covers: ['interface#errors-cancelled-order', 'product#orders-404'],
  source: `${INTERFACE} § Order lookup`,
  quote: 'A cancelled order returns 404 (its payment history remains available for reconciliation).',
};

export const ISOLATION_RULE: SpecRule = {
  covers: ['product#isolation'],
  source: 'PRODUCT.md § Credentials and tenancy',
  quote: 'API keys, wallets, webhook endpoints, orders and transactions belong to one tenant environment. Nothing of one tenant environment is ever visible to another.',
};

export const SEARCH_PARAMETER_RULE: SpecRule = {
  covers: ['interface#errors-search-parameter'],
  source: `${INTERFACE} § Errors`,
  quote: 'GET /transactions | neither orderNumber nor txHash supplied | error response: either orderNumber or txHash is required',
};

export const NOT_IMPLEMENTED_NOTE =
  'a documented operation answered as if it did not exist (404 route-not-found, 405, 501 or a 404 that is not one of the contract\'s problems)';

export const JSON_BODY_RULE: SpecRule = {
  covers: ['product#json-body'],
  source: `${INTERFACE} § Endpoints (Transactions API); PRODUCT.md § Errors`,
  quote: 'Request bodies are JSON (Content-Type: application/json). 400 malformed or invalid input, 413 body too large, 415 not JSON.',
};

export const PERMISSION_RULE: SpecRule = {
  covers: ['product#permissions'],
  source: `${INTERFACE} § Errors (GET /transactions/users: permission denied); PRODUCT.md § Credentials and tenancy`,
  quote: 'A key has permissions (payouts, staking, transactions_read, refunds, orders_read, orders_write, webhooks_manage). A missing permission: 403 ("permission denied" in the seed).',
};

export const TENANT_HEADER_REQUIRED_RULE: SpecRule = {
  covers: ['interface#auth-tenant-header'],
  source: `${INTERFACE} § Authentication (x-tenant-id | GET /transactions); PRODUCT.md § Credentials and tenancy`,
  quote: 'x-tenant-id | GET /transactions | The tenant id. GET /transactions requires x-tenant-id; a value other than the key\'s tenant: 403.',
};

export const INSUFFICIENT_FUNDS_RULE: SpecRule = {
  covers: ['interface#tx-1', 'product#insufficient-funds'],
  source: `${INTERFACE} § Endpoints, Transactions API rule 1; PRODUCT.md § Transactions`,
  quote: 'A payout deducts its amount from the tenant environment\'s distribution wallet at creation (422 insufficient-funds when the wallet cannot cover it).',
};

export const REFUND_ACCOUNT_RULE: SpecRule = {
  covers: ['product#refund'],
  source: 'PRODUCT.md § Transactions (Refund)',
  quote: 'Refund: txId must be a payment in pending_confirmation of the tenant (404 unknown, 409 any other state); email names a service account (422 when none has it).',
};

export const REVOKE_RULE: SpecRule = {
  covers: ['product#revoke'],
  source: 'PRODUCT.md § Transactions (Staking); transactions.openapi.yaml#/paths/~1transactions~1staking~1payout~1revoke/post',
  quote: 'Revoke: 404 for an unknown transaction of the tenant, 409 for one that is not an active staking payout.',
};

export const NOT_FOUND_RULE: SpecRule = {
  covers: ['product#search', 'product#orders-404'],
  source: 'PRODUCT.md § Transactions and § Orders (v2)',
  quote: 'GET /transactions: one record (the most recent when several match), or 404. GET /v2/orders/:orderId: 404 when unknown or cancelled.',
};

export const DESTINATION_RULE: SpecRule = {
  covers: ['product#destinations'],
  source: `${INTERFACE} § Webhook configuration rule 5; PRODUCT.md § Webhooks (destination rules, notifyUrl)`,
  quote: 'URL rules: HTTPS; resolves to a public IPv4 address. Unsupported: localhost, private addresses, IPv6-only destinations, custom ports, credentials in the URL, URL fragments. notifyUrl follows the destination rules (400 when it breaks one).',
};

export const ENDPOINT_EXISTS_RULE: SpecRule = {
  covers: ['product#one-endpoint'],
  source: `${INTERFACE} § Resources (Webhook configuration); PRODUCT.md § Paths`,
  quote: 'Each configuration has exactly one destination URL. POST /v2/webhooks/endpoints (body {url}; 409 while the environment has an active one).',
};

export const STAKING_ASSET_RULE: SpecRule = {
  source: `${INTERFACE} § Endpoints, Transactions API rule 4; PRODUCT.md § Transactions (Staking)`,
  covers: ['interface#tx-4'],
  quote: 'Staking asset supported: KRU. asset must be KRU (400 otherwise).',
};

export const PAYMENT_AMOUNT_RULE: SpecRule = {
  source: 'common/transactions.yaml#/Transaction; common/orders.yaml#/AssetId (x-asset-decimals)',
  quote:
    '`amount` has one meaning everywhere: the amount in the asset\'s units, never base units. A payment of an order carries `amount` when the order\'s asset has known decimals and amountBaseUnits / 10^decimals fits Amount; otherwise `amount` is absent and amountBaseUnits is the only amount: it is never rounded.',
};

const ORDERS_RETRIES = 'orders.openapi.yaml#/paths/~1v2~1orders/post (Retries)';

export const ORDER_IDEMPOTENCY_RULE: SpecRule = {
  covers: ['orders#idempotency-replay'],
  source: ORDERS_RETRIES,
  quote:
    'A later request with the same Idempotency-Key and the same body creates nothing and answers the first answer again (201, same Location), with Idempotent-Replayed: true. The same key with another body is refused with 422 idempotency-key-reused.',
};

export const USER_PAGING_RULE: SpecRule = {
  source: 'transactions.openapi.yaml#/paths/~1transactions~1users/get (Paging)',
  quote:
    'When older records remain, the answer carries a Next-Cursor header; pass its value as cursor for the next, older page; the last page has no Next-Cursor. A cursor that was not issued for this user\'s list is a 400 validation-failed.',
};

export const ORDER_IDEMPOTENCY_JSON_RULE: SpecRule = {
  covers: ['orders#idempotency-json'],
  source: ORDERS_RETRIES,
  quote:
    'A later request with the same key and the same body (compared as JSON: key order and white space do not matter) creates nothing and answers the first answer again (201, the order as it was created, same Location), with Idempotent-Replayed: true.',
};

export const ORDER_WITHOUT_KEY_RULE: SpecRule = {
  covers: ['orders#no-key'],
  source: ORDERS_RETRIES,
  quote: 'Without the header every request creates an order.',
};

export const MEDIA_TYPE_RULE: SpecRule = {
  covers: ['product#json-body'],
  source: 'common/problem-types.yaml#/unsupported-media-type; RFC 9110 § 8.3.1 (Media Type)',
  quote: 'Request bodies must be application/json. The type and subtype tokens are case-insensitive; parameters (charset=utf-8) may follow.',
};
