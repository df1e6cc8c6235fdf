// The Store port: everything the domain persists, behind one interface that the SQLite and
// PostgreSQL implementations (server/store/) both pass (see store/suite/). It lives in the
// domain, which owns it; the implementations import it from here, never the other way. No SQL
// dialect leaks through it: times are epoch milliseconds, amounts are exact decimal strings,
// JSON is text. The records are the domain's (model.ts); the store only persists them.
import type {
  ApiKeyRecord,
  AttemptRecord,
  DeliveryRecord,
  DeliveryState,
  EndpointRecord,
  EnvironmentName,
  EnvironmentRecord,
  EventRecord,
  EventType,
  MemberRecord,
  PasskeyRecord,
  Millis,
  OrderRecord,
  ServiceAccountRecord,
  SignatureScheme,
  TenantRecord,
  TransactionRecord,
  TransactionStatus,
  TransactionType,
  UnnumberedOrder,
  UntargetedDelivery,
} from './model.ts';

/** A page of newest-first rows and the cursor of the next page. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

// ---- Repositories (used inside a transaction) ---------------------------------------

export interface TenantRepo {
  insertTenant(t: TenantRecord): Promise<void>;
  getTenant(id: string): Promise<TenantRecord | null>;
  insertEnvironment(e: EnvironmentRecord): Promise<void>;
  getEnvironment(id: string): Promise<EnvironmentRecord | null>;
  findEnvironment(tenantId: string, name: EnvironmentName): Promise<EnvironmentRecord | null>;
  /** Adds delta (exact decimal, may be negative) to the wallet unless the result would go below zero. Returns the new balance, or null when refused. */
  adjustWallet(environmentId: string, delta: string): Promise<string | null>;
  setCallbackSecret(environmentId: string, secretEnc: string): Promise<void>;
  insertApiKey(k: ApiKeyRecord): Promise<void>;
  getApiKey(id: string): Promise<ApiKeyRecord | null>;
  /** Sets revokedAt on the tenant's key unless it is already revoked; false when nothing changed. */
  revokeApiKey(id: string, tenantId: string, at: Millis): Promise<boolean>;
  insertMember(m: MemberRecord): Promise<void>;
  getMemberByTokenHash(tokenHash: string): Promise<MemberRecord | null>;
  setMemberActive(memberId: string, tenantId: string, active: boolean): Promise<boolean>;
  /** Bumps the member's session epoch, ending every portal session of theirs; false when no such member. */
  endMemberSessions(memberId: string, tenantId: string): Promise<boolean>;
  insertServiceAccount(a: ServiceAccountRecord): Promise<void>;
  findServiceAccount(tenantId: string, email: string): Promise<ServiceAccountRecord | null>;
  getMember(memberId: string): Promise<MemberRecord | null>;
}

/** The developer portal's passkeys (WebAuthn credentials) of members. */
export interface PasskeyRepo {
  /** Throws UniqueViolation('passkey_credential') when the credential id is already registered (to anyone). */
  insert(p: PasskeyRecord): Promise<void>;
  getByCredentialId(credentialId: string): Promise<PasskeyRecord | null>;
  /** The member's passkeys, oldest first. */
  listByMember(memberId: string): Promise<PasskeyRecord[]>;
  /**
   * Records a verified use: the new counter and the time, only while the stored counter is still
   * `seenCounter` (the one the assertion was verified against); false when another use came first.
   */
  recordUse(id: string, use: { seenCounter: number; counter: number; backedUp: boolean; at: Millis }): Promise<boolean>;
  /** Removes the member's passkey; false when the member has none of that id. */
  remove(id: string, memberId: string): Promise<boolean>;
  /** Removes every passkey of the member; answers how many. */
  removeAllOfMember(memberId: string): Promise<number>;
}

