// The orders floor (bench:api): the least a server can do for `POST /v2/orders` with the same
// rows and the same durability as the real one, to measure the real one against. Bare
// node:http, one API key compared in memory, and a group commit. It writes, into the product's
// own schema (a tenant made by `npm run admin -- tenant create`), what the server writes: the
// order, its order.created event and, when the environment has an active endpoint, the
// delivery, with the server's ids (server/domain/ids.ts). Durability as the server's: SQLite in
// WAL with synchronous=NORMAL and an fdatasync of the log before anyone is answered; PostgreSQL
// with synchronous_commit=on. It validates the body as the contract says (limits read from
// generated/) and answers a body of the server's shape.
//
// Lean by construction (issue 71): plain Node (Node strips the types once at load, no loader
// hooks), every statement prepared once (the multi-row INSERTs once per batch size), the
// answer's fixed bytes built once, the environment and its endpoint read once at start, one
// COMMIT and one fdatasync a batch, no closure nor promise per request; SQLite checkpoints
// every 10 000 pages, not 1 000. Ids that grow with time, as the server's: with random ones
// each order dirtied another page of every index on an id, which each commit copied to the log
// and each fdatasync wrote (74 against 32 µs of CPU an order for a batch of 32).
// Left out on purpose: metrics, logs, the request deadline, per-order savepoints,
// Idempotency-Key, the token fields of an order (answered 422), sending the webhooks.
//
// Environment: STORE (sqlite|postgres), DB_FILE or DATABASE_URL, API_KEY, API_HASH,
// PORT. Prints "ready" once listening; exits on SIGTERM or SIGINT (a --cpu-prof is written).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { fdatasync, openSync, readFileSync } from 'node:fs';
import { timingSafeEqual } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import { newDeliveryId, newEventId, newOrderId } from '../../../server/domain/ids.ts';

const env = process.env;
const KEY = env.API_KEY!;
const HASH = Buffer.from(env.API_HASH!);

interface Order {
  id: string;
  number: string;
  reference: string;
  /** The reference as JSON, for the event's payload and the answer. */
  referenceJson: string;
  amountMinor: number;
  at: number;
  createdAt: string;
  eventId: string;
  payload: string;
  res: ServerResponse;
}

/** The environment's active endpoint, as a delivery row copies it. */
interface Endpoint {
  id: string;
  version: number;
  url: string;
}

/** Writes one batch durably; resolves once every order of it may be answered. */
type Writer = (batch: Order[]) => Promise<void>;

const ORDER_COLS = 'id, environment_id, order_number, merchant_reference, amount_minor, received_base_units, status, payment_status, created_at, updated_at';
const EVENT_COLS = 'id, environment_id, type, payload, order_id, merchant_reference, created_at';
const DELIVERY_COLS = 'id, environment_id, event_id, kind, endpoint_id, endpoint_version, url, state, attempt_count, cycle, next_attempt_at, order_id, merchant_reference, created_at, updated_at';

