// vitest setupFiles (in every worker, before each test file): the run's bundles of the child
// programs (server-bundle-global-setup.ts), for childEntry() and for the children themselves.
import { inject } from 'vitest';
import { BUNDLE_DIR_VARIABLE } from './server-bundle.ts';

process.env[BUNDLE_DIR_VARIABLE] = inject('childBundles');