export interface TransactionRepo {
  /** Throws UniqueViolation('third_party_id') when (environment, type, thirdPartyId) exists. */
  insert(t: TransactionRecord): Promise<void>;
  /**
   * insert, then tenants.adjustWallet(t.environmentId, delta), in one round trip where the
   * store can. Throws as insert does (the wallet untouched); null when the wallet refused the
   * delta, with the row inserted: the caller's transaction must not commit then.
   */
  insertAndAdjustWallet(t: TransactionRecord, delta: string): Promise<string | null>;
  get(environmentId: string, id: string): Promise<TransactionRecord | null>;
  findByThirdPartyId(environmentId: string, type: TransactionType, thirdPartyId: string): Promise<TransactionRecord | null>;
  /** Status change guarded by the expected current status; false when it no longer matches. */
  updateStatus(
    environmentId: string,
    id: string,
    from: TransactionStatus,
    to: TransactionStatus,
    completedAt: Millis | null,
    extra?: { refundEmail?: string },
  ): Promise<boolean>;
  /**
   * Newest first, a page of at most `limit`. `cursor` is the nextCursor of the page before, for
   * this user only (InvalidCursorError otherwise): keyset paging, so new rows never shift pages.
   */
  listByUser(environmentId: string, userId: string, opts: { transactionId?: string; limit: number; cursor: string | null }): Promise<Page<TransactionRecord>>;
  /** The most recent matching transaction; both filters apply when both are given. */
  search(environmentId: string, q: { orderNumber?: string; txHash?: string }): Promise<TransactionRecord | null>;
  listByOrder(environmentId: string, orderId: string): Promise<TransactionRecord[]>;
}

export interface OrderRepo {
  /** Assigns the next order number of the environment (ORD-000001, ...). */
  nextOrderNumber(environmentId: string): Promise<string>;
  insert(o: OrderRecord): Promise<void>;
  get(environmentId: string, id: string): Promise<OrderRecord | null>;
  update(o: OrderRecord): Promise<void>;
  /** The order an Idempotency-Key created in the environment, with its request hash; null when unused. */
  findIdempotencyKey(environmentId: string, key: string): Promise<IdempotencyKeyRecord | null>;
  /** Throws UniqueViolation('idempotency_key') when the environment already recorded the key. */
  insertIdempotencyKey(environmentId: string, key: string, record: IdempotencyKeyRecord): Promise<void>;
}

export interface IdempotencyKeyRecord {
  orderId: string;
  /** SHA-256 (hex) of the canonical request body the key was first used with. */
  requestHash: string;
  createdAt: Millis;
}

export interface EventRepo {
  insert(e: EventRecord): Promise<void>;
  get(environmentId: string, id: string): Promise<EventRecord | null>;
  /** Newest first; `types` filters. Cursor is opaque to callers. */
  list(environmentId: string, opts: { types: readonly EventType[]; limit: number; cursor: string | null }): Promise<Page<EventRecord>>;
  /** The stream cursor of "now": every event committed later comes after it (GET /v2/events/stream). */
  streamHead(environmentId: string): Promise<string>;
  /**
   * At most `limit` events committed after `cursor` (a streamHead or StreamedEvent cursor of
   * this environment; InvalidCursorError otherwise), in commit order, `types` filtering (empty:
   * all). An event that can still commit behind the last one answered is never skipped: a
   * read that goes on from the last cursor misses nothing, from any instance.
   */
  streamAfter(environmentId: string, opts: { cursor: string; types: readonly EventType[]; limit: number }): Promise<StreamedEvent[]>;
  /**
   * Nothing lost after a disable (issue 69): the events of `types` created in [since, until)
   * that endpoint `missedBy` has no delivered delivery of and endpoint `to` has no delivery of,
   * oldest first, at most `limit`.
   */
  missed(environmentId: string, q: { missedBy: string; to: string; types: readonly EventType[]; since: Millis; until: Millis; limit: number }): Promise<EventRecord[]>;
}

/** An event of the stream with the opaque cursor that resumes after it. */
export interface StreamedEvent {
  event: EventRecord;
  cursor: string;
}

export interface EndpointRepo {
  /** Throws UniqueViolation('active_endpoint') when an active endpoint of the environment has its URL. */
  insert(e: EndpointRecord): Promise<void>;
  /**
   * Inserts `e` when its environment has fewer than `maxActive` active endpoints (false, and
   * nothing written, otherwise), holding the environment's row so that concurrent creations
   * count in turn. Throws as insert does.
   */
  insertWithin(e: EndpointRecord, maxActive: number): Promise<boolean>;
  get(environmentId: string, id: string): Promise<EndpointRecord | null>;
  /**
   * The endpoint read under a hold of its row until the transaction ends (PostgreSQL's row lock;
   * SQLite has one writer anyway): a read-modify-write that must not overwrite a concurrent
   * change (a rotation, an edit) with what it read before it.
   */
  getHeld(environmentId: string, id: string): Promise<EndpointRecord | null>;
  /** The environment's active endpoints, newest first. */
  listActive(environmentId: string): Promise<EndpointRecord[]>;
  /** Newest first, disabled ones included. */
  list(environmentId: string): Promise<EndpointRecord[]>;
  update(e: EndpointRecord): Promise<void>;
}

