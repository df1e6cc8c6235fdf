// Imported before Prism: its `require('@faker-js/faker')` gets faker-en.cjs (one locale) instead
// of the package's main entry, which loads every locale (seconds of start-up and about 40 MiB).
import { registerHooks } from 'node:module';

const SHIM = new URL('./faker-en.cjs', import.meta.url).href;

registerHooks({
  resolve: (specifier, context, next) => (specifier === '@faker-js/faker' ? { url: SHIM, shortCircuit: true } : next(specifier, context)),
});
