// The event stream's reads (GET /v2/events/stream): events of an environment in commit order,
// after an opaque cursor. The cursor must never pass an event that can still appear, or a
// resumed stream would lose it:
// - SQLite has one writer, so seq (taken at insert) is commit order.
// - PostgreSQL commits concurrently, so a transaction can commit seq 5 after another committed
//   seq 6. Rows carry the id of the transaction that wrote them (events.tx_id, migration 0006)
//   and are read in (tx_id, seq) order, only below the oldest transaction still running
//   (pg_snapshot_xmin): every transaction below it has ended, and every later one gets a
//   higher id, so nothing can appear behind the cursor. The xmin is the cluster's: a long
//   transaction on any database of the server delays the stream (never reorders or loses).
//   The head ("from now on") starts at that oldest running transaction, so it also carries the
//   snapshot's other facts (xmax and the transactions still running): a row of a transaction
//   that had committed when the stream opened is visible in that snapshot and is skipped, so
//   nothing recorded before the stream opened is replayed. Event cursors keep the snapshot
//   until they pass its xmax, after which every row is later than the opening by construction.
import { STREAM_CURSOR_MAX_LENGTH } from '../../../generated/vocabulary.ts';
import { InvalidCursorError } from '../../domain/store-errors.ts';
import type { EventType } from '../../domain/model.ts';
import type { Sql } from '../sql.ts';
import type { StreamedEvent } from '../../domain/store.ts';
import { bind } from './query.ts';

/** The snapshot the stream opened in (PostgreSQL): ids at or above xmax had not started, and
 * `running` had not ended; every other id between the head and xmax had committed already. */
export interface Opening {
  xmax: bigint;
  running: bigint[];
}

/** A position: the writing transaction's id (always 0 on SQLite), the row's seq, and while the
 * position is below the opening's xmax, the opening. */
export interface Position {
  tx: bigint;
  seq: number;
  opening: Opening | null;
}

const ID = '(0|[1-9][0-9]{0,19})';
const TEXT = new RegExp(`^${ID}\\.(0|[1-9][0-9]{0,15})(?:~${ID}~((?:${ID},)*${ID})?)?$`);
/** A head whose snapshot would not fit the spec's StreamCursor starts at its xmin without it
 * (at least once: a few events committed just before the opening may come again). */
const CURSOR_TEXT = new RegExp(`^[A-Za-z0-9_-]{1,${STREAM_CURSOR_MAX_LENGTH}}$`);

export function encodeStreamCursor(p: Position): string {
  // Running ids are written as their distance below xmax: short, as they are recent.
  const opening = p.opening ? `~${p.opening.xmax}~${p.opening.running.map((x) => p.opening!.xmax - x).join(',')}` : '';
  return Buffer.from(`${p.tx}.${p.seq}${opening}`, 'utf8').toString('base64url');
}

/** The position a stream cursor stands for; throws InvalidCursorError unless we made it. */
export function decodeStreamCursor(cursor: string): Position {
  const text = CURSOR_TEXT.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const m = TEXT.exec(text);
  const position = m ? { tx: BigInt(m[1]!), seq: Number(m[2]), opening: m[3] === undefined ? null : openingOf(BigInt(m[3]), m[4]) } : null;
  // Canonical form only, as the page cursors (../cursor.ts).
  if (!position || !Number.isSafeInteger(position.seq) || !consistent(position) || encodeStreamCursor(position) !== cursor) {
    throw new InvalidCursorError(cursor);
  }
  return position;
}

const XID8_MAX = 2n ** 63n - 1n;

/** What PostgreSQL will accept as xid8 and pg_snapshot: ids in range, running ids ascending
 * between the position and xmax. */
function consistent(p: Position): boolean {
  if (p.tx > XID8_MAX) return false;
  if (!p.opening) return true;
  const { xmax, running } = p.opening;
  return xmax <= XID8_MAX && p.tx < xmax && running.every((x, i) => x >= p.tx && x < xmax && (i === 0 || x > running[i - 1]!));
}

function openingOf(xmax: bigint, distances: string | undefined): Opening {
  return { xmax, running: distances ? distances.split(',').map((d) => xmax - BigInt(d)) : [] };
}

