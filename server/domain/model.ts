// The domain's model: the records the domain works with and the vocabulary they use. Every
// enum comes from the contract (generated/ from spec/), so a value added to the spec reaches
// the code through `npm run generate`; the Store (its port: domain/store.ts) persists these records.
import { createHash } from 'node:crypto';
import type { components as ManagementSchemas } from '../../generated/types/management.ts';
import type { components as OrderSchemas } from '../../generated/types/orders.ts';
import type { components as TransactionSchemas } from '../../generated/types/transactions.ts';
import { environmentValues } from '../../generated/types/management.ts';
import { operationalEventTypeValues, orderEventTypeValues } from '../../generated/types/orders.ts';
import { PERMISSIONS, ROUTABLE_EVENT_TYPES, type MemberRole, type Permission, type RoutableEventType } from '../../generated/vocabulary.ts';

type Management = ManagementSchemas['schemas'];
type Orders = OrderSchemas['schemas'];
type Transactions = TransactionSchemas['schemas'];

export type { MemberRole, Permission };
export const ALL_PERMISSIONS: readonly Permission[] = PERMISSIONS;

export type EnvironmentName = Management['Environment'];
export const ENVIRONMENT_NAMES: readonly EnvironmentName[] = environmentValues;
export type TransactionType = Transactions['TransactionType'];
export type TransactionSide = Transactions['TransactionSide'];
export type TransactionStatus = Transactions['TransactionStatus'];
export type OrderStatus = Orders['OrderStatus'];
export type PaymentStatus = Orders['PaymentStatus'];
export type ReviewReason = Orders['ReviewReason'];

/** Every event the service signs and delivers: the order events, webhook.test, payout.completed. */
export type EventType = Management['DeliveryEventType'];
export type OrderEventType = Orders['OrderEventType'];
/** The order events, the only events the feed lists (never webhook.test or payout callbacks). */
export const ORDER_EVENT_TYPES: readonly OrderEventType[] = orderEventTypeValues;
/** The operational events about an endpoint's health (issue 69): sent only to endpoints that name them. */
export type OperationalEventType = Orders['OperationalEventType'];
export const OPERATIONAL_EVENT_TYPES: readonly OperationalEventType[] = operationalEventTypeValues;
/** What the feed lists: the order events and the operational ones. */
export type FeedEventType = Orders['FeedEventType'];
export const FEED_EVENT_TYPES: readonly FeedEventType[] = [...ORDER_EVENT_TYPES, ...OPERATIONAL_EVENT_TYPES];
/** The event types an endpoint can subscribe to (the AsyncAPI's routable messages). */
export type { RoutableEventType };
export const ROUTABLE_TYPES: readonly RoutableEventType[] = ROUTABLE_EVENT_TYPES;
/**
 * Routing by type (issue 68): whether an endpoint of these types (null: every type) takes an event
 * of `type`. The stores apply the same rule in SQL (Sql.receives) when they fan an event out.
 */
export function receives(eventTypes: readonly string[] | null, type: string): boolean {
  return eventTypes === null || eventTypes.includes(type);
}
/**
 * The fan-out's delivery ids (issue 68): the event's delivery id goes to the first endpoint by
 * id; every other one gets an id derived from it and the endpoint's, so one statement can write
 * them all (store/fan-out.ts writes the same rule in SQL) and an id is never reused: ids stay
 * `dlv_` + 26 Crockford letters, time first (FAN_OUT_ID_HEAD kept), and 16 hexadecimal capitals
 * are in the Crockford alphabet.
 */
export function fanOutDeliveryId(id: string, endpointId: string, rank: number): string {
  if (rank === 1) return id;
  return id.slice(0, FAN_OUT_ID_HEAD) + createHash('md5').update(id + endpointId).digest('hex').slice(0, 16).toUpperCase();
}
/** `dlv_` and the 10 letters of time that a derived id keeps. */
export const FAN_OUT_ID_HEAD = 14;
export type DeliveryKind = Management['DeliveryKind'];
export type DeliveryState = Management['DeliveryState'];
export type AttemptOutcome = Management['DeliveryAttempt']['outcome'];
export type AttemptErrorClass = Management['DeliveryErrorClass'];

