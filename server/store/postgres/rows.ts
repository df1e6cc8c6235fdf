// PostgreSQL's dialect of the shared row mapping (../rows.ts), as node-postgres returns rows:
// BOOLEAN as boolean, BIGINT as number (db.ts), JSONB parsed (written as JSON text: a JS array
// would go out as a PostgreSQL array), NUMERIC(38,8) as text. Row keys are the column names,
// so a row is also what Conn.insert takes.
import type { UntargetedDelivery } from '../../domain/model.ts';
import { rowMapping, type Dialect } from '../rows.ts';
import { assertDecimal8, shortDecimal } from './db.ts';

const postgres: Dialect<boolean, unknown> = {
  toBool: (v) => v,
  fromBool: (v) => v,
  toJson: (v) => JSON.stringify(v),
  fromJson: (v) => v,
  toDecimal: assertDecimal8,
  fromDecimal: shortDecimal,
};

export const mapping = rowMapping(postgres);

/** A new delivery's row without the columns the active endpoint fills in (endpoint_id, endpoint_version, url). */
export function untargetedDeliveryRow(d: UntargetedDelivery) {
  const { endpoint_id: _, endpoint_version: __, url: ___, ...row } = mapping.deliveryToRow({ ...d, endpointId: null, endpointVersion: null, url: '' });
  return row;
}

/** Response bodies are untrusted bytes; PostgreSQL TEXT cannot hold U+0000, so it becomes U+FFFD. */
export const textSafe = (s: string | null): string | null => (s === null ? null : s.replace(/\u0000/g, '\uFFFD'));