/** The cursor after a row: it keeps the opening only while rows below its xmax may still come,
 * and only while it fits the spec's StreamCursor: a row's seq is longer than the head's 0, so
 * an opening that just fitted the head may not fit after it. Without the opening the stream is
 * at least once, as the head's own fallback: a few events committed just before the opening
 * may come again, none is lost, and the server never issues a cursor it would refuse. */
export function positionAfter(tx: bigint, seq: number, opening: Opening | null): Position {
  if (!opening || tx >= opening.xmax) return { tx, seq, opening: null };
  const kept = { tx, seq, opening: { xmax: opening.xmax, running: opening.running.filter((x) => x >= tx) } };
  return encodeStreamCursor(kept).length <= STREAM_CURSOR_MAX_LENGTH ? kept : { tx, seq, opening: null };
}

interface Row {
  seq: number | string;
  tx: string | null;
}

/** The cursor of "now": every event committed later comes after it. */
export async function streamHead(sql: Sql<unknown, unknown>, environmentId: string): Promise<string> {
  if (sql.commitOrder === 'seq') {
    const r = await sql.one<{ seq: number | null }>('SELECT max(seq) AS seq FROM events WHERE environment_id = $1', [environmentId]);
    return encodeStreamCursor({ tx: 0n, seq: Number(r?.seq ?? 0), opening: null });
  }
  // Rows of the oldest running transaction and later ones still come: start just before them,
  // remembering which of the later ids had committed by now.
  const r = await sql.one<{ xmin: string; xmax: string; running: string[] | null }>(
    `SELECT pg_snapshot_xmin(s)::text AS xmin, pg_snapshot_xmax(s)::text AS xmax,
            ARRAY(SELECT x::text FROM pg_snapshot_xip(s) AS x ORDER BY x) AS running
       FROM pg_current_snapshot() AS s`,
    [],
  );
  const xmin = BigInt(r!.xmin);
  const head = positionAfter(xmin, 0, { xmax: BigInt(r!.xmax), running: (r!.running ?? []).map(BigInt) });
  const cursor = encodeStreamCursor(head);
  return cursor.length <= STREAM_CURSOR_MAX_LENGTH ? cursor : encodeStreamCursor({ tx: xmin, seq: 0, opening: null });
}

/** At most `limit` events after `cursor`, oldest first, each with the cursor that resumes after it. */
export async function streamAfter<R extends object>(
  sql: Sql<unknown, unknown>,
  from: (row: R) => StreamedEvent['event'],
  environmentId: string,
  opts: { cursor: string; types: readonly EventType[]; limit: number },
): Promise<StreamedEvent[]> {
  const after = decodeStreamCursor(opts.cursor);
  const params: unknown[] = [environmentId];
  const where = ['environment_id = $1'];
  if (opts.types.length > 0) where.push(sql.anyOf('type', opts.types, params));
  let order: string;
  let tx: string;
  if (sql.commitOrder === 'seq') {
    where.push(`seq > ${bind(params, after.seq)}`);
    order = 'seq';
    tx = 'NULL';
  } else {
    where.push(`(tx_id, seq) > (${bind(params, after.tx.toString())}::xid8, ${bind(params, after.seq)})`);
    where.push('tx_id < pg_snapshot_xmin(pg_current_snapshot())');
    if (after.opening) where.push(`NOT pg_visible_in_snapshot(tx_id, ${bind(params, snapshotText(after.tx, after.opening))}::pg_snapshot)`);
    order = 'tx_id, seq';
    tx = 'tx_id::text';
  }
  const rows = await sql.rows<R & Row>(`SELECT *, ${tx} AS tx FROM events WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ${bind(params, opts.limit)}`, params);
  return rows.map((r) => ({ event: from(r), cursor: encodeStreamCursor(positionAfter(BigInt(r.tx ?? 0), Number(r.seq), after.opening)) }));
}

/** pg_snapshot's text form: xmin:xmax:running. Ids below xmin count as visible, but the cursor
 * already excludes them. */
function snapshotText(xmin: bigint, o: Opening): string {
  return `${xmin}:${o.xmax}:${o.running.join(',')}`;
}
