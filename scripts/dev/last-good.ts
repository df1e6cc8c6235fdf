// The last copy of spec/ that passed the loop's checks. The mock serves it (SPEC_DIR), so a bad
// save never reaches the mock: Prism reloads the document it serves when its file changes, and
// would stop on one it cannot parse.
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SPEC_DIR } from '../lib/specs.ts';

export async function createLastGood(dir: string): Promise<string> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(path.dirname(dir), { recursive: true });
  await cp(SPEC_DIR, dir, { recursive: true });
  return dir;
}

/** Copies saved files that passed into the last good copy, each in one write. */
export async function promote(files: readonly string[], dir: string): Promise<void> {
  for (const file of files) {
    const target = path.join(dir, path.relative(SPEC_DIR, file));
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, await readFile(file));
  }
}
