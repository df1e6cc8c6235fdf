// The shape of a broken server and the checks that must catch it (index.ts lists them).
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import type { BuiltApp } from '../../../server/app/build-app.ts';

export interface ServerMutant {
  name: string;
  defect: string;
  target: 'api' | 'sender';
  build: (services: Services, config: Config) => BuiltApp;
  /** Check ids that must fail against this mutant. */
  mustFail: string[];
  /** When given, every failed check id must match it: the defect is caught by its own checks, not by chance elsewhere. */
  failsOnly?: RegExp;
  /** Run the sender target without --skip-slow: the defect is in the 10 s attempt timeout. */
  slow?: boolean;
  /** More arguments of the run (`--scheme both`); the control in another scheme is conformance-tests/sender-standard.test.ts. */
  args?: string[];
}
