// SQLite's dialect of the shared row mapping (../rows.ts): INTEGER 0/1 booleans, the JSON
// column as text, decimals as text unchanged. Named parameters (@column) carry the same
// snake_case names as the columns.
import * as core from '../rows.ts';

type Bit = 0 | 1;

const sqlite: core.Dialect<Bit, string> = {
  toBool: (v) => (v ? 1 : 0),
  fromBool: (v) => v === 1,
  toJson: (v) => JSON.stringify(v),
  fromJson: (v) => JSON.parse(v) as unknown,
  toDecimal: (v) => v,
  fromDecimal: (v) => v,
};

export type { EnvironmentRow, OrderRow, ServiceAccountRow, TenantRow } from '../rows.ts';
export type ApiKeyRow = core.ApiKeyRow<string>;
export type MemberRow = core.MemberRow<Bit>;
export type TransactionRow = core.TransactionRow<Bit>;
export type EndpointRow = core.EndpointRow<Bit>;
export type AttemptRow = core.AttemptRow<Bit>;
/** events and deliveries keep an integer seq as rowid (newest-first cursors). */
export type EventRow = core.EventRow & { seq: number };
export type DeliveryRow = core.DeliveryRow & { seq: number };

export const {
  tenantFromRow,
  tenantToRow,
  environmentFromRow,
  environmentToRow,
  apiKeyFromRow,
  apiKeyToRow,
  memberFromRow,
  memberToRow,
  serviceAccountFromRow,
  serviceAccountToRow,
  transactionFromRow,
  transactionToRow,
  orderFromRow,
  orderToRow,
  eventFromRow,
  eventToRow,
  endpointFromRow,
  endpointToRow,
  deliveryFromRow,
  deliveryToRow,
  attemptFromRow,
  attemptToRow,
} = core.rowMapping(sqlite);

/** `INSERT INTO table (a, b) VALUES (@a, @b)` for the keys of a row. */
export function insertSql(table: string, row: object): string {
  const cols = Object.keys(row);
  return `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')})`;
}
