// The rules a merchant's receiver must follow, quoted from the interface document
// (payments-service-interface.md) and the AsyncAPI document, so a failure names the rule in
// the contract's own words.
import { ASYNCAPI_FILE } from '../core/asyncapi.ts';
import { INTERFACE, entry, numbered } from '../core/coverage.ts';
import { ruleBook, type RuleOf } from '../core/define.ts';
import { DELIVERY_RULES as SENDER_SIDE, contractCatalogue } from '../core/contract-rules.ts';

const MERCHANT_SIDE = 'a duty of the merchant\'s business logic after verification (reading the order, pausing fulfilment, recovery); a black-box request cannot observe it';

/** The rules in the receiver target's scope, for the coverage summary; `covers` names these ids. */
export const RECEIVER_CATALOGUE = [
  ...numbered('signatures', 'Webhook signatures, verification rule', [1, 2, 3, 4, 5, 6, 7, 8]),
  entry('interface#delivery-1', INTERFACE, 'Delivery rules, rule 1 (only a 2xx accepts a delivery)'),
  entry('interface#delivery-3', INTERFACE, 'Delivery rules, rule 3 (handle duplicates by event id)'),
  entry('interface#delivery-4', INTERFACE, 'Delivery rules, rule 4 (read the latest order before fulfilment)', MERCHANT_SIDE),
  entry('interface#delivery-5', INTERFACE, 'Delivery rules, rule 5 (a review event stops automatic fulfilment)', MERCHANT_SIDE),
  entry('interface#receiver-2xx', INTERFACE, 'Webhook receiver: 2xx only after durably accepting the event'),
  entry('interface#errors-receiver-reject', INTERFACE, 'Errors: webhook receiver | signature invalid, or timestamp outside 300 seconds'),
  // The AsyncAPI document's own rules, but those only deliveries show (the sender target's).
  ...contractCatalogue((r) => r.document === 'webhooks' && !SENDER_SIDE.includes(r.id), () => undefined),
] as const;

export const RECEIVER = ruleBook('receiver', RECEIVER_CATALOGUE);
/** A rule of the receiver target: its `covers` names entries of RECEIVER_CATALOGUE only. */
export type ReceiverRule = RuleOf<typeof RECEIVER>;

/** "Webhook signatures", verification rules for the receiver, numbered as in the document. */
export const VERIFICATION_RULES: Readonly<Record<1 | 2 | 3 | 4 | 5 | 6 | 7 | 8, ReceiverRule>> = {
  1: {
    source: `${INTERFACE} § Webhook signatures, verification rule 1`,
    covers: ['interface#signatures-1'],
    quote: 'The header Service-Signature has the form t=<Unix seconds>,v1=<hex HMAC>, where t is 1 to 12 digits and the value is 64 lowercase hex characters.',
  },
  2: {
    source: `${INTERFACE} § Webhook signatures, verification rule 2`,
    covers: ['interface#signatures-2'],
    quote: "The HMAC is HMAC-SHA256, keyed with the endpoint's signing secret, over the string <t>.<raw body>: the timestamp, a period, then the exact raw request bytes.",
  },
  3: {
    source: `${INTERFACE} § Webhook signatures, verification rule 3`,
    covers: ['interface#signatures-3'],
    quote: 'Verify before parsing or altering the body.',
  },
  4: {
    source: `${INTERFACE} § Webhook signatures, verification rule 4`,
    covers: ['interface#signatures-4'],
    quote: 'Reject when the difference between the current time and t exceeds 300 seconds (five minutes).',
  },
  5: {
    source: `${INTERFACE} § Webhook signatures, verification rule 5`,
    covers: ['interface#signatures-5'],
    quote: 'Compare digests in constant time.',
  },
  6: {
    source: `${INTERFACE} § Webhook signatures, verification rule 6`,
    covers: ['interface#signatures-6'],
    quote: 'The signature timestamp describes the send attempt; createdAt describes the event.',
  },
  7: {
    source: `${INTERFACE} § Webhook signatures, verification rule 7`,
    covers: ['interface#signatures-7'],
    quote: 'Then confirm that the header Service-Event-Id equals the id in the parsed body, and persist that id together with the business update so a retry cannot apply it twice.',
  },
  8: {
    source: `${INTERFACE} § Webhook signatures, verification rule 8`,
    covers: ['interface#signatures-8'],
    quote: 'An already in-flight request may still carry a signature made with the previous secret after rotation.',
  },
};

/** "Errors": the receiver row. */
export const REJECT_BEFORE_HANDLING: ReceiverRule = {
  source: `${INTERFACE} § Errors (webhook receiver: signature invalid, or timestamp outside 300 seconds)`,
  covers: ['interface#errors-receiver-reject'],
  quote: 'webhook receiver | signature invalid, or timestamp outside 300 seconds | the receiver rejects the event before handling',
};

/** The AsyncAPI document's wording of the same rule, with the status it implies. */
export const REJECT_WITH_NON_2XX: ReceiverRule = {
  source: `${ASYNCAPI_FILE}#/info/description (Verifying a request)`,
  quote: 'A request whose signature is invalid, or whose timestamp is outside 300 seconds, is rejected by the receiver before any handling; answer it with a non-2xx status.',
};

/** "Webhook receiver (served by the merchant)". */
export const ANSWER_2XX_AFTER_ACCEPTING: ReceiverRule = {
  source: `${INTERFACE} § Webhook receiver (served by the merchant)`,
  covers: ['interface#receiver-2xx'],
  quote: 'The receiver answers any 2xx status only after durably accepting the event.',
};

/** "Delivery rules" 1 and 3. */
export const DELIVERY_RULES: Readonly<Record<1 | 3, ReceiverRule>> = {
  1: {
    source: `${INTERFACE} § Delivery rules, rule 1`,
    covers: ['interface#delivery-1'],
    quote: 'The request timeout is 10 seconds. A non-2xx response, a redirect, a network failure or a timeout counts as unsuccessful.',
  },
  3: {
    source: `${INTERFACE} § Delivery rules, rule 3`,
    covers: ['interface#delivery-3'],
    quote: 'Delivery can repeat or arrive out of order, including after a timeout when the receiver did process the first attempt. The receiver must handle duplicates by event id.',
  },
};

/** "Request headers on each webhook delivery". */
export const EVENT_ID_HEADER_RULE: ReceiverRule = {
  source: `${INTERFACE} § Request headers on each webhook delivery`,
  covers: ['interface#signatures-7'],
  quote: 'Service-Event-Id | equals the id of the JSON body',
};

/** AsyncAPI "Versioning", rule 2: payloads within v2 are forward compatible. */
export const FORWARD_COMPATIBILITY: ReceiverRule = {
  source: `${ASYNCAPI_FILE}#/info/description (Versioning, rule 2)`,
  covers: ['webhooks#forward-compatible'],
  quote: 'Within v2 the payloads are forward compatible: an event may gain optional fields, and reviewReason may gain values, without a new version. Ignore the fields you do not know and treat an unknown reviewReason as a review.',
};

/** The review message's own wording of the same rule. */
export const UNKNOWN_REVIEW_REASON: ReceiverRule = {
  source: `${ASYNCAPI_FILE}#/components/messages/orderPaymentReviewRequired`,
  covers: ['webhooks#forward-compatible'],
  quote: 'data.reviewReason is present when a reason exists (current values: order_cancelled, deposit_revoked, late_or_missing_inclusion; treat unknown values as a review too).',
};
