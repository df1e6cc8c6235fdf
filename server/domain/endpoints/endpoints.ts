// The webhook endpoints of a tenant environment (up to MAX_ACTIVE_ENDPOINTS active, issue 68),
// each with one URL, its own signing secret (stored only sealed, shown once at creation and at
// each rotation), the event types it receives, an active flag and a version. Every accepted
// change raises the version, and in the same transaction that endpoint's pending deliveries of
// older versions become `disabled`, so they are never sent to the replacement destination;
// other endpoints' deliveries are not touched.
import { generateSecret } from '../../../signing/signature.ts';
import { UniqueViolation, type ReadTx, type Tx } from '../store.ts';
import { MAX_ACTIVE_ENDPOINTS } from '../../../generated/vocabulary.ts';
import { HEALTHY, ROUTABLE_TYPES, type DeliveryRecord, type EndpointRecord, type EnvironmentName, type Millis, type RoutableEventType, type SignatureScheme } from '../model.ts';
import type { Scope, Services } from '../context.ts';
import { checkDestination } from '../destination-check.ts';
import { AppError } from '../errors.ts';
import { recordTestEvent } from '../events.ts';
import { newEndpointId } from '../ids.ts';
import { deliveryView, type DeliveryView } from '../deliveries/deliveries.ts';
import { deliveryProgress, type DeliveryProgress } from '../deliveries/progress.ts';

/** The endpoint's latest test webhook, as the portal's "Last test" shows it. */
export interface TestSummary {
  deliveryId: string;
  eventId: string;
  progress: DeliveryProgress;
  /** The test delivery's latest change. */
  at: Millis;
}

export interface EndpointView {
  endpoint: EndpointRecord;
  environment: EnvironmentName;
  lastTest: TestSummary | null;
}

/** Answered only at creation and rotation: the one time the plain secret leaves the service. */
export interface EndpointWithSecretView extends EndpointView {
  secret: string;
}

/**
 * A new URL or new event types (a new version), a new signature scheme or rate cap (same version:
 * where deliveries go and what signs them stay, only their headers or pace change from the next
 * attempt; a `null` cap removes it), any of them together, or the disabling. Event types come
 * unchecked (checkEventTypes).
 */
export type EndpointChange = { url?: string; signatureScheme?: SignatureScheme; eventTypes?: readonly string[]; maxPerSecond?: number | null } | { active: false };

/** The default scheme (spec: WebhookSignatureScheme's default). */
export const DEFAULT_SIGNATURE_SCHEME: SignatureScheme = 'service-signature';

export function endpointNotFound(scope: Scope, endpointId: string): AppError {
  return new AppError('not-found', `No webhook endpoint ${endpointId} exists in the ${scope.environment} environment.`);
}

function endpointInactive(endpointId: string): AppError {
  return new AppError('endpoint-inactive', `Webhook endpoint ${endpointId} is disabled; create a new endpoint instead.`);
}

function endpointExists(scope: Scope): AppError {
  return new AppError('endpoint-exists', `An active webhook endpoint of the ${scope.environment} environment already has this URL; edit or disable it first.`);
}

function endpointLimitReached(scope: Scope): AppError {
  return new AppError('endpoint-limit-reached', `The ${scope.environment} environment already has ${MAX_ACTIVE_ENDPOINTS} active webhook endpoints; disable one first.`);
}

/** The types an endpoint may receive, checked against the contract's routable event types; 422 naming each unknown one. */
export function checkEventTypes(types: readonly string[], pointer: string): readonly RoutableEventType[] {
  const known = ROUTABLE_TYPES as readonly string[];
  const errors = types.flatMap((t, i) => (known.includes(t) ? [] : [{ pointer: `${pointer}/${i}`, detail: `${t} is not an order event type (${known.join(', ')}).` }]));
  if (errors.length > 0) throw new AppError('unknown-event-type', 'eventTypes names a type that is not an order event.', { errors });
  return types as readonly RoutableEventType[];
}

/** A UniqueViolation of the active URL rule as the contract's 409; anything else as it is. */
function urlTaken(scope: Scope, e: unknown): unknown {
  return e instanceof UniqueViolation && e.constraint === 'active_endpoint' ? endpointExists(scope) : e;
}

