// The rules a webhook sender must follow, quoted from the interface document and the AsyncAPI
// document, so a failure names the rule in the contract's own words.
import { ASYNCAPI_FILE } from '../core/asyncapi.ts';
import type { SpecRule } from '../core/check.ts';

const INTERFACE = 'payments-service-interface.md';

export const HEADERS_RULE: SpecRule = {
  covers: ['interface#headers', 'interface#signatures-1'],
  source: `${INTERFACE} § Request headers on each webhook delivery; ${ASYNCAPI_FILE}#/components/schemas/WebhookHeaders`,
  quote: 'Content-Type: application/json. Service-Event-Id: equals the id of the JSON body. Service-Signature: t=<Unix seconds>,v1=<hex HMAC>.',
};

export const SIGNATURE_RULE: SpecRule = {
  covers: ['interface#signatures-1', 'interface#signatures-2'],
  source: `${INTERFACE} § Webhook signatures, verification rules 1 and 2`,
  quote:
    "The header Service-Signature has the form t=<Unix seconds>,v1=<hex HMAC>. The HMAC is HMAC-SHA256, keyed with the endpoint's signing secret, over the string <t>.<raw body>: the timestamp, a period, then the exact raw request bytes.",
};

export const CALLBACK_SIGNATURE_RULE: SpecRule = {
  covers: ['product#callback', 'interface#tx-2'],
  source: `${ASYNCAPI_FILE}#/info/description (Payout-completed callback)`,
  quote: "It is signed with the tenant environment's callback secret ... in the same Service-Signature header with the same algorithm.",
};

export const PAYLOAD_RULE: SpecRule = {
  covers: ['interface#versioning-1'],
  source: `${ASYNCAPI_FILE}#/components/messages`,
  quote: 'The body is the JSON event envelope (or the payout-completed notification), valid against the payload schema of its message.',
};

export const TEST_WEBHOOK_RULE: SpecRule = {
  covers: ['interface#events-test'],
  source: `${INTERFACE} § Webhook data of webhook.test`,
  quote: 'The event has no order. data.environment identifies the connection used for the test.',
};

export const RETRY_RULE: SpecRule = {
  covers: ['interface#delivery-2', 'interface#delivery-3'],
  source: `${INTERFACE} § Delivery rules, rules 1 and 2; ${ASYNCAPI_FILE}#/info/description (Request headers)`,
  quote:
    'A non-2xx response ... counts as unsuccessful. Unsuccessful deliveries are retried with backoff, up to ten send attempts. The event id is stable across every attempt and every manual retry; t is fresh for every attempt.',
};

export const FRESH_T_RULE: SpecRule = {
  covers: ['interface#signatures-6'],
  source: `${INTERFACE} § Webhook signatures, verification rule 6`,
  quote: 'The signature timestamp describes the send attempt; createdAt describes the event. A retry hours later carries a fresh t and the original createdAt.',
};

export const REDIRECT_RULE: SpecRule = {
  covers: ['interface#delivery-1'],
  source: `${INTERFACE} § Delivery rules, rule 1; § Webhook configuration, rule 5`,
  quote: 'A non-2xx response, a redirect, a network failure or a timeout counts as unsuccessful. Redirects are not followed.',
};

export const TIMEOUT_RULE: SpecRule = {
  covers: ['interface#delivery-1', 'interface#limits-timeout'],
  source: `${INTERFACE} § Delivery rules, rule 1; § Limits`,
  quote: 'The request timeout is 10 seconds. ... Webhook request timeout | 10 seconds | each delivery attempt',
};

export const TEN_ATTEMPTS_RULE: SpecRule = {
  covers: ['interface#limits-attempts'],
  source: `${INTERFACE} § Limits; § Webhook delivery states`,
  quote: 'Send attempts | up to 10 per cycle. pending | tenth attempt fails | ten attempts without 2xx | failed',
};

export const DISABLED_RULE: SpecRule = {
  covers: ['interface#delivery-6'],
  source: `${INTERFACE} § Webhook delivery states; § What the service does, rule 5`,
  quote: 'Without an active endpoint, orders are still created, but no delivery is prepared. (new) | event prepared | an active endpoint exists | pending | if no active endpoint exists, no delivery is created',
};

export const CONFIGURE_RULE: SpecRule = {
  source: 'management.openapi.yaml#/paths/~1v2~1webhooks~1endpoints/post',
  quote: 'The signing secret is shown once after creation. When no secret is available to copy for an existing endpoint, Rotate secret issues a new one.',
};

export const VERSION_RULE: SpecRule = {
  source: `${INTERFACE} § Versioning, rule 2; § Delivery rules, rule 8; § Webhook delivery states`,
  covers: ['interface#versioning-2', 'interface#delivery-8'],
  quote:
    'Editing the URL, rotating the secret or disabling the endpoint changes its version; pending deliveries of an older version become disabled instead of being sent to the new destination. Old deliveries are never sent to the replacement endpoint.',
};

export const MANUAL_RETRY_RULE: SpecRule = {
  source: `${INTERFACE} § Versioning, rule 3; § Webhook delivery states (failed → pending)`,
  covers: ['interface#versioning-3'],
  quote: 'A retried failed delivery carries the original event id and payload. Retry webhook: original event id and payload sent to the current endpoint; new cycle of up to ten attempts.',
};

export const SURPLUS_RULE: SpecRule = {
  source: `${INTERFACE} § Delivery rules, rule 7; § Order and payment states (paid → paid)`,
  covers: ['interface#delivery-7'],
  quote: 'Additional surplus after an already-paid state can update the order without another webhook. paid | additional surplus received | already paid | paid (order can update) | no further webhook is sent',
};

export const ROTATION_RULE: SpecRule = {
  source: `${INTERFACE} § Webhook signatures, verification rule 8; management.openapi.yaml#/paths/~1v2~1webhooks~1endpoints~1{endpointId}~1rotate-secret/post`,
  covers: ['interface#signatures-8'],
  quote:
    'An already in-flight request may still carry a signature made with the previous secret after rotation. The previous secret stops signing new attempts at once.',
};

export const CALLBACK_ROTATION_RULE: SpecRule = {
  source: 'management.openapi.yaml#/paths/~1v2~1webhooks~1callback-secret~1rotate/post',
  covers: ['management#callback-rotation', 'interface#signatures-8'],
  quote:
    'The previous secret stops signing new attempts at once; pending callbacks are not disabled, their next attempts are signed with the new secret. A request already in flight may still carry a signature made with the previous secret.',
};
