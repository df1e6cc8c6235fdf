// The payments-webhooks package: the webhook helpers (index), the Web Crypto verifier for
// runtimes without node:crypto (web), the typed API clients (api) and the command (cli), as ESM
// and CommonJS with type declarations, and the signature test vectors
// (generated/signature-vectors.json, generated/standard-webhooks-vectors.json) beside them in dist/, without indentation.
// signing/, the generated types and openapi-fetch's
// code are bundled in: openapi-fetch's CommonJS build exports its client as `exports.default`,
// which a CommonJS bundle of an ESM-typed package would read as the whole module object (Node's
// interop), so its ESM build is inlined instead. openapi-fetch stays a dependency for the types
// the declarations name.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Plugin } from 'esbuild';
import { defineConfig, type Options } from 'tsup';

/** The vector files shipped in dist/ (the Standard Webhooks cases also alone, for other libraries). */
const VECTOR_FILES = ['signature-vectors.json', 'standard-webhooks-vectors.json'];
const shipVectors = async (name: string): Promise<void> =>
  writeFile(path.resolve(import.meta.dirname, 'dist', name), JSON.stringify(JSON.parse(await readFile(path.resolve(import.meta.dirname, '..', 'generated', name), 'utf8'))));

// The `payments-webhooks` command (cli/bin.ts, package.json "bin" through bin.js) is one ESM file
// with the same code bundled in (the signing code included, so it signs exactly as the service
// does), and eventsource-parser too: a few kilobytes bundled, where the installed package with its
// maps and sources would put payments-webhooks over its 1 MB installed-size goal. The same for
// @cfworker/json-schema, trigger's validator.
// trigger's schemas and examples (the webhooks AsyncAPI bundle) go into the command without their
// prose (descriptions, summaries, titles): what validation and the examples need, at about half
// the size. Minified too: together they keep the package under its 1 MB installed goal.
const withoutProse: Plugin = {
  name: 'webhooks-document-without-prose',
  setup(b) {
    b.onLoad({ filter: /webhooks\.bundled\.json$/ }, async (args) => ({ contents: JSON.stringify(JSON.parse(await readFile(args.path, 'utf8'), dropProse)), loader: 'json' }));
  },
};

function dropProse(key: string, value: unknown): unknown {
  return (key === 'description' || key === 'summary' || key === 'title') && typeof value === 'string' ? undefined : value;
}

const shared: Options = { platform: 'node', target: 'node22', outDir: 'dist', noExternal: ['openapi-fetch'], tsconfig: 'tsconfig.json' };

export default defineConfig([
  {
    ...shared,
    entry: { index: 'webhooks/index.ts', web: 'webhooks/web.ts', api: 'api.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    clean: true,
    // Shipped without indentation: the same JSON, about a fifth smaller installed.
    onSuccess: async () => {
      await Promise.all(VECTOR_FILES.map(shipVectors));
    },
  },
  {
    ...shared,
    entry: { cli: 'cli/bin.ts' },
    format: ['esm'],
    dts: false,
    clean: false,
    minify: true,
    noExternal: ['openapi-fetch', 'eventsource-parser', '@cfworker/json-schema'],
    esbuildPlugins: [withoutProse],
  },
]);
