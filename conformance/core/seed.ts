// Seeds derived from the run's seed: every check draws its own values from `--seed N`, so a run
// repeats exactly and adding a check does not change the values of the others.

/** A 32-bit seed for one purpose, derived from the run's seed and a label (stable under reordering). */
export function subSeed(seed: number, label: string): number {
  let h = 0x811c9dc5;
  for (const ch of `${seed}/${label}`) {
    h ^= ch.codePointAt(0) ?? 0;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}