/** Epoch milliseconds. */
export type Millis = number;

export interface TenantRecord {
  id: string;
  name: string;
  createdAt: Millis;
}

/** A tenant environment: the unit of isolation for keys, wallets, orders, endpoints. */
export interface EnvironmentRecord {
  id: string;
  tenantId: string;
  name: EnvironmentName;
  /** Distribution wallet balance, exact decimal string. */
  walletBalance: string;
  /** Callback signing secret, encrypted at rest (SecretBox). */
  callbackSecretEnc: string;
  createdAt: Millis;
}

export interface ApiKeyRecord {
  /** The public x-api-key value. */
  id: string;
  tenantId: string;
  environmentId: string;
  /** SHA-256 of x-api-hash (a 32-byte random secret; see domain/secrets). */
  secretHash: string;
  permissions: Permission[];
  label: string | null;
  createdAt: Millis;
  revokedAt: Millis | null;
}

export interface MemberRecord {
  id: string;
  tenantId: string;
  email: string;
  role: MemberRole;
  active: boolean;
  /** Lookup hash of the member token (the token is shown once). */
  tokenHash: string;
  createdAt: Millis;
  /** The portal sessions of this epoch are valid; ending them all bumps it. */
  sessionEpoch: number;
}

/**
 * A member's WebAuthn credential (a passkey) for the developer portal. The credential id is
 * unique across the service: a credential belongs to one member of one tenant.
 */
export interface PasskeyRecord {
  id: string;
  tenantId: string;
  memberId: string;
  /** The authenticator's credential id (base64url), as the browser reports it. */
  credentialId: string;
  /** The member's name for it ("Work laptop"). */
  name: string;
  /** COSE public key (base64url). Public, but only the verifier needs it. */
  publicKey: string;
  /** The last signature counter seen; a later assertion must exceed it (0: the authenticator keeps none). */
  counter: number;
  transports: string[];
  /** Whether the credential may be synced to other devices, and whether it is backed up now. */
  multiDevice: boolean;
  backedUp: boolean;
  createdAt: Millis;
  lastUsedAt: Millis | null;
}

export interface ServiceAccountRecord {
  id: string;
  tenantId: string;
  email: string;
  createdAt: Millis;
}

export interface TransactionRecord {
  id: string;
  environmentId: string;
  tenantId: string;
  type: TransactionType;
  side: TransactionSide;
  status: TransactionStatus;
  userId: string | null;
  /**
   * Exact decimal string in the asset's units (usdAmount for staking payouts). Null only on a
   * payment of an order whose base units cannot be written exactly as an Amount (unknown asset
   * decimals, or too many decimal places): amountBaseUnits is then the only amount.
   */
  amount: string | null;
  amountBaseUnits: string | null;
  /** Set for payouts and staking payouts; unique per (environment, type, thirdPartyId). */
  thirdPartyId: string | null;
  notifyUrl: string | null;
  asset: string | null;
  durationInMonths: number | null;
  orderId: string | null;
  orderNumber: string | null;
  txHash: string | null;
  verified: boolean | null;
  refundEmail: string | null;
  createdAt: Millis;
  completedAt: Millis | null;
}

export interface OrderRecord {
  id: string;
  environmentId: string;
  orderNumber: string;
  merchantReference: string;
  amountMinor: number;
  assetId: string | null;
  networkId: string | null;
  amountBaseUnits: string | null;
  receivedBaseUnits: string;
  overpaymentBaseUnits: string | null;
  status: OrderStatus;
  paymentStatus: PaymentStatus;
  reviewReason: ReviewReason | null;
  createdAt: Millis;
  updatedAt: Millis;
}

/** A new order before the store numbers it (Store.createOrder): its events do not carry the number. */
export type UnnumberedOrder = Omit<OrderRecord, 'orderNumber'>;

