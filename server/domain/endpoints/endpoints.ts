// The webhook endpoint of a tenant environment: one URL, its own signing secret (stored only
// sealed, shown once at creation and at each rotation), an active flag and a version. Every
// accepted change raises the version, and in the same transaction the pending deliveries of
// older versions become `disabled`, so they are never sent to the replacement destination.
import { generateSecret } from '../../../signing/signature.ts';
import { UniqueViolation, type ReadTx, type Tx } from '../store.ts';
import { type DeliveryRecord, type EndpointRecord, type EnvironmentName, type Millis, type SignatureScheme } from '../model.ts';
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
 * A new URL (a new version), a new signature scheme (same version: where deliveries go and what
 * signs them stay, only their headers change from the next attempt), both, or the disabling.
 */
export type EndpointChange = { url?: string; signatureScheme?: SignatureScheme } | { active: false };

/** The default scheme (spec: WebhookSignatureScheme's default). */
export const DEFAULT_SIGNATURE_SCHEME: SignatureScheme = 'service-signature';

export function endpointNotFound(scope: Scope, endpointId: string): AppError {
  return new AppError('not-found', `No webhook endpoint ${endpointId} exists in the ${scope.environment} environment.`);
}

function endpointInactive(endpointId: string): AppError {
  return new AppError('endpoint-inactive', `Webhook endpoint ${endpointId} is disabled; create a new endpoint instead.`);
}

function endpointExists(scope: Scope, activeId: string | null): AppError {
  const which = activeId === null ? 'an active webhook endpoint' : `the active webhook endpoint ${activeId}`;
  return new AppError('endpoint-exists', `The ${scope.environment} environment already has ${which}; edit or disable it first.`);
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

export async function createEndpoint(services: Services, scope: Scope, input: { url: string; signatureScheme?: SignatureScheme }): Promise<EndpointWithSecretView> {
  const url = checkDestination(services, input.url, 'url');
  const secret = generateSecret();
  try {
    return await services.store.transaction(async (tx) => {
      // Checked first for a message naming the active endpoint; the store's unique rule below
      // still decides when two creations race.
      const active = await tx.endpoints.getActive(scope.environmentId);
      if (active) throw endpointExists(scope, active.id);
      const now = services.clock.now();
      const endpoint = newEndpointRecord(services, scope.environmentId, url, secret, input.signatureScheme, now);
      await tx.endpoints.insert(endpoint);
      return { endpoint, environment: scope.environment, lastTest: null, secret };
    });
  } catch (e) {
    if (e instanceof UniqueViolation && e.constraint === 'active_endpoint') throw endpointExists(scope, null);
    throw e;
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
 * `{url}` replaces the destination and keeps the secret; `{active: false}` disables the endpoint
 * for good; either raises the version. `{signatureScheme}` alone keeps the version (pending
 * deliveries go on, signed in the new scheme from their next attempt). A disabled endpoint takes
 * no change (409).
 */
export async function updateEndpoint(services: Services, scope: Scope, endpointId: string, change: EndpointChange): Promise<EndpointView> {
  return services.store.transaction(async (tx) => {
    const e = await findActiveEndpoint(tx, scope, endpointId);
    const now = services.clock.now();
    let next: EndpointRecord;
    if ('active' in change) next = await saveNewVersion(tx, e, { active: false, disabledAt: now }, now);
    else {
      const scheme = change.signatureScheme === undefined ? {} : { signatureScheme: change.signatureScheme };
      if (change.url !== undefined) next = await saveNewVersion(tx, e, { url: checkDestination(services, change.url, 'url'), ...scheme }, now);
      else {
        next = { ...e, ...scheme, updatedAt: now };
        await tx.endpoints.update(next);
      }
    }
    return viewOf(tx, scope, next, now);
  });
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
    active: true,
    version: 1,
    lastTestDeliveryId: null,
    createdAt: now,
    updatedAt: now,
    disabledAt: null,
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
