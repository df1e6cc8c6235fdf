// Which store failures mean "the store cannot serve right now" (the database is unreachable
// or restarting, the disk is full, the data folder is read-only) rather than a bug: part of the
// Store port, as store-errors.ts is. The HTTP layer answers those 503 store-unavailable with
// Retry-After, the start-up loop and readiness wait and retry on them, without knowing which
// implementation runs. In every case the failed transaction wrote nothing: PostgreSQL rolled
// it back (or never began it), SQLite rolled back its savepoint. The implementations let their
// drivers' errors through, so the codes below are those drivers' (node-postgres' SQLSTATEs and
// socket errors, better-sqlite3's result codes): data here, no driver is imported.
import { OVERLOADED, OutcomeUnknown } from './store-errors.ts';

/** Network errors of the driver's socket. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * PostgreSQL SQLSTATEs: class 08 (connection exception), 57P01..57P03 (admin shutdown, crash
 * shutdown, cannot connect now: a restart), 53xxx (insufficient resources: disk full, out of
 * memory, too many connections), 25006 (read-only transaction: a standby after fail-over),
 * and the session limits the store sets (postgres/deadlines.ts): 57014 (statement_timeout),
 * 55P03 (lock_timeout), 25P03 (idle_in_transaction_session_timeout): the database is too slow
 * right now, and the statement's transaction rolled back.
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '25006', '57014', '55P03', '25P03']);
function isUnavailableSqlState(code: string): boolean {
  return code.startsWith('08') || code.startsWith('53') || UNAVAILABLE_SQLSTATES.has(code);
}

/** node-postgres's own messages when a connection dies or never comes. */
const PG_CONNECTION_MESSAGES = [/Connection terminated/i, /timeout exceeded when trying to connect/i, /Client has encountered a connection error/i, /connection timeout/i, /timeout expired/i];

/** SQLite result codes (better-sqlite3 puts them in `code`, extended codes included); out of memory as PostgreSQL's 53200. */
function isUnavailableSqliteCode(code: string): boolean {
  return (
    code === 'SQLITE_FULL' ||
    code === 'SQLITE_NOMEM' ||
    code.startsWith('SQLITE_READONLY') ||
    code.startsWith('SQLITE_IOERR') ||
    code.startsWith('SQLITE_CANTOPEN') ||
    code === 'SQLITE_BUSY' ||
    code === 'SQLITE_LOCKED'
  );
}

const MAX_DEPTH = 4;

/** True when err (or an error it wraps) says the store is unavailable, not that a statement is wrong. */
export function isStoreUnavailable(err: unknown, depth = 0): boolean {
  if (depth > MAX_DEPTH || err === null || typeof err !== 'object') return false;
  // Its cause is a lost connection, but the write may have gone in: never "nothing was written".
  if (err instanceof OutcomeUnknown) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code) || code === OVERLOADED || isUnavailableSqliteCode(code)) return true;
    if (/^[0-9A-Z]{5}$/.test(code) && isUnavailableSqlState(code)) return true;
  }
  const message = (err as { message?: unknown }).message;
  if (typeof message === 'string' && PG_CONNECTION_MESSAGES.some((re) => re.test(message))) return true;
  // AggregateError (connecting to several addresses) and wrapped causes.
  const errors = (err as { errors?: unknown }).errors;
  if (Array.isArray(errors) && errors.some((e) => isStoreUnavailable(e, depth + 1))) return true;
  return isStoreUnavailable((err as { cause?: unknown }).cause, depth + 1);
}

/** A short, internals-free reason for logs and /readyz: the error code, else its class. */
export function unavailableReason(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  const errors = (err as { errors?: unknown } | null)?.errors;
  if (Array.isArray(errors) && errors.length > 0) return unavailableReason(errors[0]);
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message.length > 0 ? message.slice(0, 120) : 'unknown';
}
