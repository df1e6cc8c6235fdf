// A thin layer over better-sqlite3: cached prepared statements, and SQLite's constraint
// errors turned into the store's own UniqueViolation so nothing SQLite-specific leaks out.
import Database from 'better-sqlite3';
import { UniqueViolation } from '../../domain/store.ts';

type Constraint = UniqueViolation['constraint'];

/** "UNIQUE constraint failed: <columns>" → which rule of the store it is. */
const UNIQUE_COLUMNS: Record<string, Constraint> = {
  'transactions.environment_id, transactions.type, transactions.third_party_id': 'third_party_id',
  'webhook_endpoints.environment_id, webhook_endpoints.url': 'active_endpoint',
  'orders.environment_id, orders.order_number': 'order_number',
  'service_accounts.tenant_id, service_accounts.email': 'service_account_email',
  'order_idempotency_keys.environment_id, order_idempotency_keys.idempotency_key': 'idempotency_key',
  'member_passkeys.credential_id': 'passkey_credential',
  // events and deliveries keep an integer seq as rowid; their public id is the identity.
  'events.id': 'primary_key',
  'deliveries.id': 'primary_key',
};

/** The store error for a driver error, or the error itself when it is not a known constraint. */
export function mapError(err: unknown): unknown {
  if (!(err instanceof Database.SqliteError)) return err;
  let constraint: Constraint | undefined;
  if (err.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') constraint = 'primary_key';
  else if (err.code === 'SQLITE_CONSTRAINT_UNIQUE') {
    const columns = /^UNIQUE constraint failed: (.+)$/.exec(err.message)?.[1];
    constraint = columns === undefined ? undefined : UNIQUE_COLUMNS[columns];
  }
  if (constraint === undefined) return err;
  const violation = new UniqueViolation(constraint);
  violation.cause = err;
  return violation;
}

export class Db {
  private readonly statements = new Map<string, Database.Statement>();

  /** `guard`: called before every statement; throws when none may run now (the writer's: group-commit.ts). */
  constructor(
    readonly raw: Database.Database,
    private readonly guard: () => void = () => undefined,
  ) {}

  statement(sql: string): Database.Statement {
    this.guard();
    let s = this.statements.get(sql);
    if (s === undefined) {
      s = this.raw.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  /** Runs a write; params are positional values or one object of named (@name) values. */
  run(sql: string, ...params: unknown[]): Database.RunResult {
    try {
      return this.statement(sql).run(...params);
    } catch (err) {
      throw mapError(err);
    }
  }

  get<T>(sql: string, ...params: unknown[]): T | undefined {
    try {
      return this.statement(sql).get(...params) as T | undefined;
    } catch (err) {
      throw mapError(err);
    }
  }

  all<T>(sql: string, ...params: unknown[]): T[] {
    try {
      return this.statement(sql).all(...params) as T[];
    } catch (err) {
      throw mapError(err);
    }
  }
}
