// The payments-conformance package: one ESM file (dist/bin.js) with the suite, contract/ and
// generated/ code bundled in, its npm dependencies left external; the contract documents it
// checks against copied beside it (contract/), so the package needs nothing of the repository.
import { copyFile, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { defineConfig } from 'tsup';
import { API_NAMES } from '../generated/vocabulary.ts';

const GENERATED = path.resolve(import.meta.dirname, '..', 'generated');
const CONTRACT = path.resolve(import.meta.dirname, 'contract');

async function copyDocuments(): Promise<void> {
  await rm(CONTRACT, { recursive: true, force: true });
  await mkdir(path.join(CONTRACT, 'openapi'), { recursive: true });
  await mkdir(path.join(CONTRACT, 'asyncapi'), { recursive: true });
  for (const api of API_NAMES) await copyFile(path.join(GENERATED, 'openapi', `${api}.json`), path.join(CONTRACT, 'openapi', `${api}.json`));
  await copyFile(path.join(GENERATED, 'asyncapi', 'webhooks.json'), path.join(CONTRACT, 'asyncapi', 'webhooks.json'));
}

export default defineConfig({
  entry: { bin: 'bin.ts' },
  format: ['esm'],
  platform: 'node',
  target: 'node22',
  outDir: 'dist',
  clean: true,
  tsconfig: 'tsconfig.json',
  onSuccess: copyDocuments,
});
