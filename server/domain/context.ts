// What every domain function is given: the store, the clock, the secrets box, the
// destination policy and a logger. Built once at start (server/main.ts) and in tests.
import type { Logger } from 'pino';
import type { Store } from './store.ts';
import type { EnvironmentName } from './model.ts';
import type { AuthCaches } from './auth-cache.ts';
import type { Clock } from './clock.ts';
import type { SecretBox } from './secrets.ts';
import type { WriteFaults } from './write-faults.ts';
import type { DestinationPolicy } from '../destination/policy.ts';

export interface Services {
  store: Store;
  clock: Clock;
  secrets: SecretBox;
  destinations: DestinationPolicy;
  log: Logger;
  /** Verified credentials for a few seconds (AUTH_CACHE_TTL_MS); absent: every request asks the store. */
  auth?: AuthCaches;
  /** The sandbox's armed write faults (test environments); absent: the sandbox cannot arm one. */
  writeFaults?: WriteFaults;
}

export type { Scope } from './model.ts';
