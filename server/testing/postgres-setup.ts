// vitest setupFiles (in every worker, before each test file): POSTGRES_TEST_URL is the server
// chosen by postgres-global-setup.ts, for createTestDatabase() and for child processes.
import { inject } from 'vitest';

process.env.POSTGRES_TEST_URL = inject('postgresTestUrl');
