// The sending thread of the tests that kill it: sender-thread.ts as it is, which throws an
// uncaught error on the turn after it is given an attempt to a URL ending in /crash, so that a
// test loses a thread with attempts in flight.
import { parentPort } from 'node:worker_threads';
import '../sender-thread.ts';
import type { ToThread } from '../protocol.ts';

parentPort!.on('message', (msg: ToThread) => {
  if (msg.type !== 'send' || !msg.items.some((item) => item.url.endsWith('/crash'))) return;
  setImmediate(() => {
    throw new Error('the test crashed the sending thread');
  });
});
