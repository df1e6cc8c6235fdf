// Rows of one table, many at once: what the bulk writes of the group commit (bulk-orders.ts,
// bulk-payouts.ts) insert a batch's rows with, one statement per table.
import type { Db } from './db.ts';

/** Rows of one table, many at once: `INSERT … VALUES (…), (…)` prepared once per count. */
export class MultiInsert {
  private readonly byCount = new Map<number, string>();

  constructor(
    private readonly table: string,
    private readonly columns: readonly string[],
  ) {}

  run(db: Db, rows: readonly object[]): void {
    if (rows.length === 0) return;
    let text = this.byCount.get(rows.length);
    if (text === undefined) {
      const one = `(${this.columns.map(() => '?').join(', ')})`;
      text = `INSERT INTO ${this.table} (${this.columns.join(', ')}) VALUES ${Array(rows.length).fill(one).join(', ')}`;
      this.byCount.set(rows.length, text);
    }
    const values: unknown[] = [];
    for (const row of rows) for (const c of this.columns) values.push((row as Record<string, unknown>)[c]);
    db.run(text, ...values);
  }
}

export const columnsOf = (row: object): string[] => Object.keys(row);
