// The orders floor (bench:api): the least a server can do for `POST /v2/orders` with the same
// rows and the same durability as the real one, to measure the real one against. Bare
// node:http, one API key compared in memory, and a group commit. It writes, into the product's
// own schema (a tenant made by `npm run admin -- tenant create`), what the server writes: the
// order, its order.created event and, when the environment has an active endpoint, the
// delivery. Durability as the server's: SQLite in WAL with synchronous=NORMAL and an fdatasync
// of the log before anyone is answered; PostgreSQL with synchronous_commit=on. It answers a
// body of the server's shape.
//
// Lean by construction (issue 71): plain Node (`node scripts/bench/floor/server.ts`: Node strips
// the types once at load, no loader hooks; before Node 23.6, --experimental-strip-types), every
// statement prepared once, the answer's fixed bytes built once, the environment and its
// endpoint read once at start (the bench sets them before it starts the floor), one COMMIT and
// one fdatasync a batch. SQLite checkpoints its log every 10 000 pages, not 1 000: the pages
// that the random ids (order, event) dirty batch after batch are copied back once, and the
// database file synced a tenth as often (a sixth less CPU an order on the bench's machine).
// Overlapping the syncs of successive batches was tried: smaller batches, more CPU an order.
// Left out on purpose: metrics, logs, contract validation, the request deadline, per-order
// savepoints, Idempotency-Key, sending the webhooks.
//
// Environment: STORE (sqlite|postgres), DB_FILE or DATABASE_URL, API_KEY, API_HASH,
// PORT. Prints "ready" once listening; exits on SIGTERM or SIGINT (a --cpu-prof is written).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { fdatasync, openSync } from 'node:fs';
import { randomFillSync, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Statement } from 'better-sqlite3';

const env = process.env;
const KEY = env.API_KEY!;
const HASH = Buffer.from(env.API_HASH!);

interface Order {
  id: string;
  number: string;
  reference: string;
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

/** `(?, ?, …), …`: n rows of k placeholders. */
const placeholders = (n: number, k: number): string => Array.from({ length: n }, () => `(${Array(k).fill('?').join(', ')})`).join(', ');

/** The batch's rows of one table, flat, in the statement's column order. */
function flat(batch: readonly Order[], width: number, row: (o: Order, out: unknown[], at: number) => void): unknown[] {
  const out = new Array<unknown>(batch.length * width);
  for (let i = 0; i < batch.length; i++) row(batch[i]!, out, i * width);
  return out;
}

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
  // One set of INSERTs a batch size, each prepared the first time a batch of that size comes.
  const inserts: (Statement[] | undefined)[] = [];
  const insertsFor = (n: number): Statement[] =>
    (inserts[n] ??= [
      db.prepare(`INSERT INTO orders (${ORDER_COLS}) VALUES ${placeholders(n, 10)}`),
      db.prepare(`INSERT INTO events (${EVENT_COLS}) VALUES ${placeholders(n, 7)}`),
      ...(ep ? [db.prepare(`INSERT INTO deliveries (${DELIVERY_COLS}) VALUES ${placeholders(n, 15)}`)] : []),
    ]);
  // The log exists once this connection has written (a clean close of the last one removes it).
  let wal: number | null = null;
  return (batch) => {
    begin.run();
    const first = (bump.get(envId, batch.length) as number) - batch.length + 1;
    for (let i = 0; i < batch.length; i++) batch[i]!.number = orderNumber(first + i);
    const [orders, events, deliveries] = insertsFor(batch.length);
    orders!.run(flat(batch, 10, (o, v, i) => orderRow(o, v, i, envId)));
    events!.run(flat(batch, 7, (o, v, i) => eventRow(o, v, i, envId)));
    if (ep) deliveries!.run(flat(batch, 15, (o, v, i) => deliveryRow(o, v, i, envId, ep)));
    commit.run();
    const fd = (wal ??= openSync(`${env.DB_FILE}-wal`, 'r+'));
    return new Promise((resolve, reject) => fdatasync(fd, (err) => (err ? reject(err) : resolve())));
  };
}

