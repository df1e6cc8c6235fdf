// PostgreSQL's dialect of the shared row mapping (../rows.ts), as node-postgres returns rows:
// BOOLEAN as boolean, BIGINT as number (db.ts), JSONB parsed (written as JSON text: a JS array
// would go out as a PostgreSQL array), NUMERIC(38,8) as text. Row keys are the column names,
// so a row is also what Conn.insert takes.
import * as core from '../rows.ts';
import { assertDecimal8, shortDecimal } from './db.ts';

const postgres: core.Dialect<boolean, unknown> = {
  toBool: (v) => v,
  fromBool: (v) => v,
  toJson: (v) => JSON.stringify(v),
  fromJson: (v) => v,
  toDecimal: assertDecimal8,
  fromDecimal: shortDecimal,
};

export type { DeliveryRow, EnvironmentRow, EventRow, OrderRow, ServiceAccountRow, TenantRow } from '../rows.ts';
export type ApiKeyRow = core.ApiKeyRow<unknown>;
export type MemberRow = core.MemberRow<boolean>;
export type TransactionRow = core.TransactionRow<boolean>;
export type EndpointRow = core.EndpointRow<boolean>;
export type AttemptRow = core.AttemptRow<boolean>;

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
} = core.rowMapping(postgres);

/** Response bodies are untrusted bytes; PostgreSQL TEXT cannot hold U+0000, so it becomes U+FFFD. */
export const textSafe = (s: string | null): string | null => (s === null ? null : s.replace(/\u0000/g, '\uFFFD'));