async function sqliteWriter(): Promise<Writer> {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(env.DB_FILE!);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('wal_autocheckpoint = 10000');
  const envId = (db.prepare('SELECT environment_id FROM api_keys WHERE id = ?').get(KEY) as { environment_id: string }).environment_id;
  const ep = db.prepare('SELECT id, version, url FROM webhook_endpoints WHERE environment_id = ? AND active = 1').get(envId) as Endpoint | undefined;
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const bump = db.prepare('INSERT INTO order_number_sequences (environment_id, last_value) VALUES (?, ?) ON CONFLICT (environment_id) DO UPDATE SET last_value = last_value + excluded.last_value RETURNING last_value').pluck();
  // One set of INSERTs a batch size, each prepared the first time a batch of that size comes;
  // what every row has alike is in the text, not bound row by row (a tenth less CPU for them).
  const inserts: (Statement[] | undefined)[] = [];
  const rows = (n: number, row: string): string => Array(n).fill(row).join(', ');
  const envSql = `'${envId.replaceAll("'", "''")}'`;
  const insertsFor = (n: number): Statement[] =>
    (inserts[n] ??= [
      db.prepare(`INSERT INTO orders (${ORDER_COLS}) VALUES ${rows(n, `(?, ${envSql}, ?, ?, ?, '0', 'open', 'unpaid', ?, ?)`)}`),
      db.prepare(`INSERT INTO events (${EVENT_COLS}) VALUES ${rows(n, `(?, ${envSql}, 'order.created', ?, ?, ?, ?)`)}`),
      ...(ep ? [db.prepare(`INSERT INTO deliveries (${DELIVERY_COLS}) VALUES ${rows(n, `(?, ${envSql}, ?, 'order_event', ?, ?, ?, 'pending', 0, 1, ?, ?, ?, ?, ?)`)}`)] : []),
    ]);
  // The log exists once this connection has written (a clean close of the last one removes it).
  let wal: number | null = null;
  return (batch) => {
    const n = batch.length;
    begin.run();
    const first = (bump.get(envId, n) as number) - n + 1;
    const [orders, events, deliveries] = insertsFor(n);
    const o = new Array<unknown>(n * 6);
    const e = new Array<unknown>(n * 5);
    for (let i = 0; i < n; i++) {
      const x = batch[i]!;
      x.number = orderNumber(first + i);
      orderRow(x, o, i * 6);
      eventRow(x, e, i * 5);
    }
    orders!.run(o);
    events!.run(e);
    if (ep) {
      const d = new Array<unknown>(n * 10);
      for (let i = 0; i < n; i++) deliveryRow(batch[i]!, d, i * 10, ep);
      deliveries!.run(d);
    }
    commit.run();
    const fd = (wal ??= openSync(`${env.DB_FILE}-wal`, 'r+'));
    return new Promise((resolve, reject) => fdatasync(fd, (err) => (err ? reject(err) : resolve())));
  };
}

// A row's bound values from `i` on, in the order of the placeholders of insertsFor.
function orderRow(o: Order, v: unknown[], i: number): void {
  v[i] = o.id;
  v[i + 1] = o.number;
  v[i + 2] = o.reference;
  v[i + 3] = o.amountMinor;
  v[i + 4] = o.at;
  v[i + 5] = o.at;
}

function eventRow(o: Order, v: unknown[], i: number): void {
  v[i] = o.eventId;
  v[i + 1] = o.payload;
  v[i + 2] = o.id;
  v[i + 3] = o.reference;
  v[i + 4] = o.at;
}

function deliveryRow(o: Order, v: unknown[], i: number, ep: Endpoint): void {
  v[i] = newDeliveryId(o.at);
  v[i + 1] = o.eventId;
  v[i + 2] = ep.id;
  v[i + 3] = ep.version;
  v[i + 4] = ep.url;
  v[i + 5] = o.at;
  v[i + 6] = o.id;
  v[i + 7] = o.reference;
  v[i + 8] = o.at;
  v[i + 9] = o.at;
}

