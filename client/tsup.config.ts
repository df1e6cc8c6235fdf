// The payments-webhooks package: the webhook helpers (index) and the typed API clients (api),
// as ESM and CommonJS with type declarations. signing/ and the generated types are bundled in;
// openapi-fetch stays a dependency.
import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'webhooks/index.ts', api: 'api.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  platform: 'node',
  target: 'node22',
  outDir: 'dist',
  clean: true,
  tsconfig: 'tsconfig.json',
});
