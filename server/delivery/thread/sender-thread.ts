// The sending thread of the delivery engine: the HTTP side of every attempt (the guarded
// connection, the POST, the 2 KiB of answer) runs here, on a core of its own, while the API's
// thread keeps the queue, the signatures and the store (thread-sender.ts). The destination
// policy is built here from the same settings, so the connect-time checks are the ones the
// in-process sender makes.
import { parentPort, workerData } from 'node:worker_threads';
import { createDestinationPolicy } from '../../destination/policy.ts';
import { createSender, type SendOutcome } from '../sender.ts';
import type { FromThread, SenderThreadSettings, ToThread } from './protocol.ts';

const port = parentPort;
if (port === null) throw new Error('sender-thread.ts runs as a worker thread of the delivery engine');
const settings = workerData as SenderThreadSettings;
const sender = createSender({
  policy: createDestinationPolicy({ allowInsecure: settings.allowInsecure, nodeEnv: settings.nodeEnv }),
  timeoutMs: settings.timeoutMs,
  ...(settings.ca !== undefined ? { tls: { ca: settings.ca } } : {}),
});

const inFlight = new Map<number, AbortController>();
let finished: Array<{ id: number; outcome: SendOutcome }> = [];

/** Outcomes of one turn go back as one message. */
function report(id: number, outcome: SendOutcome): void {
  inFlight.delete(id);
  if (finished.length === 0) setImmediate(flush);
  finished.push({ id, outcome });
}

function flush(): void {
  const items = finished;
  finished = [];
  port!.postMessage({ type: 'done', items } satisfies FromThread);
}

port.on('message', (msg: ToThread) => {
  switch (msg.type) {
    case 'send':
      for (const item of msg.items) {
        const controller = new AbortController();
        inFlight.set(item.id, controller);
        void sender.send({ url: item.url, body: item.body, headers: item.headers, signal: controller.signal }).then((outcome) => report(item.id, outcome));
      }
      return;
    case 'abort':
      for (const id of msg.ids) inFlight.get(id)?.abort(new Error('the delivery engine stopped'));
      return;
    case 'close':
      void sender.close().then(() => {
        if (finished.length > 0) flush();
        port!.postMessage({ type: 'closed' } satisfies FromThread);
        port!.close();
      });
  }
});