export interface DeliveryRepo {
  insert(d: DeliveryRecord): Promise<void>;
  /**
   * Inserts the event and `d` to each active endpoint of its environment whose event types
   * include the event's (its id, version and url): the fan-out. The first of those endpoints
   * by id takes `d.id`, each other one an id derived from it (fanOutDeliveryId). One statement
   * where the dialect allows it. `newOrder`, the order the event announces when it is new, is
   * inserted first, in the same statement. Returns whether any delivery was inserted.
   */
  insertWithEvent(event: EventRecord, d: UntargetedDelivery, newOrder?: OrderRecord): Promise<boolean>;
  get(environmentId: string, id: string): Promise<DeliveryRecord | null>;
  /** Newest first. `q` matches an exact order id, merchant reference or event id; `endpointId` keeps one endpoint's. */
  list(environmentId: string, opts: { q: string | null; limit: number; cursor: string | null; endpointId?: string | null }): Promise<Page<DeliveryRecord>>;
  attempts(deliveryId: string): Promise<AttemptRecord[]>;
  /**
   * Pending deliveries of the endpoint with a version below `version` become disabled (a change
   * of its event types raises the version too, so those of types it no longer receives go with
   * them). Other endpoints' deliveries are not touched. Returns how many.
   */
  disableOlderVersions(endpointId: string, version: number, now: Millis): Promise<number>;
  /**
   * A failed delivery (or a delivered one, with `delivered`) starts a new cycle: pending,
   * attemptCount 0, cycle+1, due at `dueAt` (default now), at the given url/version.
   */
  restart(d: {
    id: string;
    environmentId: string;
    endpointId: string | null;
    endpointVersion: number | null;
    url: string;
    now: Millis;
    dueAt?: Millis;
    delivered?: boolean;
  }): Promise<boolean>;
  /**
   * The order-event deliveries of the endpoint (any version) created in [since, until) that
   * are failed (or failed or delivered, with `delivered`), oldest first, at most `limit`; only
   * those whose event's type is in `eventTypes` (the endpoint's types; null: every type).
   */
  recoverable(
    environmentId: string,
    q: { endpointId: string; since: Millis; until: Millis; delivered: boolean; limit: number; eventTypes: readonly string[] | null },
  ): Promise<DeliveryRecord[]>;
}

// ---- Sealed secrets (key rotation, domain/secrets-rotation.ts) -------------------------

/**
 * Where the store keeps values sealed with the secrets key: each environment's callback secret,
 * and each webhook endpoint's signing secret (every endpoint row, the disabled ones too: a
 * delivery of theirs still pending signs with it).
 */
export type SealedColumn = 'callback-secret' | 'endpoint-secret';
export const SEALED_COLUMNS: readonly SealedColumn[] = ['callback-secret', 'endpoint-secret'];

/** One sealed value and the id of the row that holds it. */
export interface SealedValue {
  id: string;
  sealed: string;
}

/** What a column's values start with: how many with each of the prefixes asked about, how many with none. */
export interface SealedCensus {
  /** counts[i]: values starting with prefixes[i]. */
  counts: number[];
  /** Values starting with none of the prefixes. */
  other: number;
  /** The first 40 characters of the smallest such value (enough to name its key), or null. */
  otherSample: string | null;
}

export interface SealedSecretRepo {
  census(column: SealedColumn, prefixes: readonly string[]): Promise<SealedCensus>;
  /** Up to `limit` values of rows whose id is after `after`, in id order, leaving out those that start with `skipPrefix`. */
  page(column: SealedColumn, after: string, skipPrefix: string, limit: number): Promise<SealedValue[]>;
  /** Replaces the row's value with `next` when it still is `expected` (compare-and-set); false when it changed meanwhile. */
  replace(column: SealedColumn, id: string, expected: string, next: string): Promise<boolean>;
}

