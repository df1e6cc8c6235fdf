// The rules a webhook sender must follow, quoted from the interface document and the AsyncAPI
// document, so a failure names the rule in the contract's own words.
import { ASYNCAPI_FILE } from '../core/asyncapi.ts';
import { INTERFACE, MANAGEMENT_API, PRODUCT, entry } from '../core/coverage.ts';
import { ruleBook, type RuleOf } from '../core/define.ts';
import { DELIVERY_RULES, contractCatalogue, type NoCheckReasons } from '../core/contract-rules.ts';

// Every delivery rule of the API documents has a check of this target (issue 67 judged the last
// ones), but these, each with why.
const NO_CHECK: Readonly<Record<string, string>> = {
  'management#max-per-second':
    'a rate held over 30 s needs a backlog of thousands of deliveries, past what a certification run costs; scripts/bench/rate-cap.ts measures it on the bundled server (two PostgreSQL instances)',
  'management#disable-after-failing':
    'needs days of failures: a target has no documented way to shorten WEBHOOK_DISABLE_AFTER; the bundled server is judged under a fake clock (server/domain/endpoints/health.test.ts)',
};
const senderNoCheck: NoCheckReasons = (r) => NO_CHECK[r.id];

/** The rules in the sender target's scope, for the coverage summary; `covers` names these ids. */
export const SENDER_CATALOGUE = [
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
  // The rules of the API documents that only deliveries show.
  ...contractCatalogue((r) => DELIVERY_RULES.includes(r.id), senderNoCheck),
] as const;

export const SENDER = ruleBook('sender', SENDER_CATALOGUE);
/** A rule of the sender target: its `covers` names entries of SENDER_CATALOGUE only. */
export type SenderRule = RuleOf<typeof SENDER>;

export const HEADERS_RULE: SenderRule = {
  covers: ['interface#headers', 'interface#signatures-1'],
  source: `${INTERFACE} § Request headers on each webhook delivery; ${ASYNCAPI_FILE}#/components/schemas/WebhookHeaders`,
  quote: 'Content-Type: application/json. Service-Event-Id: equals the id of the JSON body. Service-Signature: t=<Unix seconds>,v1=<hex HMAC>.',
};

export const SIGNATURE_RULE: SenderRule = {
  covers: ['interface#signatures-1', 'interface#signatures-2'],
  source: `${INTERFACE} § Webhook signatures, verification rules 1 and 2`,
  quote:
    "The header Service-Signature has the form t=<Unix seconds>,v1=<hex HMAC>. The HMAC is HMAC-SHA256, keyed with the endpoint's signing secret, over the string <t>.<raw body>: the timestamp, a period, then the exact raw request bytes.",
};

export const CALLBACK_SIGNATURE_RULE: SenderRule = {
  covers: ['product#callback', 'interface#tx-2'],
  source: `${ASYNCAPI_FILE}#/info/description (Payout-completed callback)`,
  quote: "It is signed with the tenant environment's callback secret ... in the same Service-Signature header with the same algorithm.",
};

export const PAYLOAD_RULE: SenderRule = {
  covers: ['interface#versioning-1'],
  source: `${ASYNCAPI_FILE}#/components/messages`,
  quote: 'The body is the JSON event envelope (or the payout-completed notification), valid against the payload schema of its message.',
};

export const TEST_WEBHOOK_RULE: SenderRule = {
  covers: ['interface#events-test'],
  source: `${INTERFACE} § Webhook data of webhook.test`,
  quote: 'The event has no order. data.environment identifies the connection used for the test.',
};

export const RETRY_RULE: SenderRule = {
  covers: ['interface#delivery-2', 'interface#delivery-3'],
  source: `${INTERFACE} § Delivery rules, rules 1 and 2; ${ASYNCAPI_FILE}#/info/description (Request headers)`,
  quote:
    'A non-2xx response ... counts as unsuccessful. Unsuccessful deliveries are retried with backoff, up to ten send attempts. The event id is stable across every attempt and every manual retry; t is fresh for every attempt.',
};

export const FRESH_T_RULE: SenderRule = {
  covers: ['interface#signatures-6'],
  source: `${INTERFACE} § Webhook signatures, verification rule 6`,
  quote: 'The signature timestamp describes the send attempt; createdAt describes the event. A retry hours later carries a fresh t and the original createdAt.',
};

export const REDIRECT_RULE: SenderRule = {
  covers: ['interface#delivery-1'],
  source: `${INTERFACE} § Delivery rules, rule 1; § Webhook configuration, rule 5`,
  quote: 'A non-2xx response, a redirect, a network failure or a timeout counts as unsuccessful. Redirects are not followed.',
};

export const TIMEOUT_RULE: SenderRule = {
  covers: ['interface#delivery-1', 'interface#limits-timeout'],
  source: `${INTERFACE} § Delivery rules, rule 1; § Limits`,
  quote: 'The request timeout is 10 seconds. ... Webhook request timeout | 10 seconds | each delivery attempt',
};

export const TEN_ATTEMPTS_RULE: SenderRule = {
  covers: ['interface#limits-attempts'],
  source: `${INTERFACE} § Limits; § Webhook delivery states`,
  quote: 'Send attempts | up to 10 per cycle. pending | tenth attempt fails | ten attempts without 2xx | failed',
};

