// A thin layer over node-postgres: the pool settings every connection shares (BIGINT read as
// a JavaScript number), PostgreSQL's unique-violation errors turned into the store's own
// UniqueViolation by constraint name, and the savepoint that keeps a transaction usable
// after a caught violation.
import pg from 'pg';
import { UniqueViolation } from '../../domain/store.ts';
import { isStoreUnavailable } from '../../domain/store-unavailable.ts';

type Constraint = UniqueViolation['constraint'];

/** The named constraints of migrations/ → which rule of the store it is (primary keys: *_pkey). */
const UNIQUE_CONSTRAINTS: Record<string, Constraint> = {
  transactions_third_party_id: 'third_party_id',
  webhook_endpoints_active_url: 'active_endpoint',
  orders_order_number: 'order_number',
  service_accounts_email: 'service_account_email',
  order_idempotency_keys_key: 'idempotency_key',
  member_passkeys_credential_id: 'passkey_credential',
  // events and deliveries keep a BIGSERIAL seq as primary key; their public id is the identity.
  events_id: 'primary_key',
  deliveries_id: 'primary_key',
};

/** The uniqueness rule of each table besides its id (see migrations/0001_init.sql). */
const TABLE_RULES: Record<string, Constraint> = {
  transactions: 'third_party_id',
  webhook_endpoints: 'active_endpoint',
  orders: 'order_number',
  service_accounts: 'service_account_email',
  order_idempotency_keys: 'idempotency_key',
  member_passkeys: 'passkey_credential',
};

/** SQLSTATEs worth running the whole transaction again for. */
const RETRYABLE = new Set(['40001', '40P01']); // serialization_failure, deadlock_detected

const sqlState = (err: unknown): string | undefined => (err instanceof pg.DatabaseError ? err.code : undefined);

/** The store error for a driver error, or the error itself when it is not a known constraint. */
export function mapError(err: unknown): unknown {
  if (!(err instanceof pg.DatabaseError) || err.code !== '23505' || err.constraint === undefined) return err;
  const constraint = UNIQUE_CONSTRAINTS[err.constraint] ?? (err.constraint.endsWith('_pkey') ? 'primary_key' : undefined);
  if (constraint === undefined) return err;
  const violation = new UniqueViolation(constraint);
  violation.cause = err;
  return violation;
}

/**
 * Undoes what failed with `cause` (a savepoint's rollback). Should the undo fail too, the
 * transaction is unusable and the undo's error goes up; unless the connection was gone already:
 * then the undo can only fail with pg's "not queryable", and `cause` says why (a deadline, a
 * lost host).
 */
export async function undoAfter(cause: unknown, undo: () => Promise<void>): Promise<void> {
  try {
    await undo();
  } catch (err) {
    throw isStoreUnavailable(cause) ? cause : err;
  }
}

/** A deadlock or serialization failure: the transaction did nothing and may simply run again. */
export function isRetryable(err: unknown): boolean {
  const code = sqlState(err) ?? sqlState((err as { cause?: unknown } | null)?.cause);
  return code !== undefined && RETRYABLE.has(code);
}

const INT8_OID = 20;

/** BIGINT columns hold epoch milliseconds, seqs and counts: all well inside Number's exact range. */
function parseInt8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new RangeError(`BIGINT value ${text} does not fit a JavaScript number`);
  return n;
}

export const typeParsers: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary' ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

type Client = pg.Pool | pg.PoolClient;

/** Queries on a pool or on one transaction's client; driver errors come out mapped. */
export class Conn {
  constructor(private readonly client: Client) {}

  async rows<T extends pg.QueryResultRow>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return (await this.query<T>(sql, params)).rows;
  }

  async one<T extends pg.QueryResultRow>(sql: string, params: readonly unknown[] = []): Promise<T | undefined> {
    return (await this.query<T>(sql, params)).rows[0];
  }

  /** Runs a write; returns how many rows it touched. */
  async run(sql: string, params: readonly unknown[] = []): Promise<number> {
    return (await this.query(sql, params)).rowCount ?? 0;
  }

  /**
   * Runs a write that may break a uniqueness rule inside a SAVEPOINT: PostgreSQL aborts the
   * whole transaction on an error, and the caller may catch the UniqueViolation and go on
   * (earlier writes then still commit). Only for a transaction's client, one call at a time.
   */
  async guarded<T>(op: () => Promise<T>): Promise<T> {
    await this.client.query('SAVEPOINT guarded_write');
    let value: T;
    try {
      value = await op();
    } catch (err) {
      await undoAfter(err, async () => {
        await this.client.query('ROLLBACK TO SAVEPOINT guarded_write');
        await this.client.query('RELEASE SAVEPOINT guarded_write');
      });
      throw err;
    }
    await this.client.query('RELEASE SAVEPOINT guarded_write');
    return value;
  }

  /**
   * INSERT of one row (keys are column names). A unique conflict is reported as the store's
   * UniqueViolation without aborting the transaction: `ON CONFLICT DO NOTHING` instead of a
   * savepoint, one round trip instead of three on the hot path; only on a conflict is one more
   * query made, to tell the table's rule from a repeated id.
   */
  async insert(table: string, row: object & { id?: unknown }): Promise<void> {
    if ((await this.run(insertIgnoring(table, row, 1), Object.values(row))) === 1) return;
    throw await this.conflictOf(table, row);
  }

  /** The UniqueViolation of a row that `ON CONFLICT DO NOTHING` left out: a repeated id, or the table's rule. */
  async conflictOf(table: string, row: object & { id?: unknown }): Promise<UniqueViolation> {
    const repeatedId = row.id !== undefined && (await this.one(`SELECT 1 AS found FROM ${table} WHERE id = $1`, [row.id])) !== undefined;
    return new UniqueViolation(repeatedId ? 'primary_key' : (TABLE_RULES[table] ?? 'primary_key'));
  }

  private async query<T extends pg.QueryResultRow>(sql: string, params: readonly unknown[]): Promise<pg.QueryResult<T>> {
    try {
      return await this.client.query<T>({ name: statementName(sql), text: sql, values: params as unknown[] });
    } catch (err) {
      throw mapError(err);
    }
  }
}

/** `INSERT … ON CONFLICT DO NOTHING` of one row (keys are column names), its values bound from $first on. */
export function insertIgnoring(table: string, row: object, first: number): string {
  const cols = Object.keys(row);
  return `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + first}`).join(', ')}) ON CONFLICT DO NOTHING`;
}

/**
 * Named (prepared) statements: node-postgres prepares each name once per connection, and
 * every later run skips PostgreSQL's parse and plan. The store's SQL is a fixed set of texts
 * (a few variants per query at most), so the names stay few.
 */
const names = new Map<string, string>();
function statementName(sql: string): string {
  let name = names.get(sql);
  if (name === undefined) {
    name = `s${names.size + 1}`;
    names.set(sql, name);
  }
  return name;
}

/** `1500.25000000` (NUMERIC(38,8) as text) → `1500.25`; zero is `0`. */
export function shortDecimal(text: string): string {
  if (!text.includes('.')) return text;
  const trimmed = text.replace(/0+$/, '').replace(/\.$/, '');
  return trimmed === '-0' ? '0' : trimmed;
}

const DECIMAL_8 = /^-?(0|[1-9][0-9]*)(\.[0-9]{1,8})?$/;

/** Refuses what NUMERIC(38,8) would silently round: more than 8 places, or not a decimal at all. */
export function assertDecimal8(value: string): string {
  if (!DECIMAL_8.test(value)) throw new RangeError(`not a decimal with at most 8 places: ${value}`);
  return value;
}
