// The payments-webhooks package: the webhook helpers (index), the Web Crypto verifier for
// runtimes without node:crypto (web) and the typed API clients (api), as ESM and CommonJS with
// type declarations, and the signature test vectors (generated/signature-vectors.json) copied
// beside them as dist/signature-vectors.json. signing/, the generated types and openapi-fetch's
// code are bundled in: openapi-fetch's CommonJS build exports its client as `exports.default`,
// which a CommonJS bundle of an ESM-typed package would read as the whole module object (Node's
// interop), so its ESM build is inlined instead. openapi-fetch stays a dependency for the types
// the declarations name.
import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import { defineConfig } from 'tsup';

const VECTORS = path.resolve(import.meta.dirname, '..', 'generated', 'signature-vectors.json');

export default defineConfig({
  entry: { index: 'webhooks/index.ts', web: 'webhooks/web.ts', api: 'api.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  platform: 'node',
  target: 'node22',
  outDir: 'dist',
  clean: true,
  noExternal: ['openapi-fetch'],
  tsconfig: 'tsconfig.json',
  onSuccess: () => copyFile(VECTORS, path.resolve(import.meta.dirname, 'dist', 'signature-vectors.json')),
});
