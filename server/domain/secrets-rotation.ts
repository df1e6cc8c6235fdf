// Rotating the sealing key (docs/operations.md "Rotating the sealing key"): which key of the
// ring seals how many of the store's sealed values, the refusal to start while one is sealed by
// a key the ring lacks, and the re-seal pass that moves every value to the newest key.
//
// The pass runs beside the serving instances: it reads a page of values not yet under the
// newest key, and re-seals them in a short transaction of their own, each replace a
// compare-and-set on the value it read, so a secret a merchant rotated meanwhile (a new value,
// sealed by the instance's newest key) is left as the rotation wrote it. A pass cut short loses
// nothing and the next one starts with what is left (the page leaves out the values already
// under the newest key). Re-sealing keeps the secret: an endpoint's version does not move and
// its pending deliveries go on, signed as before.
import type { Services } from './context.ts';
import { IMPLICIT_KEY_ID, sealedKeyId, sealedPrefix, type SecretBox } from './secrets.ts';
import { SEALED_COLUMNS, type Store } from './store.ts';

/** How many sealed values each key of the ring seals; `missing`: those sealed by a key it lacks. */
export interface SealingCensus {
  /** Key id to the number of values it seals, for every key of the ring (0 included), newest first. */
  sealedBy: Record<string, number>;
  /** Values no key of the ring opens, and the id of one's key (null: a value of no known form). */
  missing: { count: number; keyId: string | null };
}

/** A value in the store is sealed by a key the ring lacks: the service cannot sign with it. */
export class MissingSealingKeyError extends Error {
  constructor(
    readonly keyId: string | null,
    readonly count: number,
  ) {
    super(
      keyId === null
        ? `${count} sealed secret(s) in the database are of no form this version knows: refusing to start`
        : `${count} sealed secret(s) in the database are sealed by key id ${keyId}, which SECRETS_KEY does not hold: ` +
          `add that key back to the ring (after the newest), run npm run admin -- secrets reseal, and only then remove it`,
    );
    this.name = 'MissingSealingKeyError';
  }
}

export const keyIdsOf = (secrets: SecretBox): readonly string[] => secrets.keyIds ?? [IMPLICIT_KEY_ID];

export async function sealingCensus(store: Store, keyIds: readonly string[]): Promise<SealingCensus> {
  const prefixes = keyIds.map(sealedPrefix);
  const sealedBy: Record<string, number> = Object.fromEntries(keyIds.map((id) => [id, 0]));
  const missing: SealingCensus['missing'] = { count: 0, keyId: null };
  for (const column of SEALED_COLUMNS) {
    const c = await store.read((tx) => tx.sealed.census(column, prefixes));
    keyIds.forEach((id, i) => (sealedBy[id] = (sealedBy[id] ?? 0) + (c.counts[i] ?? 0)));
    if (c.other > 0) {
      missing.count += c.other;
      missing.keyId ??= c.otherSample === null ? null : sealedKeyId(c.otherSample);
    }
  }
  return { sealedBy, missing };
}

/** Refuses (MissingSealingKeyError) when a value in the store is sealed by a key the ring lacks: checked at start. */
export async function assertSealingKeysHeld(store: Store, secrets: SecretBox): Promise<void> {
  const { missing } = await sealingCensus(store, keyIdsOf(secrets));
  if (missing.count > 0) throw new MissingSealingKeyError(missing.keyId, missing.count);
}

export interface ResealReport {
  /** The key every value is now sealed by. */
  newestKeyId: string;
  /** Values this pass re-sealed. */
  resealed: number;
  /** Values that changed between read and replace (a rotation meanwhile): left as they were written. */
  changedMeanwhile: number;
  batches: number;
  /** After the pass: how many values each key of the ring still seals. */
  sealedBy: Record<string, number>;
}

export const DEFAULT_RESEAL_BATCH = 100;
export const MAX_RESEAL_BATCH = 1000;

/** Re-seals every sealed value of the store with the ring's newest key, `batch` values per transaction. */
export async function resealSecrets(services: Pick<Services, 'store' | 'secrets'>, opts: { batch?: number } = {}): Promise<ResealReport> {
  const batch = opts.batch ?? DEFAULT_RESEAL_BATCH;
  if (!Number.isInteger(batch) || batch < 1 || batch > MAX_RESEAL_BATCH) throw new RangeError(`the batch must be a whole number from 1 to ${MAX_RESEAL_BATCH}, not ${batch}`);
  const { store, secrets } = services;
  const keyIds = keyIdsOf(secrets);
  const newestKeyId = keyIds[0] ?? IMPLICIT_KEY_ID;
  const newest = sealedPrefix(newestKeyId);
  const report: ResealReport = { newestKeyId, resealed: 0, changedMeanwhile: 0, batches: 0, sealedBy: {} };
  for (const column of SEALED_COLUMNS) {
    for (let after = ''; ; ) {
      const page = await store.read((tx) => tx.sealed.page(column, after, newest, batch));
      if (page.length === 0) break;
      const replaced = await store.transaction(async (tx) => {
        let n = 0;
        for (const v of page) if (await tx.sealed.replace(column, v.id, v.sealed, secrets.seal(secrets.open(v.sealed)))) n += 1;
        return n;
      });
      // Counted once committed.
      report.resealed += replaced;
      report.changedMeanwhile += page.length - replaced;
      report.batches += 1;
      after = page.at(-1)?.id ?? after;
    }
  }
  report.sealedBy = (await sealingCensus(store, keyIds)).sealedBy;
  return report;
}
