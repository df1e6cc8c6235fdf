// vitest setupFiles (in every worker, before each test file): POSTGRES_TEST_URL is the server
// chosen by postgres-global-setup.ts, for createTestDatabase() and for child processes, and
// POSTGRES_TEST_MIGRATED_URL the run's migrated database, which test servers' databases copy.
import { inject } from 'vitest';

process.env.POSTGRES_TEST_URL = inject('postgresTestUrl');
process.env.POSTGRES_TEST_MIGRATED_URL = inject('postgresMigratedUrl');
