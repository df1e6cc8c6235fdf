// The one mapping between the store's records and table rows, for both stores. The tables
// have the same columns in both dialects; what differs is how a driver represents a few
// types, and that is all a Dialect says: booleans (SQLite 0/1, PostgreSQL boolean), the JSON
// column (SQLite text, PostgreSQL JSONB parsed on read) and exact decimals (PostgreSQL
// NUMERIC(38,8): checked on write, trailing zeros trimmed on read). Row keys are the column
// names, so a row is also what an INSERT takes.
import type {
  ApiKeyRecord,
  AttemptRecord,
  DeliveryRecord,
  EndpointRecord,
  EnvironmentRecord,
  EventRecord,
  MemberRecord,
  PasskeyRecord,
  OrderRecord,
  Permission,
  ServiceAccountRecord,
  TenantRecord,
  TransactionRecord,
} from '../domain/model.ts';
import type { ClaimedDelivery } from '../domain/store.ts';

/** How one driver represents booleans (B), the JSON column (J) and exact decimals. */
export interface Dialect<B, J> {
  toBool(v: boolean): B;
  fromBool(v: B): boolean;
  toJson(v: readonly string[]): J;
  fromJson(v: J): unknown;
  /** A decimal string as the column takes it (may refuse what the column would round). */
  toDecimal(v: string): string;
  /** The column's text as the record's exact decimal string. */
  fromDecimal(v: string): string;
}

export interface TenantRow {
  id: string;
  name: string;
  created_at: number;
}

export interface EnvironmentRow {
  id: string;
  tenant_id: string;
  name: EnvironmentRecord['name'];
  /** Exact decimal (PostgreSQL: NUMERIC(38,8) as text). */
  wallet_balance: string;
  callback_secret_enc: string;
  created_at: number;
}

export interface ApiKeyRow<J> {
  id: string;
  tenant_id: string;
  environment_id: string;
  secret_hash: string;
  permissions: J;
  label: string | null;
  created_at: number;
  revoked_at: number | null;
}

export interface PasskeyRow<B, J> {
  id: string;
  tenant_id: string;
  member_id: string;
  credential_id: string;
  name: string;
  public_key: string;
  counter: number;
  transports: J;
  multi_device: B;
  backed_up: B;
  created_at: number;
  last_used_at: number | null;
}

export interface MemberRow<B> {
  id: string;
  tenant_id: string;
  email: string;
  role: MemberRecord['role'];
  active: B;
  token_hash: string;
  created_at: number;
  session_epoch: number;
}

export interface ServiceAccountRow {
  id: string;
  tenant_id: string;
  email: string;
  created_at: number;
}

export interface TransactionRow<B> {
  id: string;
  environment_id: string;
  tenant_id: string;
  type: TransactionRecord['type'];
  side: TransactionRecord['side'];
  status: TransactionRecord['status'];
  user_id: string | null;
  amount: string | null;
  amount_base_units: string | null;
  third_party_id: string | null;
  notify_url: string | null;
  asset: string | null;
  duration_in_months: number | null;
  order_id: string | null;
  order_number: string | null;
  tx_hash: string | null;
  verified: B | null;
  refund_email: string | null;
  created_at: number;
  completed_at: number | null;
}

export interface OrderRow {
  id: string;
  environment_id: string;
  order_number: string;
  merchant_reference: string;
  amount_minor: number;
  asset_id: string | null;
  network_id: string | null;
  amount_base_units: string | null;
  received_base_units: string;
  overpayment_base_units: string | null;
  status: OrderRecord['status'];
  payment_status: OrderRecord['paymentStatus'];
  review_reason: OrderRecord['reviewReason'];
  created_at: number;
  updated_at: number;
}

export interface EventRow {
  id: string;
  environment_id: string;
  type: EventRecord['type'];
  payload: string;
  order_id: string | null;
  merchant_reference: string | null;
  transaction_id: string | null;
  created_at: number;
  /** The W3C traceparent of the request that recorded it (tracing on), or null. */
  trace_context: string | null;
}

export interface EndpointRow<B> {
  id: string;
  environment_id: string;
  url: string;
  secret_enc: string;
  signature_scheme: EndpointRecord['signatureScheme'];
  /** JSON array of the event types it receives, or NULL for every type. */
  event_types: string | null;
  max_per_second: number | null;
  active: B;
  version: number;
  last_test_delivery_id: string | null;
  created_at: number;
  updated_at: number;
  disabled_at: number | null;
  disabled_reason: EndpointRecord['disabledReason'];
  failing_since: number | null;
  consecutive_failures: number;
  failing_notified_at: number | null;
}