export interface Tx {
  tenants: TenantRepo;
  transactions: TransactionRepo;
  orders: OrderRepo;
  events: EventRepo;
  endpoints: EndpointRepo;
  deliveries: DeliveryRepo;
  passkeys: PasskeyRepo;
  sealed: SealedSecretRepo;
  /** Run after a successful commit (e.g. wake the delivery workers). */
  afterCommit(fn: () => void): void;
}

/**
 * The read methods of the repositories: what `Store.read` offers. Each read sees everything
 * committed before it started (one statement, one snapshot: like READ COMMITTED).
 */
export interface ReadTx {
  tenants: Pick<TenantRepo, 'getTenant' | 'getEnvironment' | 'findEnvironment' | 'getApiKey' | 'getMemberByTokenHash' | 'findServiceAccount' | 'getMember'>;
  transactions: Pick<TransactionRepo, 'get' | 'findByThirdPartyId' | 'listByUser' | 'search' | 'listByOrder'>;
  orders: Pick<OrderRepo, 'get' | 'findIdempotencyKey'>;
  events: Pick<EventRepo, 'get' | 'list' | 'streamHead' | 'streamAfter' | 'missed'>;
  endpoints: Pick<EndpointRepo, 'get' | 'listActive' | 'list'>;
  deliveries: Pick<DeliveryRepo, 'get' | 'list' | 'attempts' | 'recoverable'>;
  passkeys: Pick<PasskeyRepo, 'getByCredentialId' | 'listByMember'>;
  sealed: Pick<SealedSecretRepo, 'census' | 'page'>;
}

// ---- Delivery queue (outside domain transactions) --------------------------------------

export interface ClaimedDelivery {
  delivery: DeliveryRecord;
  event: EventRecord;
  /** Encrypted secret to sign with: the endpoint's, or the environment's callback secret. */
  secretEnc: string;
  /** The endpoint's signature scheme; `service-signature` for payout callbacks (spec/README.md). */
  signatureScheme: SignatureScheme;
  /** The endpoint's rate cap (maxPerSecond); absent: none. */
  maxPerSecond?: number;
  /** The endpoint's failed attempts in a row when claimed (issue 69); 0 or absent: healthy, or no endpoint. */
  endpointFailures?: number;
}

export interface AttemptResult {
  attempt: AttemptRecord;
  /** Next state after this attempt. */
  state: DeliveryState;
  nextAttemptAt: Millis | null;
  deliveredAt: Millis | null;
}

export interface ClaimOptions {
  owner: string;
  now: Millis;
  leaseMs: number;
  limit: number;
  /** Most live leases per destination (endpoint, or url for callbacks). */
  perEndpointLimit: number;
  /**
   * Skip every destination on which another owner holds a live lease: one owner serves a
   * destination at a time, so it may hold more leases on it than it sends at once (prefetch)
   * while the destination never sees more than that owner's own send limit. Default false:
   * perEndpointLimit counts every owner's leases.
   */
  exclusive?: boolean;
  /**
   * How far the claim may spread to destinations this owner holds no live lease on (those it
   * holds are not bounded by this). New destinations are taken earliest due first, each
   * counting min(its due deliveries, perDestination) send slots, until `slots` are covered. So
   * an owner takes on only the destinations it can send to now, and the others stay free for
   * other owners: with exclusive claims, the first claimer of a backlog spread over many
   * destinations otherwise held them all, and a second instance had nothing to send. Default:
   * no bound.
   */
  spread?: { slots: number; perDestination: number };
}

/** One attempt to record, for the lease the claim returned (`delivery.leaseExpiresAt`). */
export interface Completion {
  deliveryId: string;
  /** The claim's lease end: a completion for an older lease of the same delivery is refused. */
  leaseExpiresAt: Millis;
  result: AttemptResult;
}

export interface CompleteAndClaim {
  applied: boolean[];
  claimed: ClaimedDelivery[];
  claimError: Error | null;
}

