// Every test file: the data folders its child servers were given (child-server.ts) are removed
// after its last hook, by which time its servers have stopped. The after-all hooks run last
// registered first, and this file registers before the test file does.
import { afterAll } from 'vitest';
import { removeMadeDataDirs } from './child-server.ts';

afterAll(() => removeMadeDataDirs());
