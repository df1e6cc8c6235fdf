// Share 2 of 2 of the api target's mutants (run-mutants.ts).
import { describeMutants, mutantsOfShare } from './run-mutants.ts';

describeMutants(mutantsOfShare('api', 1));
