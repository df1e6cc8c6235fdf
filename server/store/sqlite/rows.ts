// SQLite's dialect of the shared row mapping (../rows.ts): INTEGER 0/1 booleans, the JSON
// column as text, decimals as text unchanged. Named parameters (@column) carry the same
// snake_case names as the columns.
import { rowMapping, type Dialect } from '../rows.ts';

export type Bit = 0 | 1;

const sqlite: Dialect<Bit, string> = {
  toBool: (v) => (v ? 1 : 0),
  fromBool: (v) => v === 1,
  toJson: (v) => JSON.stringify(v),
  fromJson: (v) => JSON.parse(v) as unknown,
  toDecimal: (v) => v,
  fromDecimal: (v) => v,
};

export const mapping = rowMapping(sqlite);

/** `INSERT INTO table (a, b) VALUES (@a, @b)` for the keys of a row. */
export function insertSql(table: string, row: object): string {
  const cols = Object.keys(row);
  return `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')})`;
}
