// Deliberately broken variants of the bundled server, each the real app with one defect
// introduced through a narrow seam (a Hono middleware around the app, or an injected Sender or
// retry schedule of the delivery engine), and the checks of the suite that must catch it.
// conformance-tests/mutants/run-mutants.ts runs the relevant target against each one.
import * as followsRedirects from './follows-redirects.ts';
import * as missingHashAccepted from './missing-hash-accepted.ts';
import * as retriesPastTen from './retries-past-ten.ts';
import * as ignoresRetryAfter from './ignores-retry-after.ts';
import * as signsWithoutTimestamp from './signs-without-timestamp.ts';
import * as status200For201 from './status-200-for-201.ts';
import * as tenantLeak from './tenant-leak.ts';
import * as anyMediaType from './any-media-type.ts';
import * as notifyUrlUnchecked from './notify-url-unchecked.ts';
import * as overdrawsWallet from './overdraws-wallet.ts';
import * as permissionCachedPerRoute from './permission-cached-per-route.ts';
import * as refundsToAnyone from './refunds-to-anyone.ts';
import * as revokesTwice from './revokes-twice.ts';
import * as deliverySeenAcrossTenants from './delivery-seen-across-tenants.ts';
import { FAULT_ANSWER_MUTANTS, FAULT_RULE_MUTANTS } from './fault-answers.ts';
import { UNKNOWN_ID_MUTANT } from './unknown-endpoint-400.ts';
import { SEARCH_BY_PREFIX_MUTANT } from './search-by-prefix.ts';
import { PARTIAL_READS_UNPAID_MUTANT } from './partial-reads-unpaid.ts';
import { ORDER_DROPS_NETWORK_MUTANT } from './order-drops-network.ts';
import * as offsetCursor from './offset-cursor.ts';
import * as tenantHeaderOptional from './tenant-header-optional.ts';
import * as newEventIdOnManualRetry from './new-event-id-on-manual-retry.ts';
import * as oldVersionToNewUrl from './old-version-to-new-url.ts';
import * as refreshesCreatedAt from './refreshes-created-at.ts';
import * as clientErrorsDelivered from './client-errors-delivered.ts';
import * as idempotencyRawBytes from './idempotency-raw-bytes.ts';
import * as ordersDeduplicatedByBody from './orders-deduplicated-by-body.ts';
import * as exactJsonMediaType from './exact-json-media-type.ts';
import * as signsWithCreationSecret from './signs-with-creation-secret.ts';
import * as resendsFirstSignature from './resends-first-signature.ts';
import type { ServerMutant } from './mutant.ts';
import { ROUND_FOUR_SERVER_MUTANTS } from './round-four.ts';
import { ROUND_FOUR_SENDER_MUTANTS } from './round-four-sender.ts';
import { RECOVER_MUTANTS } from './recover.ts';
import { ROUND_FIVE_API_MUTANTS } from './round-five-api.ts';
import { ROUND_SIX_API_MUTANTS } from './round-six-api.ts';
import { ROUND_SEVEN_API_MUTANTS } from './round-seven-api.ts';
import { ROUND_FIVE_SENDER_MUTANTS } from './round-five-sender.ts';
import { FAN_OUT_MUTANTS } from './fan-out.ts';
import { PENDING_CHANGE_MUTANTS } from './pending-change.ts';
import { RECOVER_SCOPE_MUTANTS } from './recover-scope.ts';
import { ENDPOINT_HEALTH_MUTANTS } from './endpoint-health.ts';

export type { ServerMutant } from './mutant.ts';