export const DISABLED_RULE: SenderRule = {
  covers: ['interface#delivery-6'],
  source: `${INTERFACE} § Webhook delivery states; § What the service does, rule 5`,
  quote: 'Without an active endpoint, orders are still created, but no delivery is prepared. (new) | event prepared | an active endpoint exists | pending | if no active endpoint exists, no delivery is created',
};

export const CONFIGURE_RULE: SenderRule = {
  source: 'management.openapi.yaml#/paths/~1v2~1webhooks~1endpoints/post',
  quote: 'The signing secret is shown once after creation. When no secret is available to copy for an existing endpoint, Rotate secret issues a new one.',
};

export const VERSION_RULE: SenderRule = {
  source: `${INTERFACE} § Versioning, rule 2; § Delivery rules, rule 8; § Webhook delivery states`,
  covers: ['interface#versioning-2', 'interface#delivery-8', 'updateWebhookEndpoint#url-edit-disables-pending'],
  quote:
    'Editing the URL, rotating the secret or disabling the endpoint changes its version; pending deliveries of an older version become disabled instead of being sent to the new destination. Old deliveries are never sent to the replacement endpoint.',
};

export const MANUAL_RETRY_RULE: SenderRule = {
  source: `${INTERFACE} § Versioning, rule 3; § Webhook delivery states (failed → pending)`,
  covers: ['interface#versioning-3'],
  quote: 'A retried failed delivery carries the original event id and payload. Retry webhook: original event id and payload sent to the current endpoint; new cycle of up to ten attempts.',
};

export const SURPLUS_RULE: SenderRule = {
  source: `${INTERFACE} § Delivery rules, rule 7; § Order and payment states (paid → paid)`,
  covers: ['interface#delivery-7'],
  quote: 'Additional surplus after an already-paid state can update the order without another webhook. paid | additional surplus received | already paid | paid (order can update) | no further webhook is sent',
};

export const ROTATION_RULE: SenderRule = {
  source: `${INTERFACE} § Webhook signatures, verification rule 8; management.openapi.yaml#/paths/~1v2~1webhooks~1endpoints~1{endpointId}~1rotate-secret/post`,
  covers: ['interface#signatures-8'],
  quote:
    'An already in-flight request may still carry a signature made with the previous secret after rotation. The previous secret stops signing new attempts at once.',
};

export const CALLBACK_ROTATION_RULE: SenderRule = {
  source: 'management.openapi.yaml#/paths/~1v2~1webhooks~1callback-secret~1rotate/post',
  covers: ['rotateCallbackSecret#pending-callbacks-new-secret', 'interface#signatures-8'],
  quote:
    'The previous secret stops signing new attempts at once; pending callbacks are not disabled, their next attempts are signed with the new secret. A request already in flight may still carry a signature made with the previous secret.',
};

/** "Webhook delivery states" and "Webhook receiver": any 2xx delivers (sender/success.ts). */
export const RETRY_AFTER_RULE: SenderRule = {
  covers: ['webhooks#retry-after'],
  source: `${ASYNCAPI_FILE}#/info/description (Delivery, back-pressure)`,
  quote: "A 429 or 503 answer with Retry-After makes that delivery's next attempt no sooner than it says, up to one hour; a shortened retry schedule never shortens it.",
};

export const RETRY_AFTER_ENDPOINT_RULE: SenderRule = {
  covers: ['webhooks#retry-after-endpoint'],
  source: `${ASYNCAPI_FILE}#/info/description (Delivery, back-pressure)`,
  quote: 'Until that Retry-After has passed, no other attempt goes to the same endpoint, from any instance of the service.',
};

export const ANY_2XX_RULE: SenderRule = {
  source: `${INTERFACE} § Webhook delivery states (pending → delivered); § Webhook receiver (served by the merchant)`,
  covers: ['interface#delivery-1'],
  quote: 'pending | endpoint returns 2xx | any attempt | delivered. delivered means only that the endpoint returned 2xx. The receiver answers any 2xx status only after durably accepting the event.',
};

export const RECOVER_RULE: SenderRule = {
  source: 'management.openapi.yaml#/paths/~1v2~1webhooks~1endpoints~1{endpointId}~1recover/post',
  covers: ['recoverDeliveries#window-once-per-request', 'interface#versioning-3'],
  quote:
    'Sends again, in one step, the order-event deliveries of this endpoint (any of its versions) created in [since, until): the failed ones, or the failed and delivered ones (all). Each goes exactly as a manual retry does: the original event id and payload, to the endpoint\'s current URL, version and secret, in a new cycle of up to ten attempts. ... each matching delivery is sent once per request.',
};

export const SCHEME_RULE: SenderRule = {
  source: 'management.openapi.yaml#/info/description (signatureScheme); spec/README.md § Signature scheme, per endpoint',
  covers: ['management#signature-scheme-headers'],
  quote:
    'Each endpoint signs in its own signatureScheme: the Service-Signature scheme (the default), standard-webhooks (the webhook-id, webhook-timestamp and webhook-signature headers of Standard Webhooks v1.0.0), or both header sets at once. ... both header sets on every attempt; the scheme is read at each attempt, as the secret is.',
};
