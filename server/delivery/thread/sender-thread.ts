// The sending thread of the delivery engine: the HTTP side of every attempt (the guarded
// connection, the POST, the 2 KiB of answer) runs here, on a core of its own, while the API's
// thread keeps the queue, the signatures and the store (thread-sender.ts). The sender is built
// from the engine's settings (workerData): the same URL and connect-time rules, the same CA, and
// host names resolved by the engine's own policy (a round trip per new connection, not per attempt).
import { parentPort, workerData } from 'node:worker_threads';
import { createCheckedLookup } from '../../destination/lookup.ts';
import { createDestinationPolicy, type DestinationPolicy } from '../../destination/policy.ts';
import { DESTINATION_RULES, DestinationRefusedError, type DestinationRule } from '../../destination/rules.ts';
import { createSender, type SendOutcome } from '../sender.ts';
import { batchPerTurn } from './batch.ts';
import type { FromThread, Resolution, SenderThreadSettings, ToThread } from './protocol.ts';

const port = parentPort;
if (port === null) throw new Error('sender-thread.ts runs as a worker thread of the delivery engine');
const post = (msg: FromThread): void => port.postMessage(msg);
const settings = workerData as SenderThreadSettings;

const resolving = new Map<number, { resolve(address: string): void; reject(err: Error): void }>();
let nextResolve = 1;

/** Asks the engine's policy for the checked address of a host name. */
function resolveOnMain(hostname: string): Promise<string> {
  const id = nextResolve++;
  return new Promise((resolve, reject) => {
    resolving.set(id, { resolve, reject });
    post({ type: 'resolve', id, hostname });
  });
}

function resolved(answer: Resolution): void {
  const waiting = resolving.get(answer.id);
  if (waiting === undefined) return;
  resolving.delete(answer.id);
  if ('address' in answer) waiting.resolve(answer.address);
  else if ('refused' in answer) waiting.reject(refusal(answer.refused));
  else waiting.reject(new Error(answer.error));
}

/** The engine's refusal, rebuilt here so that the attempt is classed as it would be in-process. */
function refusal({ rule, detail }: { rule: string; detail: string }): Error {
  return (DESTINATION_RULES as readonly string[]).includes(rule) ? new DestinationRefusedError(rule as DestinationRule, detail) : new Error(detail);
}

const rules = createDestinationPolicy({ allowInsecure: settings.allowInsecure, nodeEnv: settings.nodeEnv });
const policy: DestinationPolicy = {
  ...rules,
  resolveHost: resolveOnMain,
  resolve: async (url) => {
    const checked = rules.checkUrl(typeof url === 'string' ? url : url.href);
    return { url: checked, address: await resolveOnMain(checked.hostname), family: 4, port: checked.port };
  },
  lookup: createCheckedLookup(resolveOnMain),
};
const sender = createSender({ policy, timeoutMs: settings.timeoutMs, ...(settings.ca !== undefined ? { tls: { ca: settings.ca } } : {}) });

const inFlight = new Map<number, AbortController>();
const outcomes = batchPerTurn<{ id: number; outcome: SendOutcome }>((items) => post({ type: 'done', items }));

function send(item: { id: number; url: string; body: string; headers: Record<string, string> }): void {
  const controller = new AbortController();
  inFlight.set(item.id, controller);
  void sender.send({ url: item.url, body: item.body, headers: item.headers, signal: controller.signal }).then((outcome) => {
    inFlight.delete(item.id);
    outcomes.push({ id: item.id, outcome });
  });
}

port.on('message', (msg: ToThread) => {
  switch (msg.type) {
    case 'send':
      for (const item of msg.items) send(item);
      return;
    case 'abort':
      for (const id of msg.ids) inFlight.get(id)?.abort(new Error('the delivery engine stopped'));
      return;
    case 'resolved':
      resolved(msg.answer);
      return;
    case 'close':
      void sender.close().then(() => {
        outcomes.flush();
        port.close();
      });
  }
});