export interface DeliveryQueue {
  /**
   * Leases up to `limit` due pending deliveries (nextAttemptAt <= now, no live lease) to
   * `owner` until now + leaseMs (PostgreSQL: at least 1 ms past the owner's previous claim's
   * lease end, so an owner and a lease end name one claim), oldest due first, with at most
   * `perEndpointLimit` leased at once per destination (endpoint, or url for callbacks). Never
   * hands one delivery to two owners.
   */
  claim(opts: ClaimOptions): Promise<ClaimedDelivery[]>;
  /**
   * Records a batch of attempts, then (when `claim` is given) claims, seeing the leases the
   * batch freed: one store call per batch. Each attempt is stored and its delivery moved on
   * only if `owner` still holds that very lease (owner and lease end); `applied` says, in
   * order, which were (a lost lease writes nothing). A delivery that became disabled meanwhile
   * keeps its state; the attempt is stored. Nothing is acknowledged before the whole batch is
   * durable (one commit, one fsync or WAL flush). The claim's failure never undoes the
   * recorded attempts: it comes back as `claimError`, with nothing claimed.
   */
  completeAndClaim(owner: string, completions: readonly Completion[], claim: ClaimOptions | null): Promise<CompleteAndClaim>;
  /** Gives leased deliveries back (drain on shutdown) without counting an attempt. */
  release(owner: string, deliveryIds: readonly string[]): Promise<void>;
  /**
   * Holds a destination (`e:<endpoint id>` or `u:<url>`, as deliveries.destination) back: no
   * owner claims its deliveries before `until` (a pause it has already that ends later stays).
   * A receiver's Retry-After, or a rate cap's next slot as its leases are given back.
   */
  pause(destination: string, until: Millis): Promise<void>;
  /**
   * Called by a process as it starts its delivery worker: gives back the leases that no live
   * worker can hold, without counting an attempt, so what was in flight when the last process
   * died goes out at once instead of after its leases expire. SQLite: every lease (the file
   * has one owner, this process, so any lease in it died with the one before). PostgreSQL:
   * none (other instances may hold live leases; a dead one's expire on their own). Returns
   * how many were given back.
   */
  releaseOrphaned(): Promise<number>;
  /** When the next pending delivery is due (including expiring leases), or null. */
  nextDueAt(): Promise<Millis | null>;
  /** Pending deliveries by state at `now`, for the operator's metrics (queue-sql.ts: STATS). */
  stats(now: Millis): Promise<QueueStats>;
  /**
   * Drops the idle connections the queue's calls use (the delivery watchdog's reset while they
   * fail or hang), and nothing else: the wake-ups' listener heals itself. Absent where there
   * is nothing to reconnect (SQLite).
   */
  reset?(): void;
}

/** Pending deliveries: due and unleased, leased (live lease), waiting for a later attempt; the oldest due time. */
export interface QueueStats {
  due: number;
  leased: number;
  waiting: number;
  /** nextAttemptAt of the oldest due, unleased delivery, or null when none is due. */
  oldestDueAt: Millis | null;
}

/**
 * A new order with its order.created event, for Store.createOrder: the domain's records, the
 * order number left to the store.
 */
export interface OrderCreation {
  order: UnnumberedOrder;
  event: EventRecord;
  /** Its delivery, written only when the environment has an active endpoint (insertWithEvent). */
  delivery: UntargetedDelivery;
  /** The Idempotency-Key the order is created under, if any, with the hash of its request. */
  idempotency: { key: string; requestHash: string } | null;
}

/** What createOrder did: the order went in with its number, or its key was already taken (nothing written). */
export type OrderCreated = { created: true; order: OrderRecord; delivery: boolean } | { created: false };

/** A new payout and the debit of its environment's wallet, for Store.createPayout. */
export interface PayoutCreation {
  transaction: TransactionRecord;
  /** The wallet's change: the payout's amount, negated (an exact decimal string). */
  walletDelta: string;
}

/** What createPayout did: the payout went in and the wallet paid it, or the wallet holds too little (`balance`; nothing written). */
export type PayoutCreated = { created: true } | { created: false; balance: string };

/** What Store.prune removes: rows created before the cutoffs (epoch milliseconds). */
export interface PruneRequest {
  /** Events, deliveries and their attempts created before this, per environment name. */
  activityBefore: Readonly<Record<EnvironmentName, Millis>>;
  /** Idempotency keys created before this. */
  keysBefore: Millis;
  /** At most this many deliveries, events and keys each (attempts go with their deliveries). */
  limit: number;
  /**
   * The bound of each of the batch's statements where the store has one (PostgreSQL: its
   * statement_timeout, PRUNE_STATEMENT_TIMEOUT); default the store's own. SQLite has none.
   */
  statementMs?: Millis;
}

