// Share 1 of 3 of the sender target's mutants (run-mutants.ts).
import { describeMutants, mutantsOfShare } from './run-mutants.ts';

describeMutants(mutantsOfShare('sender', 0));