async function postgresWriter(): Promise<Writer> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 4 });
  const envId = (await pool.query('SELECT environment_id FROM api_keys WHERE id = $1', [KEY])).rows[0].environment_id as string;
  let next = 1;
  let end = 0;
  const reserve = async (n: number): Promise<number> => {
    if (end - next + 1 < n) {
      const size = Math.max(n, 100);
      const r = await pool.query('INSERT INTO order_number_sequences AS s (environment_id, last_value) VALUES ($1, $2) ON CONFLICT (environment_id) DO UPDATE SET last_value = s.last_value + $2 RETURNING last_value', [envId, size]);
      end = Number(r.rows[0].last_value);
      next = end - size + 1;
    }
    next += n;
    return next - n;
  };
  const text = `WITH o AS (INSERT INTO orders (${ORDER_COLS})
      SELECT id, $1, num, ref, amt, '0', 'open', 'unpaid', at, at FROM unnest($2::text[], $3::text[], $4::text[], $5::int[], $6::bigint[]) AS r(id, num, ref, amt, at)),
    ev AS (INSERT INTO events (${EVENT_COLS})
      SELECT eid, $1, 'order.created', payload, id, ref, at FROM unnest($7::text[], $8::text[], $2::text[], $4::text[], $6::bigint[]) WITH ORDINALITY AS r(eid, payload, id, ref, at, n) ORDER BY n)
    INSERT INTO deliveries (${DELIVERY_COLS})
      SELECT r.did, $1, r.eid, 'order_event', ep.id, ep.version, ep.url, 'pending', 0, 1, r.at, r.id, r.ref, r.at, r.at
        FROM unnest($9::text[], $7::text[], $2::text[], $4::text[], $6::bigint[]) AS r(did, eid, id, ref, at)
        JOIN webhook_endpoints ep ON ep.environment_id = $1 AND ep.active`;
  return async (batch) => {
    const first = await reserve(batch.length);
    for (let i = 0; i < batch.length; i++) batch[i]!.number = orderNumber(first + i);
    const col = <T>(f: (o: Order) => T): T[] => batch.map(f);
    await pool.query({ name: 'floor', text, values: [envId, col((o) => o.id), col((o) => o.number), col((o) => o.reference), col((o) => o.amountMinor), col((o) => o.at), col((o) => o.eventId), col((o) => o.payload), col((o) => newDeliveryId(o.at))] });
  };
}

/**
 * The orders queued meanwhile go as one batch once fewer than `inFlight` batches are unanswered:
 * on SQLite one (written, committed and synced, while the next batch gathers), on PostgreSQL two
 * statements in flight, as the server sends.
 */
function groupCommit(write: Writer, inFlight: number): (o: Order) => void {
  let queue: Order[] = [];
  let running = 0;
  const drain = (): void => {
    if (running >= inFlight || queue.length === 0) return;
    const batch = queue;
    queue = [];
    running += 1;
    write(batch).then(
      () => batch.forEach(answer),
      (err: Error) => batch.forEach((o) => o.res.writeHead(503).end(err.message)),
    ).finally(() => {
      running -= 1;
      drain();
    });
  };
  return (o) => {
    queue.push(o);
    if (queue.length === 1) setImmediate(drain);
  };
}

const orderNumber = (n: number): string => `ORD-${String(n).padStart(6, '0')}`;

// The answer's fixed parts, built once.
const FIXED_FIELDS = '"currency":"USD","status":"open","paymentStatus":"unpaid","receivedBaseUnits":"0"';
const BODY_END = ',"payments":[]}';

function answer(o: Order): void {
  const body = `{"orderId":"${o.id}","orderNumber":"${o.number}","merchantReference":${o.referenceJson},"amountMinor":${o.amountMinor},${FIXED_FIELDS},"createdAt":"${o.createdAt}","updatedAt":"${o.createdAt}"${BODY_END}`;
  o.res.writeHead(201, ['content-type', 'application/json', 'location', `/v2/orders/${o.id}`]).end(body);
}

/**
 * 0 when the request carries the key and its hash, each once, and declares a body within
 * MAX_BODY, else the status that refuses it: read off the raw headers, as the parsed headers
 * object is built on first use (the echo never builds it either).
 */
function refusal(raw: readonly string[]): number {
  let key: string | null = null;
  let hash: string | null = null;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 9 && name.toLowerCase() === 'x-api-key') key = key === null ? raw[i + 1]! : '';
    else if (name.length === 10 && name.toLowerCase() === 'x-api-hash') hash = hash === null ? raw[i + 1]! : '';
    else if (name.length === 14 && name.toLowerCase() === 'content-length' && Number(raw[i + 1]) > MAX_BODY) return 413;
  }
  if (key !== KEY || hash === null) return 401;
  const given = Buffer.from(hash);
  return given.length === HASH.length && timingSafeEqual(given, HASH) ? 0 : 401;
}

