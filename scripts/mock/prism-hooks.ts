// Imported before Prism, for its mock generator:
// - its `require('@faker-js/faker')` gets faker-en.cjs (one locale) instead of the package's
//   main entry, which loads every locale (seconds of start-up and about 40 MiB);
// - its json-schema-faker keeps what it parsed of each pattern (randexp-cache.ts).
import { registerHooks } from 'node:module';
import { preloadJsfWithCache } from './randexp-cache.ts';

const SHIM = new URL('./faker-en.cjs', import.meta.url).href;

registerHooks({
  resolve: (specifier, context, next) => (specifier === '@faker-js/faker' ? { url: SHIM, shortCircuit: true } : next(specifier, context)),
});
preloadJsfWithCache();
