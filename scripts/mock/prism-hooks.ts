// Imported before Prism, two module hooks for its mock generator:
// - its `require('@faker-js/faker')` gets faker-en.cjs (one locale) instead of the package's
//   main entry, which loads every locale (seconds of start-up and about 40 MiB);
// - json-schema-faker's pattern generator keeps what it parsed (randexp-cache.ts).
import { registerHooks } from 'node:module';
import { JSF_MAIN, withRandExpCache } from './randexp-cache.ts';

const SHIM = new URL('./faker-en.cjs', import.meta.url).href;

let randExpCached = false;
/** Whether json-schema-faker was loaded with the pattern cache in this process. */
export const randExpCacheApplied = (): boolean => randExpCached;

registerHooks({
  resolve: (specifier, context, next) => (specifier === '@faker-js/faker' ? { url: SHIM, shortCircuit: true } : next(specifier, context)),
  load: (url, context, next) => {
    const loaded = next(url, context);
    if (!JSF_MAIN.test(url) || loaded.source === undefined || loaded.source === null) return loaded;
    const patched = withRandExpCache(typeof loaded.source === 'string' ? loaded.source : Buffer.from(loaded.source as Uint8Array).toString('utf8'));
    if (patched === null) return loaded;
    randExpCached = true;
    return { ...loaded, source: patched };
  },
});