export interface EventRecord {
  /** 64 lowercase hex. */
  id: string;
  environmentId: string;
  type: EventType;
  /** The exact JSON text that is signed and sent. */
  payload: string;
  orderId: string | null;
  merchantReference: string | null;
  transactionId: string | null;
  createdAt: Millis;
  /**
   * The W3C traceparent of the request that recorded it, kept while tracing is on so that its
   * delivery attempts, however much later, link back to that request (observability/tracing/).
   */
  traceContext?: string;
}

/** The headers an endpoint's deliveries carry. */
export type SignatureScheme = Management['WebhookSignatureScheme'];

export interface EndpointRecord {
  id: string;
  environmentId: string;
  url: string;
  /** Signing secret, encrypted at rest. */
  secretEnc: string;
  signatureScheme: SignatureScheme;
  /** The order event types it receives; null for every type (the default, and endpoints made before types existed). */
  eventTypes: readonly RoutableEventType[] | null;
  /** The rate cap: at most this many attempts a second (spec: WebhookMaxPerSecond); null for none. */
  maxPerSecond: number | null;
  active: boolean;
  version: number;
  lastTestDeliveryId: string | null;
  createdAt: Millis;
  updatedAt: Millis;
  disabledAt: Millis | null;
  /** Why it was disabled; null while active (and for endpoints disabled before issue 69: read as requested). */
  disabledReason: DisabledReason | null;
  /** The current run of failed attempts (issue 69): its first attempt's time, null after a success. */
  failingSince: Millis | null;
  consecutiveFailures: number;
  /** When webhook_endpoint.failing was raised for the current run; null when it was not (yet). */
  failingNotifiedAt: Millis | null;
}

/** The health fields of an endpoint nothing has failed to yet (a new one). */
export const HEALTHY: Pick<EndpointRecord, 'disabledReason' | 'failingSince' | 'consecutiveFailures' | 'failingNotifiedAt'> = {
  disabledReason: null,
  failingSince: null,
  consecutiveFailures: 0,
  failingNotifiedAt: null,
};

/** Why an endpoint was disabled (spec: WebhookEndpointBase.disabledReason). */
export type DisabledReason = NonNullable<Management['WebhookEndpointBase']['disabledReason']>;

export interface DeliveryRecord {
  id: string;
  environmentId: string;
  eventId: string;
  kind: DeliveryKind;
  /** Null for payout callbacks (they go to the payout's notifyUrl). */
  endpointId: string | null;
  endpointVersion: number | null;
  url: string;
  state: DeliveryState;
  /** Attempts made in the current cycle (0..MAX_DELIVERY_ATTEMPTS). */
  attemptCount: number;
  cycle: number;
  nextAttemptAt: Millis | null;
  /** Lease: which worker holds the delivery in flight, and until when. */
  leaseOwner: string | null;
  leaseExpiresAt: Millis | null;
  orderId: string | null;
  merchantReference: string | null;
  transactionId: string | null;
  createdAt: Millis;
  updatedAt: Millis;
  deliveredAt: Millis | null;
}

/** A new delivery of an event before the store gives it the environment's active endpoint as target. */
export type UntargetedDelivery = Omit<DeliveryRecord, 'endpointId' | 'endpointVersion' | 'url'>;

export interface AttemptRecord {
  deliveryId: string;
  cycle: number;
  number: number;
  startedAt: Millis;
  durationMs: number;
  signatureTimestamp: number;
  outcome: AttemptOutcome;
  statusCode: number | null;
  errorClass: AttemptErrorClass | null;
  /** First 2 KiB of the response body, untrusted. */
  responseBody: string | null;
  success: boolean;
}

/** The tenant environment a request acts in. Every read and write is scoped to it. */
export interface Scope {
  tenantId: string;
  environmentId: string;
  environment: EnvironmentName;
}

/** Who is calling: an API client (x-api-key + x-api-hash) or a portal member (bearer token). */
export type Principal =
  | (Scope & { kind: 'api_key'; keyId: string; permissions: ReadonlySet<Permission> })
  | (Scope & { kind: 'member'; memberId: string; role: MemberRole });
