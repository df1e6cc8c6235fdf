// The sealed secrets of the store (domain/store.ts SealedSecretRepo), for key rotation: which
// key seals how many (by the values' prefixes: domain/secrets.ts owns the format), pages of
// the values still to re-seal, and a compare-and-set replace, so a value re-sealed while a
// merchant rotated it (a new secret, a new value) is left as the rotation wrote it.
import type { Sql } from '../sql.ts';
import type { SealedColumn, SealedSecretRepo, SealedValue } from '../../domain/store.ts';

const COLUMNS: Record<SealedColumn, { table: string; column: string }> = {
  'callback-secret': { table: 'environments', column: 'callback_secret_enc' },
  'endpoint-secret': { table: 'webhook_endpoints', column: 'secret_enc' },
};

/** "col starts with $n": substr, not LIKE (SQLite's LIKE ignores case, and `_` is a wildcard). */
const startsWith = (column: string, prefix: string, n: number): string => `substr(${column}, 1, ${prefix.length}) = $${n}`;

export function sealedRepo<B, J>(sql: Sql<B, J>): SealedSecretRepo {
  return {
    async census(which, prefixes) {
      const { table, column } = COLUMNS[which];
      const matches = prefixes.map((p, i) => startsWith(column, p, i + 1));
      const none = matches.length === 0 ? 'TRUE' : `NOT (${matches.join(' OR ')})`;
      const counts = matches.map((m, i) => `sum(CASE WHEN ${m} THEN 1 ELSE 0 END) AS c${i}`);
      const row = await sql.one<Record<string, number | string | null>>(
        `SELECT ${[...counts, `sum(CASE WHEN ${none} THEN 1 ELSE 0 END) AS other`, `min(CASE WHEN ${none} THEN substr(${column}, 1, 40) END) AS sample`].join(', ')} FROM ${table}`,
        prefixes,
      );
      const n = (v: number | string | null | undefined): number => Number(v ?? 0);
      return { counts: prefixes.map((_, i) => n(row?.[`c${i}`])), other: n(row?.other), otherSample: (row?.sample as string | null | undefined) ?? null };
    },
    async page(which, after, skipPrefix, limit) {
      const { table, column } = COLUMNS[which];
      return sql.rows<SealedValue>(
        `SELECT id, ${column} AS sealed FROM ${table} WHERE id > $1 AND NOT ${startsWith(column, skipPrefix, 2)} ORDER BY id LIMIT $3`,
        [after, skipPrefix, limit],
      );
    },
    async replace(which, id, expected, next) {
      const { table, column } = COLUMNS[which];
      return (await sql.run(`UPDATE ${table} SET ${column} = $3 WHERE id = $1 AND ${column} = $2`, [id, expected, next])) === 1;
    },
  };
}
