// The store suite's groups of the write paths, the delivery queue and retention on PostgreSQL
// (the rest, and the store's own cases: postgres.test.ts), in a file of their own so that the two
// run side by side.
import { describePostgresSuite } from './testing/suite-files.ts';

describePostgresSuite('queue');