export const SERVER_MUTANTS: readonly ServerMutant[] = [
  {
    name: 'status-200-for-201',
    defect: 'answers 200 where 201 is documented',
    target: 'api',
    build: status200For201.build,
    mustFail: ['api.createPayout.succeeds', 'api.createStakingPayout.succeeds', 'api.createOrder.succeeds', 'api.createWebhookEndpoint.succeeds', 'api.createSandboxPayment.succeeds'],
  },
  {
    name: 'tenant-leak',
    defect: "a GET cache keyed by URL alone serves tenant A's transaction and order to tenant B",
    target: 'api',
    build: tenantLeak.build,
    mustFail: ['api.rules.isolation.transaction', 'api.rules.isolation.order'],
  },
  {
    name: 'missing-hash-accepted',
    defect: 'accepts a request with x-api-key and no x-api-hash',
    target: 'api',
    build: missingHashAccepted.build,
    mustFail: ['api.createPayout.auth.missing-hash', 'api.listUserTransactions.auth.missing-hash', 'api.getOrder.auth.missing-hash', 'api.createSandboxPayment.auth.missing-hash'],
  },
  {
    name: 'tenant-header-optional',
    defect: 'GET /transactions without the required x-tenant-id answers as if it were the key\'s tenant',
    target: 'api',
    build: tenantHeaderOptional.build,
    mustFail: ['api.rules.tenant-header-required'],
    failsOnly: /^api\.rules\.tenant-header-required$/,
  },
  {
    name: 'permission-cached-per-route',
    defect: 'GET /transactions/users lets a key without transactions_read through once another key was allowed',
    target: 'api',
    build: permissionCachedPerRoute.build,
    mustFail: ['api.listUserTransactions.auth.permission-denied'],
    failsOnly: /^api\.listUserTransactions\.auth\.permission-denied$/,
  },
  {
    name: 'overdraws-wallet',
    defect: 'a payout the wallet cannot cover is created (the wallet topped up) instead of 422 insufficient-funds',
    target: 'api',
    build: overdrawsWallet.build,
    mustFail: ['api.rules.insufficient-funds'],
    failsOnly: /^api\.rules\.insufficient-funds$/,
  },
  {
    name: 'notify-url-unchecked',
    defect: 'a payout whose notifyUrl breaks a destination rule is created with the URL dropped',
    target: 'api',
    build: notifyUrlUnchecked.build,
    mustFail: ['api.rules.notify-url-destination'],
    failsOnly: /^api\.rules\.notify-url-destination$/,
  },
  {
    name: 'any-media-type',
    defect: 'parses request bodies as JSON whatever their Content-Type (no 415)',
    target: 'api',
    build: anyMediaType.build,
    mustFail: ['api.createPayout.body.not-json', 'api.refundPayment.body.not-json', 'api.createOrder.body.not-json', 'api.createWebhookEndpoint.body.not-json'],
    failsOnly: /^api\.[A-Za-z]+\.body\.not-json$/,
  },
  {
    name: 'revokes-twice',
    defect: 'revoking a revoked staking payout answers 200 again instead of 409 not-revocable',
    target: 'api',
    build: revokesTwice.build,
    mustFail: ['api.rules.revoke-not-active'],
    failsOnly: /^api\.rules\.revoke-not-active$/,
  },
  {
    name: 'delivery-seen-across-tenants',
    defect: "GET /v2/webhooks/deliveries/{deliveryId} answers a delivery it has answered before to another tenant asking for its id (issue 67: isolation on every operation)",
    target: 'api',
    build: deliverySeenAcrossTenants.build,
    mustFail: ['api.getDelivery.isolation.other-tenant'],
    failsOnly: /^api\.getDelivery\.isolation\.other-tenant$/,
  },
  {
    name: 'refunds-to-anyone',
    defect: 'a refund to an unknown service account e-mail is answered 200 refunded instead of 422',
    target: 'api',
    build: refundsToAnyone.build,
    mustFail: ['api.rules.refund-unknown-account'],
    failsOnly: /^api\.rules\.refund-unknown-account$/,
  },
  {
    name: 'idempotency-raw-bytes',
    defect: 'compares the bodies of a repeated Idempotency-Key as raw bytes: the same order with its keys reordered or respaced is refused 422',
    target: 'api',
    build: idempotencyRawBytes.build,
    mustFail: ['api.rules.order-idempotency-json-form'],
    failsOnly: /^api\.rules\.order-idempotency-json-form$/,
  },
  {
    name: 'orders-deduplicated-by-body',
    defect: 'POST /v2/orders without an Idempotency-Key answers the order already created from an identical body',
    target: 'api',
    build: ordersDeduplicatedByBody.build,
    mustFail: ['api.rules.order-without-key-creates'],
    failsOnly: /^api\.rules\.order-without-key-creates$/,
  },
  {
    name: 'exact-json-media-type',
    defect: 'refuses with 415 a body whose Content-Type is application/json spelled otherwise (charset parameter, capitals)',
    target: 'api',
    build: exactJsonMediaType.build,
    mustFail: ['api.createOrder.body.json-media-type-forms'],
    failsOnly: /^api\.createOrder\.body\.json-media-type-forms$/,
  },
  {
    name: 'signs-without-timestamp',
    defect: 'signs webhooks with HMAC over the body alone, without `<t>.`',
    target: 'sender',
    build: signsWithoutTimestamp.build,
    mustFail: ['sender.order.created.signature', 'sender.order.paid.signature', 'sender.webhook.test.signature', 'sender.retry.fresh-timestamp'],
  },
  {
    name: 'follows-redirects',
    defect: 'follows redirects',
    target: 'sender',
    build: followsRedirects.build,
    mustFail: ['sender.redirect.not-followed', 'sender.redirect.retried'],
  },
  {
    name: 'retries-past-ten',
    defect: 'retries past ten attempts',
    target: 'sender',
    build: retriesPastTen.build,
    mustFail: ['sender.attempts.at-most-ten'],
  },
  {
    name: 'ignores-retry-after',
    defect: "ignores a receiver's Retry-After: a 429 is retried on the schedule and the endpoint's other deliveries go on",
    target: 'sender',
    build: ignoresRetryAfter.build,
    mustFail: ['sender.retry-after.delivery', 'sender.retry-after.endpoint'],
    failsOnly: /^sender\.retry-after\.(delivery|endpoint)$/,
  },
  {
    name: 'new-event-id-on-manual-retry',
    defect: 'a manual retry of a failed delivery is sent with a new event id',
    target: 'sender',
    build: newEventIdOnManualRetry.build,
    mustFail: ['sender.retry.manual-same-event'],
    failsOnly: /^sender\.retry\.manual-same-event$/,
  },
  {
    name: 'client-errors-delivered',
    defect: 'a 4xx answer counts as delivered (never retried)',
    target: 'sender',
    build: clientErrorsDelivered.build,
    mustFail: ['sender.retry.after-4xx'],
    // A 429 is a 4xx too: its delivery counts as delivered, so the Retry-After retry never comes.
    // A 410 too: delivered, so the endpoint is never disabled and no webhook_endpoint.disabled is sent.
    failsOnly: /^sender\.(retry\.after-4xx|retry-after\.delivery|health\.(gone-disables|disabled-event|operational-explicit))$/,
  },
  {
    name: 'refreshes-created-at',
    defect: 'each retry re-renders the event with a new createdAt (the body changes between attempts)',
    target: 'sender',
    build: refreshesCreatedAt.build,
    mustFail: ['sender.retry.after-failure'],
    // The manual retry of the failed delivery and the recovered deliveries are retries too: their bodies changed as well.
    failsOnly: /^sender\.(retry\.(after-failure|manual-same-event)|recover\.same-event)$/,
  },
  {
    name: 'signs-with-creation-secret',
    defect: 'signs every webhook with the secret the endpoint was created with, also after a rotation',
    target: 'sender',
    build: signsWithCreationSecret.build,
    mustFail: ['sender.rotation.new-secret', 'sender.rotation.callback-secret', 'sender.recover.after-change'],
    // The recovery after a rotation is signed with the first secret too; and with several endpoints,
    // the first secret is another endpoint's (fan-out.own-secret).
    // pending.scheme verifies the retries of an added endpoint with that endpoint's own secret.
    // health.disabled-event verifies the alerting endpoint's delivery with that endpoint's own secret.
    failsOnly: /^sender\.(rotation\.(new-secret|callback-secret)|recover\.after-change|fan-out\.own-secret|pending\.scheme|health\.disabled-event)$/,
  },
  {
    name: 'resends-first-signature',
    defect: "resends the first attempt's Service-Signature (its t) on every retry of an event",
    target: 'sender',
    build: resendsFirstSignature.build,
    mustFail: ['sender.retry.fresh-timestamp', 'sender.retry.manual-fresh-timestamp'],
    // The retried callback after the rotation, and the delivery recovered after one, carry their first attempt's signature: the previous secret's.
    // Kept per event, the first signature is another endpoint's when the event goes to several (fan-out.own-secret).
    failsOnly: /^sender\.(retry\.(fresh-timestamp|manual-fresh-timestamp)|rotation\.callback-secret|recover\.after-change|fan-out\.own-secret|pending\.scheme)$/,
  },
  {
    name: 'old-version-to-new-url',
    defect: "a delivery left pending by a URL edit is sent to the new URL",
    target: 'sender',
    build: oldVersionToNewUrl.build,
    mustFail: ['sender.version.url-edit'],
    failsOnly: /^sender\.version\.url-edit$/,
  },
  ...ROUND_FOUR_SERVER_MUTANTS,
  ...ROUND_FOUR_SENDER_MUTANTS,
  ...RECOVER_MUTANTS,
  ...ROUND_FIVE_API_MUTANTS,
  ...ROUND_SIX_API_MUTANTS,
  ...ROUND_SEVEN_API_MUTANTS,
  ...ROUND_FIVE_SENDER_MUTANTS,
  ...FAULT_ANSWER_MUTANTS,
  ...FAULT_RULE_MUTANTS,
  UNKNOWN_ID_MUTANT,
  SEARCH_BY_PREFIX_MUTANT,
  PARTIAL_READS_UNPAID_MUTANT,
  {
    name: 'offset-cursor',
    defect: 'GET /transactions/users pages by offset: a record created after the first page shifts the later pages',
    target: 'api',
    build: offsetCursor.build,
    mustFail: ['api.rules.paging.inserts-between-pages'],
    failsOnly: /^api\.rules\.paging\.inserts-between-pages$/,
  },
  ...FAN_OUT_MUTANTS,
  ...PENDING_CHANGE_MUTANTS,
  ...RECOVER_SCOPE_MUTANTS,
  ...ENDPOINT_HEALTH_MUTANTS,
  ORDER_DROPS_NETWORK_MUTANT,
];
