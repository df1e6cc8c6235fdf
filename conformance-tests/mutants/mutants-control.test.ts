// The control: the bundled server passes both targets with every mutant's options (run-mutants.ts).
import { describeControl } from './run-mutants.ts';

describeControl();