async function findEndpoint(tx: ReadTx, scope: Scope, endpointId: string): Promise<EndpointRecord> {
  const e = await tx.endpoints.get(scope.environmentId, endpointId);
  if (!e) throw endpointNotFound(scope, endpointId);
  return e;
}

export async function findActiveEndpoint(tx: Tx, scope: Scope, endpointId: string): Promise<EndpointRecord> {
  const e = await findEndpoint(tx, scope, endpointId);
  if (!e.active) throw endpointInactive(e.id);
  return e;
}

function summary(d: DeliveryRecord, now: Millis): TestSummary {
  return { deliveryId: d.id, eventId: d.eventId, progress: deliveryProgress(d, now), at: d.updatedAt };
}

async function viewOf(tx: ReadTx, scope: Scope, e: EndpointRecord, now: Millis): Promise<EndpointView> {
  const test = e.lastTestDeliveryId === null ? null : await tx.deliveries.get(scope.environmentId, e.lastTestDeliveryId);
  return { endpoint: e, environment: scope.environment, lastTest: test ? summary(test, now) : null };
}

/**
 * Writes a changed endpoint at the next version and disables the older versions' pending
 * deliveries: how every change of URL, secret or activity is saved (the stateful mock's pinned
 * endpoint, scripts/mock/pin-endpoint.ts, saves its changes through it too).
 */
export async function saveNewVersion(tx: Tx, e: EndpointRecord, change: Partial<EndpointRecord>, now: Millis): Promise<EndpointRecord> {
  const next: EndpointRecord = { ...e, ...change, version: e.version + 1, updatedAt: now };
  await tx.endpoints.update(next);
  await tx.deliveries.disableOlderVersions(e.id, next.version, now);
  return next;
}

export interface NewEndpoint {
  url: string;
  signatureScheme?: SignatureScheme;
  /** Unchecked; every type when left out. */
  eventTypes?: readonly string[];
  /** The rate cap (checked by the contract's schema); none when left out. */
  maxPerSecond?: number;
}

export async function createEndpoint(services: Services, scope: Scope, input: NewEndpoint): Promise<EndpointWithSecretView> {
  const url = checkDestination(services, input.url, 'url');
  const eventTypes = input.eventTypes === undefined ? null : checkEventTypes(input.eventTypes, '/body/eventTypes');
  const secret = generateSecret();
  try {
    return await services.store.transaction(async (tx) => {
      const now = services.clock.now();
      const endpoint = { ...newEndpointRecord(services, scope.environmentId, url, secret, input.signatureScheme, now), eventTypes, maxPerSecond: input.maxPerSecond ?? null };
      // The store counts under a hold of the environment, so racing creations cannot pass the limit.
      if (!(await tx.endpoints.insertWithin(endpoint, MAX_ACTIVE_ENDPOINTS))) throw endpointLimitReached(scope);
      return { endpoint, environment: scope.environment, lastTest: null, secret };
    });
  } catch (e) {
    throw urlTaken(scope, e);
  }
}

/** Newest first, disabled ones included. */
export async function listEndpoints(services: Services, scope: Scope): Promise<EndpointView[]> {
  return services.store.read(async (tx) => {
    const now = services.clock.now();
    const views: EndpointView[] = [];
    for (const e of await tx.endpoints.list(scope.environmentId)) views.push(await viewOf(tx, scope, e, now));
    return views;
  });
}

export async function getEndpoint(services: Services, scope: Scope, endpointId: string): Promise<EndpointView> {
  return services.store.read(async (tx) => viewOf(tx, scope, await findEndpoint(tx, scope, endpointId), services.clock.now()));
}

/**
 * `{url}` replaces the destination and keeps the secret; `{eventTypes}` replaces the types it
 * receives; `{active: false}` disables the endpoint for good; each raises the version.
 * `{signatureScheme}` and `{maxPerSecond}` keep the version (pending deliveries go on, signed in
 * the new scheme and paced by the new cap, or unpaced once it is `null`, from their next
 * attempt). A disabled endpoint takes no change (409); a URL another active endpoint has is a
 * 409 too.
 */
