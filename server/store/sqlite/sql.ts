// The repositories' view of a SQLite connection (../sql.ts). Their queries use PostgreSQL's
// $n placeholders; better-sqlite3 binds `?` in order, so each text is rewritten once: every
// $n becomes +? and the values are bound in the order the placeholders appear (a $n used twice
// is bound twice). better-sqlite3 is synchronous: each call runs its statement at once.
//
// Why `+?` and not `?`: SQLite lets the value bound to a bare parameter steer the query plan
// (a LIMIT ?, a `column = ?` the planner weighs, partial-index matching), and marks such a
// statement to be re-prepared whenever that parameter is bound again. better-sqlite3 binds
// every parameter on every call, so e.g. the newest-first user list (WHERE … = ? ORDER BY …
// LIMIT ?) was parsed and planned again, and its row constructor compiled again, on every
// request: two thirds of its cost. Unary + is a no-op on any value and has no affinity, like a
// bare parameter, but SQLite does not look through it at plan time, so a prepared statement
// keeps its plan (the same plan: the column side still matches its index). No repository
// query relies on a bound value to pick a partial index (those compare with literals).
import { compareDecimal, addDecimal } from '../../money/decimal.ts';
import type { DialectHooks } from '../repos/index.ts';
import type { Sql } from '../sql.ts';
import type { Db } from './db.ts';
import { insertSql, mapping, type Bit } from './rows.ts';

/**
 * The same rule for SQL written with named (@name) or bare ? parameters, such as the delivery
 * queue's: every parameter bound as +@name / +?. Only for statement texts whose string
 * literals hold no `?` or `@` (it does not parse SQL).
 */
export const keepPlan = (sql: string): string => sql.replace(/(?<![+\w])(@\w+|\?)/g, '+$1');

interface Positional {
  text: string;
  /** Index into the $n values of each ? in turn. */
  order: number[];
}

const rewritten = new Map<string, Positional>();

function positional(text: string): Positional {
  let p = rewritten.get(text);
  if (p === undefined) {
    const order: number[] = [];
    const out = text.replace(/\$(\d+)/g, (_, n: string) => {
      order.push(Number(n) - 1);
      return '+?';
    });
    p = { text: out, order };
    rewritten.set(text, p);
  }
  return p;
}

/** The statement and its values in ? order. */
function bound(text: string, params: readonly unknown[]): [string, unknown[]] {
  const p = positional(text);
  return [p.text, p.order.map((i) => params[i])];
}

export function sqliteSql(db: Db): Sql<Bit, string> {
  return {
    map: mapping,
    async one<R>(text: string, params: readonly unknown[]) {
      const [sql, values] = bound(text, params);
      return db.get<R>(sql, ...values);
    },
    async rows<R>(text: string, params: readonly unknown[]) {
      const [sql, values] = bound(text, params);
      return db.all<R>(sql, ...values);
    },
    async run(text, params) {
      const [sql, values] = bound(text, params);
      return db.run(sql, ...values).changes;
    },
    async insert(table, row) {
      db.run(insertSql(table, row), row);
    },
    // A failed statement undoes only itself in SQLite: the transaction stays usable.
    guarded: (op) => op(),
    commitOrder: 'seq',
    true: '1',
    anyOf(column, values, params) {
      const first = params.length + 1;
      params.push(...values);
      return `${column} IN (${values.map((_, i) => `$${first + i}`).join(', ')})`;
    },
    receives(eventTypes, type) {
      return `(${eventTypes} IS NULL OR EXISTS (SELECT 1 FROM json_each(${eventTypes}) WHERE value = ${type}))`;
    },
  };
}

/** What SQLite does its own way: order numbers from a sequence row, the wallet in exact decimals. */
export function sqliteHooks(db: Db): DialectHooks {
  return {
    insertionOrder: 'rowid',
    async nextOrderNumber(environmentId) {
      const r = db.get<{ last_value: number }>(
        `INSERT INTO order_number_sequences (environment_id, last_value) VALUES (?, 1)
         ON CONFLICT (environment_id) DO UPDATE SET last_value = last_value + 1
         RETURNING last_value`,
        environmentId,
      );
      if (!r) throw new Error('order number sequence returned no row');
      return r.last_value;
    },
    async adjustWallet(environmentId, delta) {
      // Exact decimal arithmetic in BigInt (never the database's numeric type, never floats).
      // The caller's transaction holds SQLite's write lock, so read-then-write cannot race.
      const r = db.get<{ wallet_balance: string }>('SELECT wallet_balance FROM environments WHERE id = ?', environmentId);
      if (!r) return null;
      const next = addDecimal(r.wallet_balance, delta);
      if (compareDecimal(next, '0') < 0) return null;
      db.run('UPDATE environments SET wallet_balance = ? WHERE id = ?', next, environmentId);
      return next;
    },
  };
}
