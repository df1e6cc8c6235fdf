// A Sender whose attempts run on a thread of their own (sender-thread.ts). The API and the
// delivery engine share the process's one event loop; with every webhook's POST and answer on
// it, an order with an endpoint cost the loop twice an order without one, and the deliveries
// fell behind the orders under load. Here the loop signs and hands the request over; the thread
// sends it and hands the outcome back, each direction batched per turn of the loop.
//
// The thread is part of the process: it shares its fate (a crash of the process is a crash of
// both, and the leases bring the attempts back). Should the thread itself die, its attempts in
// flight end as network errors (retried on the schedule, as any failed attempt) and the next
// send starts a new thread. A shutdown's abort reaches the attempt in the thread.
import { Worker } from 'node:worker_threads';
import type { SendOutcome, SendRequest, Sender } from '../sender.ts';
import type { FromThread, Outgoing, SenderThreadSettings, ToThread } from './protocol.ts';

export interface ThreadSenderOptions extends SenderThreadSettings {
  /** The thread's program: sender-thread.ts, or its bundle beside the server's. */
  entry: URL | string;
  /** Node arguments of the thread (the tsx loader when the server runs from source). */
  execArgv?: string[];
}

interface Pending {
  resolve(outcome: SendOutcome): void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/** The outcome of an attempt whose thread is gone (or the sender closed): nothing was answered. */
const threadLost = (): SendOutcome => ({ outcome: 'error', statusCode: null, errorClass: 'network_error', responseBody: null, success: false, durationMs: 0 });

export function createThreadSender(opts: ThreadSenderOptions): Sender {
  const settings: SenderThreadSettings = { allowInsecure: opts.allowInsecure, nodeEnv: opts.nodeEnv, timeoutMs: opts.timeoutMs, ...(opts.ca !== undefined ? { ca: opts.ca } : {}) };
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let outgoing: Outgoing[] = [];
  let thread: Worker | null = null;
  let closing: Promise<void> | null = null;

  function start(): Worker {
    const w = new Worker(opts.entry, { workerData: settings, ...(opts.execArgv ? { execArgv: opts.execArgv } : {}) });
    w.on('message', (msg: FromThread) => {
      if (msg.type === 'done') for (const { id, outcome } of msg.items) settle(id, outcome);
    });
    // A thread that dies takes its attempts with it: they end as network errors.
    const lost = (): void => {
      if (thread === w) thread = null;
      for (const id of [...pending.keys()]) settle(id, threadLost());
    };
    w.on('error', lost);
    w.on('exit', lost);
    // Held only while attempts are in flight, as their sockets would hold an in-process sender:
    // an idle thread never keeps the process from exiting, a busy one keeps it until they end.
    w.unref();
    return w;
  }

  function settle(id: number, outcome: SendOutcome): void {
    const p = pending.get(id);
    if (p === undefined) return;
    pending.delete(id);
    if (pending.size === 0) thread?.unref();
    if (p.onAbort) p.signal?.removeEventListener('abort', p.onAbort);
    p.resolve(outcome);
  }

  function flush(): void {
    const items = outgoing;
    outgoing = [];
    if (items.length === 0) return;
    thread ??= start();
    thread.ref();
    thread.postMessage({ type: 'send', items } satisfies ToThread);
  }

  return {
    timeoutMs: opts.timeoutMs,
    send(req: SendRequest): Promise<SendOutcome> {
      if (closing !== null) return Promise.resolve(threadLost());
      const id = nextId++;
      return new Promise<SendOutcome>((resolve) => {
        // The send goes out first, so that the thread knows the attempt it is told to abort.
        const onAbort = req.signal ? (): void => (flush(), thread?.postMessage({ type: 'abort', ids: [id] } satisfies ToThread)) : undefined;
        pending.set(id, { resolve, signal: req.signal, onAbort });
        if (onAbort) req.signal!.addEventListener('abort', onAbort, { once: true });
        if (outgoing.length === 0) setImmediate(flush);
        outgoing.push({ id, url: req.url, body: req.body, headers: req.headers });
        if (req.signal?.aborted) onAbort?.();
      });
    },
    close(): Promise<void> {
      closing ??= (async () => {
        flush();
        const w = thread;
        if (w === null) return;
        w.ref();
        await new Promise<void>((resolve) => {
          w.once('exit', () => resolve());
          w.postMessage({ type: 'close' } satisfies ToThread);
        });
      })();
      return closing;
    },
  };
}