export async function updateEndpoint(services: Services, scope: Scope, endpointId: string, change: EndpointChange): Promise<EndpointView> {
  const edit = 'active' in change ? null : versionedEdit(services, change);
  try {
    return await services.store.transaction(async (tx) => {
      const e = await findActiveEndpoint(tx, scope, endpointId);
      const now = services.clock.now();
      let next: EndpointRecord;
      if (edit === null) next = await saveNewVersion(tx, e, { active: false, disabledAt: now, disabledReason: 'requested' }, now);
      else {
        const scheme = 'active' in change ? {} : keptVersionEdit(change);
        // A new URL is a new destination: the old one's run of failures is not its.
        const health = edit.url === undefined ? {} : { failingSince: null, consecutiveFailures: 0, failingNotifiedAt: null };
        if (Object.keys(edit).length > 0) next = await saveNewVersion(tx, e, { ...edit, ...scheme, ...health }, now);
        else {
          next = { ...e, ...scheme, updatedAt: now };
          await tx.endpoints.update(next);
        }
      }
      return viewOf(tx, scope, next, now);
    });
  } catch (e) {
    throw urlTaken(scope, e);
  }
}

/** The checked fields of a change that raise the version (URL, event types); empty when it has none. */
function versionedEdit(services: Services, change: Exclude<EndpointChange, { active: false }>): Partial<Pick<EndpointRecord, 'url' | 'eventTypes'>> {
  return {
    ...(change.url === undefined ? {} : { url: checkDestination(services, change.url, 'url') }),
    ...(change.eventTypes === undefined ? {} : { eventTypes: checkEventTypes(change.eventTypes, '/body/eventTypes') }),
  };
}

/** The fields of a change that keep the version (signature scheme, rate cap: `null` removes it, absent keeps it). */
function keptVersionEdit(change: Exclude<EndpointChange, { active: false }>): Partial<Pick<EndpointRecord, 'signatureScheme' | 'maxPerSecond'>> {
  return {
    ...(change.signatureScheme === undefined ? {} : { signatureScheme: change.signatureScheme }),
    ...(change.maxPerSecond === undefined ? {} : { maxPerSecond: change.maxPerSecond }),
  };
}

/** A new signing secret, answered once; the previous one stops signing new attempts at once. */
export async function rotateEndpointSecret(services: Services, scope: Scope, endpointId: string): Promise<EndpointWithSecretView> {
  const secret = generateSecret();
  return services.store.transaction(async (tx) => {
    const e = await findActiveEndpoint(tx, scope, endpointId);
    const now = services.clock.now();
    const next = await saveNewVersion(tx, e, { secretEnc: services.secrets.seal(secret) }, now);
    return { ...(await viewOf(tx, scope, next, now)), secret };
  });
}

/** A new active endpoint (version 1) at `url`, its secret sealed. */
export function newEndpointRecord(services: Services, environmentId: string, url: string, secret: string, scheme: SignatureScheme | undefined, now: Millis): EndpointRecord {
  return {
    id: newEndpointId(now),
    environmentId,
    url,
    secretEnc: services.secrets.seal(secret),
    signatureScheme: scheme ?? DEFAULT_SIGNATURE_SCHEME,
    eventTypes: null,
    maxPerSecond: null,
    active: true,
    version: 1,
    lastTestDeliveryId: null,
    createdAt: now,
    updatedAt: now,
    disabledAt: null,
    ...HEALTHY,
  };
}

/** Queues a `webhook.test` event to an active endpoint through the same signed path as order events. */
export async function sendTestWebhook(services: Services, scope: Scope, endpointId: string): Promise<DeliveryView> {
  return services.store.transaction(async (tx) => {
    const e = await findActiveEndpoint(tx, scope, endpointId);
    const { deliveryId } = await recordTestEvent(tx, services, scope, e);
    // Not a change of the configuration: version and updatedAt stay.
    await tx.endpoints.update({ ...e, lastTestDeliveryId: deliveryId });
    const d = await tx.deliveries.get(scope.environmentId, deliveryId);
    if (!d) throw new Error(`test delivery ${deliveryId} vanished`);
    return deliveryView(tx, d, services.clock.now());
  });
}