/** A delivery's row as written: its lease is the queue's, never part of an INSERT. */
export interface DeliveryRow {
  id: string;
  environment_id: string;
  event_id: string;
  kind: DeliveryRecord['kind'];
  endpoint_id: string | null;
  endpoint_version: number | null;
  url: string;
  state: DeliveryRecord['state'];
  attempt_count: number;
  cycle: number;
  next_attempt_at: number | null;
  order_id: string | null;
  merchant_reference: string | null;
  transaction_id: string | null;
  created_at: number;
  updated_at: number;
  delivered_at: number | null;
}

/** A delivery's row as read: with its lease (the view delivery_records of both stores). */
export interface DeliveryReadRow extends DeliveryRow {
  lease_owner: string | null;
  lease_expires_at: number | null;
}

export interface AttemptRow<B> {
  delivery_id: string;
  cycle: number;
  number: number;
  started_at: number;
  duration_ms: number;
  signature_timestamp: number;
  outcome: AttemptRecord['outcome'];
  status_code: number | null;
  error_class: AttemptRecord['errorClass'];
  response_body: string | null;
  success: B;
}

/** What the queue's claim reads: the delivery's columns, its event's as e_*, and the secret to sign with. */
export type ClaimedRow = DeliveryReadRow & {
  seq: number;
  destination: string;
  secret_enc: string;
  signature_scheme: ClaimedDelivery['signatureScheme'];
  max_per_second: number | null;
  /** Null for payout callbacks (no endpoint). */
  endpoint_failures: number | string | null;
  e_id: string;
  e_environment_id: string;
  e_type: EventRecord['type'];
  e_payload: string;
  e_order_id: string | null;
  e_merchant_reference: string | null;
  e_transaction_id: string | null;
  e_created_at: number;
  e_trace_context: string | null;
};