// A row's values from `i` on, in the column order of ORDER_COLS, EVENT_COLS, DELIVERY_COLS.
function orderRow(o: Order, v: unknown[], i: number, envId: string): void {
  v[i] = o.id;
  v[i + 1] = envId;
  v[i + 2] = o.number;
  v[i + 3] = o.reference;
  v[i + 4] = o.amountMinor;
  v[i + 5] = '0';
  v[i + 6] = 'open';
  v[i + 7] = 'unpaid';
  v[i + 8] = o.at;
  v[i + 9] = o.at;
}

function eventRow(o: Order, v: unknown[], i: number, envId: string): void {
  v[i] = o.eventId;
  v[i + 1] = envId;
  v[i + 2] = 'order.created';
  v[i + 3] = o.payload;
  v[i + 4] = o.id;
  v[i + 5] = o.reference;
  v[i + 6] = o.at;
}

function deliveryRow(o: Order, v: unknown[], i: number, envId: string, ep: Endpoint): void {
  v[i] = deliveryId();
  v[i + 1] = envId;
  v[i + 2] = o.eventId;
  v[i + 3] = 'order_event';
  v[i + 4] = ep.id;
  v[i + 5] = ep.version;
  v[i + 6] = ep.url;
  v[i + 7] = 'pending';
  v[i + 8] = 0;
  v[i + 9] = 1;
  v[i + 10] = o.at;
  v[i + 11] = o.id;
  v[i + 12] = o.reference;
  v[i + 13] = o.at;
  v[i + 14] = o.at;
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
    await pool.query({ name: 'floor', text, values: [envId, col((o) => o.id), col((o) => o.number), col((o) => o.reference), col((o) => o.amountMinor), col((o) => o.at), col((o) => o.eventId), col((o) => o.payload), col(deliveryId)] });
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
/** An id of the server's length (dlv_ and 26 characters). */
const deliveryId = (): string => `dlv_${randomHex(13)}`;

// Random bytes drawn from a pool filled 4 KiB at a time, as randomUUID does for its ids: one
// call into the CSPRNG per pool rather than one per id.
const pool = Buffer.alloc(4096);
let used = pool.length;
function randomHex(bytes: number): string {
  if (used + bytes > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  used += bytes;
  return pool.toString('hex', used - bytes, used);
}

// The answer's fixed parts, built once.
const FIXED_FIELDS = '"currency":"USD","status":"open","paymentStatus":"unpaid","receivedBaseUnits":"0"';
const BODY_END = ',"payments":[]}';

function answer(o: Order): void {
  const body = `{"orderId":"${o.id}","orderNumber":"${o.number}","merchantReference":${JSON.stringify(o.reference)},"amountMinor":${o.amountMinor},${FIXED_FIELDS},"createdAt":"${o.createdAt}","updatedAt":"${o.createdAt}"${BODY_END}`;
  o.res.writeHead(201, ['content-type', 'application/json', 'location', `/v2/orders/${o.id}`]).end(body);
}

function authorised(req: IncomingMessage): boolean {
  const hash = Buffer.from(String(req.headers['x-api-hash'] ?? ''));
  return req.headers['x-api-key'] === KEY && hash.length === HASH.length && timingSafeEqual(hash, HASH);
}

/** The order of a request body, with its event: what the batch writes and the answer says. */
function orderOf(body: string, res: ServerResponse): Order {
  const input = JSON.parse(body) as { merchantReference: string; amountMinor: number };
  const at = Date.now();
  const createdAt = new Date(at).toISOString();
  const id = randomUUID();
  const eventId = randomHex(32);
  const reference = JSON.stringify(input.merchantReference);
  const payload = `{"id":"${eventId}","type":"order.created","apiVersion":"2","createdAt":"${createdAt}","data":{"orderId":"${id}","merchantReference":${reference},"amountMinor":${input.amountMinor},"currency":"USD","status":"open","receivedBaseUnits":"0"}}`;
  return { id, number: '', reference: input.merchantReference, amountMinor: input.amountMinor, at, createdAt, eventId, payload, res };
}

const postgres = env.STORE === 'postgres';
const submit = groupCommit(postgres ? await postgresWriter() : await sqliteWriter(), postgres ? 2 : 1);
createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/v2/orders') return void res.writeHead(404).end();
  if (!authorised(req)) return void res.writeHead(401).end();
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => submit(orderOf((chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString(), res)));
}).listen(Number(env.PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0));
