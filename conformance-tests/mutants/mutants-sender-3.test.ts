// Share 3 of 4 of the sender target's mutants (run-mutants.ts).
import { describeMutants, mutantsOfShare } from './run-mutants.ts';

describeMutants(mutantsOfShare('sender', 2));