export interface PruneResult {
  /** false when another instance held the pruning lock (PostgreSQL): nothing was done. */
  ran: boolean;
  deleted: { events: number; deliveries: number; attempts: number; idempotencyKeys: number };
  /** A table had `limit` expired rows or more: call again for the rest. */
  more: boolean;
  /** created_at of the oldest event and delivery left (null when none). */
  oldest: { events: Millis | null; deliveries: Millis | null };
}

/**
 * What a caller may pass to a store call: `signal`, aborted once nobody waits for the answer
 * (the request's deadline passed, its client went away). A call not started by then never
 * starts, and one still queued is dropped (CallCancelled: nothing written); one whose
 * statements were sent finishes or rolls back as it would have.
 */
export interface CallOptions {
  signal?: AbortSignal;
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  /** Applies the numbered migrations that are not applied yet. */
  migrate(): Promise<void>;
  /** Runs fn in one database transaction: everything it writes commits, or nothing does. */
  transaction<T>(fn: (tx: Tx) => Promise<T>, opts?: CallOptions): Promise<T>;
  /**
   * Runs read-only fn outside any write transaction: it never waits for a commit and never
   * pays for one (SQLite: a second, read-only connection in WAL mode; PostgreSQL: statements
   * on the pool, no BEGIN/COMMIT). It sees only committed data.
   */
  read<T>(fn: (tx: ReadTx) => Promise<T>, opts?: CallOptions): Promise<T>;
  /**
   * Creates an order in a transaction of its own: its number, the order, its event, the
   * event's delivery to the active endpoint, and its idempotency key. When the environment
   * already holds the key (committed, or committed meanwhile by a concurrent creation) nothing
   * is written and `created` is false: the caller reads the winner. One statement for many
   * concurrent creations where the store can (PostgreSQL's group commit), each still failing
   * alone.
   */
  createOrder(c: OrderCreation, opts?: CallOptions): Promise<OrderCreated>;
  /**
   * Inserts a payout and debits its environment's wallet, in a transaction of its own: both,
   * or nothing when the wallet cannot cover it (`created: false` with the wallet's balance). A
   * thirdPartyId already used for a payout of the environment throws UniqueViolation
   * ('third_party_id'), whatever the wallet holds. Concurrent creations share statements where
   * the store can (SQLite's group commit: one insert and one debit per environment for a
   * batch), each still deciding as if it ran alone, in the order they were queued.
   */
  createPayout(c: PayoutCreation, opts?: CallOptions): Promise<PayoutCreated>;
  /**
   * A token that moves whenever a commit may have changed the environment's transactions as
   * `read` sees them: equal tokens, equal reads, so a caller may keep what it built from one.
   * It moves before the writer is answered, so whoever saw a write acknowledged never gets an
   * older token. Another process's commit to the same database moves it within a short bound
   * (SQLite, the admin tool: EXTERNAL_CHECK_MS; PostgreSQL, another instance: STALENESS_MS in
   * postgres/versions.ts; both 100 ms). null while the store cannot vouch for that bound
   * (PostgreSQL: its listener is away or its heartbeat late): then keep nothing.
   */
  transactionsVersion(environmentId: string): string | null;
  readonly queue: DeliveryQueue;
  /** Called when deliveries may have become due, in this process or (PostgreSQL) another. */
  onDeliveriesReady(listener: () => void): () => void;
  /**
   * Called after a commit of this instance that recorded events, with their environment: the
   * event stream's wake-up. Another instance's commits are not heard (the stream polls too).
   */
  onEventsRecorded(listener: (environmentId: string) => void): () => void;
  /**
   * Removes one bounded batch of expired rows (retention.ts: the rules) in one short
   * transaction: deliveries that are not pending with their attempts and leases, events no
   * delivery refers to any more, idempotency keys. Orders and transactions are never removed.
   * One instance at a time on PostgreSQL (an advisory lock; another gets ran: false).
   */
  prune(req: PruneRequest): Promise<PruneResult>;
  close(): Promise<void>;
}

/** A uniqueness rule of the store was broken; `constraint` names which. */
export class UniqueViolation extends Error {
  constructor(readonly constraint: 'third_party_id' | 'active_endpoint' | 'order_number' | 'primary_key' | 'service_account_email' | 'idempotency_key' | 'passkey_credential') {
    super(`unique constraint violated: ${constraint}`);
    this.name = 'UniqueViolation';
  }
}

