// vitest setupFiles (in every worker, before each test file): SECRET_SINK is the run's sink
// folder (secret-sink-global-setup.ts), for test servers and for child processes.
import { inject } from 'vitest';

process.env.SECRET_SINK = inject('secretSink');
