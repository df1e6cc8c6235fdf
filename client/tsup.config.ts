// The payments-webhooks package: the webhook helpers (index) and the typed API clients (api),
// as ESM and CommonJS with type declarations. signing/, the generated types and openapi-fetch's
// code are bundled in: openapi-fetch's CommonJS build exports its client as `exports.default`,
// which a CommonJS bundle of an ESM-typed package would read as the whole module object (Node's
// interop), so its ESM build is inlined instead. openapi-fetch stays a dependency for the types
// the declarations name.
import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'webhooks/index.ts', api: 'api.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  platform: 'node',
  target: 'node22',
  outDir: 'dist',
  clean: true,
  noExternal: ['openapi-fetch'],
  tsconfig: 'tsconfig.json',
});
