// The deliberately broken receivers, each with the check ids it must make fail.
export { startAcceptsEverything } from './accepts-everything.ts';
export { startStaleTimestamps } from './stale-timestamps.ts';
export { startIgnoresEventId } from './ignores-event-id.ts';
export { startFailsDuplicates } from './fails-duplicates.ts';
export type { MutantOptions, RunningReceiver } from './serve.ts';
export { startWithKnobs } from './knobs.ts';
export { SUBTLE_RECEIVERS } from './subtle.ts';
export type { SubtleReceiver } from './subtle.ts';
