// The event stream's reads (GET /v2/events/stream): events of an environment in commit order,
// after an opaque cursor. The cursor must never pass an event that can still appear, or a
// resumed stream would lose it:
// - SQLite has one writer, so seq (taken at insert) is commit order.
// - PostgreSQL commits concurrently, so a transaction can commit seq 5 after another committed
//   seq 6. Rows carry the id of the transaction that wrote them (events.tx_id, migration 0006)
//   and are read in (tx_id, seq) order, only below the oldest transaction still running
//   (pg_snapshot_xmin): every transaction below it has ended, and every later one gets a
//   higher id, so nothing can appear behind the cursor.
import { InvalidCursorError } from '../errors.ts';
import type { EventType } from '../../domain/model.ts';
import type { Sql } from '../sql.ts';
import type { StreamedEvent } from '../types.ts';
import { bind } from './query.ts';

/** A position: the writing transaction's id (always 0 on SQLite) and the row's seq. */
interface Position {
  tx: bigint;
  seq: number;
}

const TEXT = /^(0|[1-9][0-9]{0,19})\.(0|[1-9][0-9]{0,15})$/;

export function encodeStreamCursor(p: Position): string {
  return Buffer.from(`${p.tx}.${p.seq}`, 'utf8').toString('base64url');
}

/** The position a stream cursor stands for; throws InvalidCursorError unless we made it. */
export function decodeStreamCursor(cursor: string): Position {
  const text = /^[A-Za-z0-9_-]{1,64}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const m = TEXT.exec(text);
  const position = m ? { tx: BigInt(m[1]!), seq: Number(m[2]) } : null;
  // Canonical form only, as the page cursors (../cursor.ts).
  if (!position || !Number.isSafeInteger(position.seq) || encodeStreamCursor(position) !== cursor) throw new InvalidCursorError(cursor);
  return position;
}

interface Row {
  seq: number | string;
  tx: string | null;
}

/** The cursor of "now": every event committed later comes after it. */
export async function streamHead(sql: Sql<unknown, unknown>, environmentId: string): Promise<string> {
  if (sql.commitOrder === 'seq') {
    const r = await sql.one<{ seq: number | null }>('SELECT max(seq) AS seq FROM events WHERE environment_id = $1', [environmentId]);
    return encodeStreamCursor({ tx: 0n, seq: Number(r?.seq ?? 0) });
  }
  // Rows of the oldest running transaction and later ones still come: start just before them.
  const r = await sql.one<{ xmin: string }>('SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin', []);
  return encodeStreamCursor({ tx: BigInt(r!.xmin), seq: 0 });
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
    order = 'tx_id, seq';
    tx = 'tx_id::text';
  }
  const rows = await sql.rows<R & Row>(`SELECT *, ${tx} AS tx FROM events WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ${bind(params, opts.limit)}`, params);
  return rows.map((r) => ({ event: from(r), cursor: encodeStreamCursor({ tx: BigInt(r.tx ?? 0), seq: Number(r.seq) }) }));
}
