// npm run check:generated: regenerates into a scratch folder and fails when generated/ differs.
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { GENERATED_DIR } from './lib/specs.ts';
import { generateAll } from './generate.ts';

async function listFiles(dir: string, prefix = ''): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const files: string[] = [];
  for (const e of entries) {
    const name = path.join(prefix, e.name);
    if (e.isDirectory()) files.push(...(await listFiles(path.join(dir, e.name), name)));
    else files.push(name);
  }
  return files.sort();
}

const scratch = await mkdtemp(path.join(os.tmpdir(), 'check-generated-'));
try {
  await generateAll(scratch);
  const fresh = await listFiles(scratch);
  const committed = await listFiles(GENERATED_DIR);
  const stale: string[] = [];
  for (const f of new Set([...fresh, ...committed])) {
    const a = await readFile(path.join(scratch, f), 'utf8').catch(() => null);
    const b = await readFile(path.join(GENERATED_DIR, f), 'utf8').catch(() => null);
    if (a === null) stale.push(`${f} (no longer generated: delete it)`);
    else if (b === null) stale.push(`${f} (missing)`);
    else if (a !== b) stale.push(`${f} (differs)`);
  }
  if (stale.length > 0) {
    console.error(`generated/ is stale; run \`npm run generate\` and commit:\n${stale.map((s) => `  generated/${s}`).join('\n')}`);
    process.exitCode = 1;
  } else {
    console.log(`generated/ is fresh (${fresh.length} files).`);
  }
} finally {
  await rm(scratch, { recursive: true, force: true });
}