/** The row mappers of one dialect; build once per store module. */
export function rowMapping<B, J>(d: Dialect<B, J>) {
  const m = {
    /** A boolean as the dialect binds it. */
    bool: (v: boolean): B => d.toBool(v),
    tenantFromRow: (r: TenantRow): TenantRecord => ({ id: r.id, name: r.name, createdAt: r.created_at }),
    tenantToRow: (t: TenantRecord): TenantRow => ({ id: t.id, name: t.name, created_at: t.createdAt }),
    environmentFromRow: (r: EnvironmentRow): EnvironmentRecord => ({
      id: r.id,
      tenantId: r.tenant_id,
      name: r.name,
      walletBalance: d.fromDecimal(r.wallet_balance),
      callbackSecretEnc: r.callback_secret_enc,
      createdAt: r.created_at,
    }),
    environmentToRow: (e: EnvironmentRecord): EnvironmentRow => ({
      id: e.id,
      tenant_id: e.tenantId,
      name: e.name,
      wallet_balance: d.toDecimal(e.walletBalance),
      callback_secret_enc: e.callbackSecretEnc,
      created_at: e.createdAt,
    }),
    apiKeyFromRow: (r: ApiKeyRow<J>): ApiKeyRecord => ({
      id: r.id,
      tenantId: r.tenant_id,
      environmentId: r.environment_id,
      secretHash: r.secret_hash,
      permissions: d.fromJson(r.permissions) as Permission[],
      label: r.label,
      createdAt: r.created_at,
      revokedAt: r.revoked_at,
    }),
    apiKeyToRow: (k: ApiKeyRecord): ApiKeyRow<J> => ({
      id: k.id,
      tenant_id: k.tenantId,
      environment_id: k.environmentId,
      secret_hash: k.secretHash,
      permissions: d.toJson(k.permissions),
      label: k.label,
      created_at: k.createdAt,
      revoked_at: k.revokedAt,
    }),
    memberFromRow: (r: MemberRow<B>): MemberRecord => ({
      id: r.id,
      tenantId: r.tenant_id,
      email: r.email,
      role: r.role,
      active: d.fromBool(r.active),
      tokenHash: r.token_hash,
      createdAt: r.created_at,
      sessionEpoch: Number(r.session_epoch),
    }),
    memberToRow: (m: MemberRecord): MemberRow<B> => ({
      id: m.id,
      tenant_id: m.tenantId,
      email: m.email,
      role: m.role,
      active: d.toBool(m.active),
      token_hash: m.tokenHash,
      created_at: m.createdAt,
      session_epoch: m.sessionEpoch,
    }),
    passkeyFromRow: (r: PasskeyRow<B, J>): PasskeyRecord => ({
      id: r.id,
      tenantId: r.tenant_id,
      memberId: r.member_id,
      credentialId: r.credential_id,
      name: r.name,
      publicKey: r.public_key,
      counter: Number(r.counter),
      transports: d.fromJson(r.transports) as string[],
      multiDevice: d.fromBool(r.multi_device),
      backedUp: d.fromBool(r.backed_up),
      createdAt: r.created_at,
      lastUsedAt: r.last_used_at,
    }),
    passkeyToRow: (p: PasskeyRecord): PasskeyRow<B, J> => ({
      id: p.id,
      tenant_id: p.tenantId,
      member_id: p.memberId,
      credential_id: p.credentialId,
      name: p.name,
      public_key: p.publicKey,
      counter: p.counter,
      transports: d.toJson(p.transports),
      multi_device: d.toBool(p.multiDevice),
      backed_up: d.toBool(p.backedUp),
      created_at: p.createdAt,
      last_used_at: p.lastUsedAt,
    }),
    serviceAccountFromRow: (r: ServiceAccountRow): ServiceAccountRecord => ({
      id: r.id,
      tenantId: r.tenant_id,
      email: r.email,
      createdAt: r.created_at,
    }),
    serviceAccountToRow: (a: ServiceAccountRecord): ServiceAccountRow => ({
      id: a.id,
      tenant_id: a.tenantId,
      email: a.email,
      created_at: a.createdAt,
    }),
    transactionFromRow: (r: TransactionRow<B>): TransactionRecord => ({
      id: r.id,
      environmentId: r.environment_id,
      tenantId: r.tenant_id,
      type: r.type,
      side: r.side,
      status: r.status,
      userId: r.user_id,
      amount: r.amount,
      amountBaseUnits: r.amount_base_units,
      thirdPartyId: r.third_party_id,
      notifyUrl: r.notify_url,
      asset: r.asset,
      durationInMonths: r.duration_in_months,
      orderId: r.order_id,
      orderNumber: r.order_number,
      txHash: r.tx_hash,
      verified: r.verified === null ? null : d.fromBool(r.verified),
      refundEmail: r.refund_email,
      createdAt: r.created_at,
      completedAt: r.completed_at,
    }),
    transactionToRow: (t: TransactionRecord): TransactionRow<B> => ({
      id: t.id,
      environment_id: t.environmentId,
      tenant_id: t.tenantId,
      type: t.type,
      side: t.side,
      status: t.status,
      user_id: t.userId,
      amount: t.amount,
      amount_base_units: t.amountBaseUnits,
      third_party_id: t.thirdPartyId,
      notify_url: t.notifyUrl,
      asset: t.asset,
      duration_in_months: t.durationInMonths,
      order_id: t.orderId,
      order_number: t.orderNumber,
      tx_hash: t.txHash,
      verified: t.verified === null ? null : d.toBool(t.verified),
      refund_email: t.refundEmail,
      created_at: t.createdAt,
      completed_at: t.completedAt,
    }),
    orderFromRow: (r: OrderRow): OrderRecord => ({
      id: r.id,
      environmentId: r.environment_id,
      orderNumber: r.order_number,
      merchantReference: r.merchant_reference,
      amountMinor: r.amount_minor,
      assetId: r.asset_id,
      networkId: r.network_id,
      amountBaseUnits: r.amount_base_units,
      receivedBaseUnits: r.received_base_units,
      overpaymentBaseUnits: r.overpayment_base_units,
      status: r.status,
      paymentStatus: r.payment_status,
      reviewReason: r.review_reason,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }),
    orderToRow: (o: OrderRecord): OrderRow => ({
      id: o.id,
      environment_id: o.environmentId,
      order_number: o.orderNumber,
      merchant_reference: o.merchantReference,
      amount_minor: o.amountMinor,
      asset_id: o.assetId,
      network_id: o.networkId,
      amount_base_units: o.amountBaseUnits,
      received_base_units: o.receivedBaseUnits,
      overpayment_base_units: o.overpaymentBaseUnits,
      status: o.status,
      payment_status: o.paymentStatus,
      review_reason: o.reviewReason,
      created_at: o.createdAt,
      updated_at: o.updatedAt,
    }),
    eventFromRow: (r: EventRow): EventRecord => ({
      id: r.id,
      environmentId: r.environment_id,
      type: r.type,
      payload: r.payload,
      orderId: r.order_id,
      merchantReference: r.merchant_reference,
      transactionId: r.transaction_id,
      createdAt: r.created_at,
      // Absent rather than null: only a traced write has one.
      ...(r.trace_context ? { traceContext: r.trace_context } : {}),
    }),
    eventToRow: (e: EventRecord): EventRow => ({
      id: e.id,
      environment_id: e.environmentId,
      type: e.type,
      payload: e.payload,
      order_id: e.orderId,
      merchant_reference: e.merchantReference,
      transaction_id: e.transactionId,
      created_at: e.createdAt,
      trace_context: e.traceContext ?? null,
    }),
    endpointFromRow: (r: EndpointRow<B>): EndpointRecord => ({
      id: r.id,
      environmentId: r.environment_id,
      url: r.url,
      secretEnc: r.secret_enc,
      signatureScheme: r.signature_scheme,
      eventTypes: r.event_types === null ? null : (JSON.parse(r.event_types) as EndpointRecord['eventTypes']),
      maxPerSecond: r.max_per_second === null || r.max_per_second === undefined ? null : Number(r.max_per_second),
      active: d.fromBool(r.active),
      version: r.version,
      lastTestDeliveryId: r.last_test_delivery_id,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
      disabledAt: r.disabled_at,
      disabledReason: r.disabled_reason,
      failingSince: r.failing_since === null ? null : Number(r.failing_since),
      consecutiveFailures: Number(r.consecutive_failures),
      failingNotifiedAt: r.failing_notified_at === null ? null : Number(r.failing_notified_at),
    }),
    endpointToRow: (e: EndpointRecord): EndpointRow<B> => ({
      id: e.id,
      environment_id: e.environmentId,
      url: e.url,
      secret_enc: e.secretEnc,
      signature_scheme: e.signatureScheme,
      event_types: e.eventTypes === null ? null : JSON.stringify(e.eventTypes),
      max_per_second: e.maxPerSecond ?? null,
      active: d.toBool(e.active),
      version: e.version,
      last_test_delivery_id: e.lastTestDeliveryId,
      created_at: e.createdAt,
      updated_at: e.updatedAt,
      disabled_at: e.disabledAt,
      disabled_reason: e.disabledReason,
      failing_since: e.failingSince,
      consecutive_failures: e.consecutiveFailures,
      failing_notified_at: e.failingNotifiedAt,
    }),
    deliveryFromRow: (r: DeliveryReadRow): DeliveryRecord => ({
      id: r.id,
      environmentId: r.environment_id,
      eventId: r.event_id,
      kind: r.kind,
      endpointId: r.endpoint_id,
      endpointVersion: r.endpoint_version,
      url: r.url,
      state: r.state,
      attemptCount: r.attempt_count,
      cycle: r.cycle,
      nextAttemptAt: r.next_attempt_at,
      leaseOwner: r.lease_owner,
      leaseExpiresAt: r.lease_expires_at,
      orderId: r.order_id,
      merchantReference: r.merchant_reference,
      transactionId: r.transaction_id,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
      deliveredAt: r.delivered_at,
    }),
    deliveryToRow: (d: DeliveryRecord): DeliveryRow => ({
      id: d.id,
      environment_id: d.environmentId,
      event_id: d.eventId,
      kind: d.kind,
      endpoint_id: d.endpointId,
      endpoint_version: d.endpointVersion,
      url: d.url,
      state: d.state,
      attempt_count: d.attemptCount,
      cycle: d.cycle,
      next_attempt_at: d.nextAttemptAt,
      order_id: d.orderId,
      merchant_reference: d.merchantReference,
      transaction_id: d.transactionId,
      created_at: d.createdAt,
      updated_at: d.updatedAt,
      delivered_at: d.deliveredAt,
    }),
    attemptFromRow: (r: AttemptRow<B>): AttemptRecord => ({
      deliveryId: r.delivery_id,
      cycle: r.cycle,
      number: r.number,
      startedAt: r.started_at,
      durationMs: r.duration_ms,
      signatureTimestamp: r.signature_timestamp,
      outcome: r.outcome,
      statusCode: r.status_code,
      errorClass: r.error_class,
      responseBody: r.response_body,
      success: d.fromBool(r.success),
    }),
    attemptToRow: (a: AttemptRecord): AttemptRow<B> => ({
      delivery_id: a.deliveryId,
      cycle: a.cycle,
      number: a.number,
      started_at: a.startedAt,
      duration_ms: a.durationMs,
      signature_timestamp: a.signatureTimestamp,
      outcome: a.outcome,
      status_code: a.statusCode,
      error_class: a.errorClass,
      response_body: a.responseBody,
      success: d.toBool(a.success),
    }),
  };
  return {
    ...m,
    /** A delivery the queue claimed, read back with its event and the secret to sign with. */
    claimedFromRow: (r: ClaimedRow): ClaimedDelivery => ({
      delivery: m.deliveryFromRow(r),
      event: m.eventFromRow({
        id: r.e_id,
        environment_id: r.e_environment_id,
        type: r.e_type,
        payload: r.e_payload,
        order_id: r.e_order_id,
        merchant_reference: r.e_merchant_reference,
        transaction_id: r.e_transaction_id,
        created_at: r.e_created_at,
        trace_context: r.e_trace_context,
      }),
      secretEnc: r.secret_enc,
      signatureScheme: r.signature_scheme,
      ...(r.max_per_second !== null ? { maxPerSecond: Number(r.max_per_second) } : {}),
      endpointFailures: r.endpoint_failures === null ? 0 : Number(r.endpoint_failures),
    }),
  };
}

/** The row mappers of one dialect, as rowMapping builds them. */
export type RowMapping<B, J> = ReturnType<typeof rowMapping<B, J>>;
