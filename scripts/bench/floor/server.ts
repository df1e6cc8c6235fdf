// The orders floor (bench:api): the least a server can do for `POST /v2/orders` with the same
// rows and the same durability as the real one, to measure the real one against. Bare
// node:http, one API key compared in memory, and a group commit: the orders that arrive while
// a batch commits go into the next one. It writes, into the product's own schema (a tenant made
// by `npm run admin -- tenant create`), what the server writes: the order, its order.created
// event and, when the environment has an active endpoint, the delivery. Durability as the
// server's: SQLite in WAL with synchronous=NORMAL and an fdatasync of the log before anyone is
// answered; PostgreSQL with synchronous_commit=on. It answers a body of the server's shape.
// Left out on purpose: metrics, logs, contract validation, the request deadline, per-order
// savepoints, Idempotency-Key, sending the webhooks. Plain JavaScript once its types are
// stripped: `node scripts/bench/floor/server.ts` (Node 23.6+, else --experimental-strip-types).
//
// Environment: STORE (sqlite|postgres), DB_FILE or DATABASE_URL, API_KEY, API_HASH,
// PORT. Prints "ready" once listening.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { fdatasync, openSync } from 'node:fs';
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Statement } from 'better-sqlite3';

const env = process.env;
const KEY = env.API_KEY!;
const HASH = Buffer.from(env.API_HASH!);
/** The key's environment, read from the store when the writer opens it. */
let ENV_ID = '';

interface Order {
  id: string;
  number: string;
  reference: string;
  amountMinor: number;
  at: number;
  eventId: string;
  payload: string;
  res: ServerResponse;
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
  // The log exists once this connection has written (a clean close of the last one removes it).
  let wal: number | null = null;
  ENV_ID = (db.prepare('SELECT environment_id FROM api_keys WHERE id = ?').get(KEY) as { environment_id: string }).environment_id;
  const bump = db.prepare('INSERT INTO order_number_sequences (environment_id, last_value) VALUES (?, ?) ON CONFLICT (environment_id) DO UPDATE SET last_value = last_value + excluded.last_value RETURNING last_value');
  const endpoint = db.prepare('SELECT id, version, url FROM webhook_endpoints WHERE environment_id = ? AND active = 1');
  const inserts = new Map<number, Statement[]>();
  const insertsFor = (n: number): Statement[] => {
    let s = inserts.get(n);
    if (s === undefined) {
      const values = (k: number): string => Array.from({ length: n }, () => `(${Array(k).fill('?').join(', ')})`).join(', ');
      s = [
        db.prepare(`INSERT INTO orders (${ORDER_COLS}) VALUES ${values(10)}`),
        db.prepare(`INSERT INTO events (${EVENT_COLS}) VALUES ${values(7)}`),
        db.prepare(`INSERT INTO deliveries (${DELIVERY_COLS}) VALUES ${values(15)}`),
      ];
      inserts.set(n, s);
    }
    return s;
  };
  return (batch) => {
    db.exec('BEGIN IMMEDIATE');
    const last = (bump.get(ENV_ID, batch.length) as { last_value: number }).last_value;
    batch.forEach((o, i) => (o.number = `ORD-${String(last - batch.length + 1 + i).padStart(6, '0')}`));
    const [orders, events, deliveries] = insertsFor(batch.length);
    orders!.run(batch.flatMap((o) => [o.id, ENV_ID, o.number, o.reference, o.amountMinor, '0', 'open', 'unpaid', o.at, o.at]));
    events!.run(batch.flatMap((o) => [o.eventId, ENV_ID, 'order.created', o.payload, o.id, o.reference, o.at]));
    const ep = endpoint.get(ENV_ID) as { id: string; version: number; url: string } | undefined;
    if (ep) deliveries!.run(batch.flatMap((o) => [deliveryId(), ENV_ID, o.eventId, 'order_event', ep.id, ep.version, ep.url, 'pending', 0, 1, o.at, o.id, o.reference, o.at, o.at]));
    db.exec('COMMIT');
    wal ??= openSync(`${env.DB_FILE}-wal`, 'r+');
    const fd = wal;
    return new Promise((resolve, reject) => fdatasync(fd, (err) => (err ? reject(err) : resolve())));
  };
}

async function postgresWriter(): Promise<Writer> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 4 });
  ENV_ID = (await pool.query('SELECT environment_id FROM api_keys WHERE id = $1', [KEY])).rows[0].environment_id;
  let next = 1;
  let end = 0;
  const reserve = async (n: number): Promise<number> => {
    if (end - next + 1 < n) {
      const size = Math.max(n, 100);
      const r = await pool.query('INSERT INTO order_number_sequences AS s (environment_id, last_value) VALUES ($1, $2) ON CONFLICT (environment_id) DO UPDATE SET last_value = s.last_value + $2 RETURNING last_value', [ENV_ID, size]);
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
    batch.forEach((o, i) => (o.number = `ORD-${String(first + i).padStart(6, '0')}`));
    const col = <T>(f: (o: Order) => T): T[] => batch.map(f);
    await pool.query({ name: 'floor', text, values: [ENV_ID, col((o) => o.id), col((o) => o.number), col((o) => o.reference), col((o) => o.amountMinor), col((o) => o.at), col((o) => o.eventId), col((o) => o.payload), col(deliveryId)] });
  };
}

/** One batch writing at a time; what arrives meanwhile waits for the next (SQLite: one writer). */
function groupCommit(write: Writer, concurrent: number): (o: Order) => void {
  let queue: Order[] = [];
  let running = 0;
  const drain = (): void => {
    if (running >= concurrent || queue.length === 0) return;
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

/** An id of the server's length (dlv_ and 26 characters). */
const deliveryId = (): string => `dlv_${randomBytes(13).toString('hex')}`;

function answer(o: Order): void {
  const at = new Date(o.at).toISOString();
  const body = `{"orderId":"${o.id}","orderNumber":"${o.number}","merchantReference":${JSON.stringify(o.reference)},"amountMinor":${o.amountMinor},"currency":"USD","status":"open","paymentStatus":"unpaid","receivedBaseUnits":"0","createdAt":"${at}","updatedAt":"${at}","payments":[]}`;
  o.res.writeHead(201, { 'content-type': 'application/json', location: `/v2/orders/${o.id}` }).end(body);
}

function authorised(req: IncomingMessage): boolean {
  const hash = Buffer.from(String(req.headers['x-api-hash'] ?? ''));
  return req.headers['x-api-key'] === KEY && hash.length === HASH.length && timingSafeEqual(hash, HASH);
}

const submit = groupCommit(env.STORE === 'postgres' ? await postgresWriter() : await sqliteWriter(), env.STORE === 'postgres' ? 2 : 1);
createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/v2/orders') return void res.writeHead(404).end();
  if (!authorised(req)) return void res.writeHead(401).end();
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const input = JSON.parse(Buffer.concat(chunks).toString()) as { merchantReference: string; amountMinor: number };
    const at = Date.now();
    const id = randomUUID();
    const eventId = randomBytes(32).toString('hex');
    const data = { orderId: id, merchantReference: input.merchantReference, amountMinor: input.amountMinor, currency: 'USD', status: 'open', receivedBaseUnits: '0' };
    const payload = JSON.stringify({ id: eventId, type: 'order.created', apiVersion: '2', createdAt: new Date(at).toISOString(), data });
    submit({ id, number: '', reference: input.merchantReference, amountMinor: input.amountMinor, at, eventId, payload, res });
  });
}).listen(Number(env.PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