// What the contract allows of an order's body (CreateOrderRequest), read from generated/ once.
const schemas = (JSON.parse(readFileSync(new URL('../../../generated/openapi/orders.bundled.json', import.meta.url), 'utf8')) as { components: { schemas: Record<string, Record<string, number>> } }).components.schemas;
const REF = schemas.MerchantReference!;
const AMOUNT = schemas.AmountMinor!;
/** Bodies the server would refuse as too large never reach JSON.parse. */
const MAX_BODY = 64 * 1024;

/** Why the body is not an order the floor takes, or null: the contract's checks of the two fields, and no other field. */
function invalid(input: unknown): string | null {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return 'the body is not an object';
  const { merchantReference: ref, amountMinor: amount } = input as Record<string, unknown>;
  // JSON Schema counts code points; a string's length counts UTF-16 units, never fewer.
  if (typeof ref !== 'string' || ref.length < REF.minLength! || (ref.length > REF.maxLength! && [...ref].length > REF.maxLength!)) return 'merchantReference';
  if (typeof amount !== 'number' || !Number.isInteger(amount) || amount < AMOUNT.minimum! || amount > AMOUNT.maximum!) return 'amountMinor';
  for (const k in input) if (k !== 'merchantReference' && k !== 'amountMinor') return `${k}: the floor takes orders without a token`;
  return null;
}

// An order's createdAt, formatted once per millisecond (a batch's orders mostly share one).
let lastAt = 0;
let lastIso = '';

/** The order of a request body, with its event: what the batch writes and the answer says. */
function orderOf(input: { merchantReference: string; amountMinor: number }, res: ServerResponse): Order {
  const at = Date.now();
  const createdAt = at === lastAt ? lastIso : ((lastAt = at), (lastIso = new Date(at).toISOString()));
  const id = newOrderId(at);
  const eventId = newEventId(at);
  const referenceJson = JSON.stringify(input.merchantReference);
  const payload = `{"id":"${eventId}","type":"order.created","apiVersion":"2","createdAt":"${createdAt}","data":{"orderId":"${id}","merchantReference":${referenceJson},"amountMinor":${input.amountMinor},"currency":"USD","status":"open","receivedBaseUnits":"0"}}`;
  return { id, number: '', reference: input.merchantReference, referenceJson, amountMinor: input.amountMinor, at, createdAt, eventId, payload, res };
}

const refuse = (res: ServerResponse, status: number, detail: string): void =>
  void res.writeHead(status, ['content-type', 'application/problem+json']).end(JSON.stringify({ type: 'about:blank', title: 'refused by the floor', status, detail }));

/** A request as the floor reads it: the body's chunks kept on the request, its answer beside it (one pair of listeners, shared). */
type Request = IncomingMessage & { body: Buffer | null; res: ServerResponse };

function onData(this: Request, chunk: Buffer): void {
  this.body = this.body === null ? chunk : Buffer.concat([this.body, chunk]);
  if (this.body.length > MAX_BODY) this.destroy();
}

function onEnd(this: Request): void {
  let input: unknown;
  try {
    input = JSON.parse(this.body === null ? '' : this.body.toString());
  } catch {
    return refuse(this.res, 400, 'the body is not JSON');
  }
  const why = invalid(input);
  if (why !== null) return refuse(this.res, 422, why);
  submit(orderOf(input as { merchantReference: string; amountMinor: number }, this.res));
}

const postgres = env.STORE === 'postgres';
const submit = groupCommit(postgres ? await postgresWriter() : await sqliteWriter(), postgres ? 2 : 1);
createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/v2/orders') return void res.writeHead(404).end();
  const refused = refusal(req.rawHeaders);
  if (refused !== 0) return void res.writeHead(refused).end();
  const r = req as Request;
  r.body = null;
  r.res = res;
  r.on('data', onData);
  r.on('end', onEnd);
}).listen(Number(env.PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0));
