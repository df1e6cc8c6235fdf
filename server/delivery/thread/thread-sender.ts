// A Sender whose attempts run on a thread of their own (sender-thread.ts). The API and the
// delivery engine share the process's one event loop; with every webhook's POST and answer on
// it, an order with an endpoint cost the loop twice an order without one, and the deliveries
// fell behind the orders under load. Here the loop signs and hands the request over; the thread
// sends it and hands the outcome back, each direction batched per turn of the loop (batch.ts).
//
// The thread applies the engine's sender options: the same destination policy (host names are
// resolved here, by the engine's policy and its resolver), deadline and CA.
//
// The thread is part of the process: a crash of the process is a crash of both, and the leases
// bring the attempts back. Should the thread itself fail (an uncaught error, a program that
// cannot load), the failure is logged and counted, and the attempts it held are sent from this
// thread by the in-process sender built from the same options: a lost thread never turns into
// network errors that use up the deliveries' schedules (one the thread had sent may reach its
// receiver twice, as after any crash: receivers deduplicate by event id). Each thread owns its attempts, so a late
// `exit` of a lost thread touches none of its successor's. A new thread starts after a backoff
// (restarts.ts), meanwhile attempts are sent in-process; after repeated failures in a row no
// thread starts again and `givenUp()` says why (readiness). A shutdown's abort reaches the
// attempt in the thread; close() waits for the thread's exit for `closeMs` at most.
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { isDestinationRefusedError } from '../../destination/rules.ts';
import { realTimers, type Timers } from '../../timers.ts';
import { createSender, type SendOutcome, type SendRequest, type Sender, type SenderOptions } from '../sender.ts';
import { batchPerTurn, type TurnBatch } from './batch.ts';
import type { FromThread, Outgoing, Resolution, SenderThreadSettings, ToThread } from './protocol.ts';
import { createRestarts, THREAD_RESTART, type RestartPolicy } from './restarts.ts';

export interface ThreadSenderOptions {
  /** The thread's program: sender-thread.ts, or its bundle beside the server's. */
  entry: URL | string;
  /** Node arguments of the thread (the tsx loader when the server runs from source). */
  execArgv?: string[];
  /** The options the engine builds its sender with: the thread's and the in-process sender's. */
  sender: SenderOptions;
  /** NODE_ENV of the configuration (the thread's policy refuses insecure URLs in production too). */
  nodeEnv: string | undefined;
  log: Logger;
  /** Told of every failed thread (the operator's metrics count them). */
  onThreadLost?: (err: Error) => void;
  /** The backoff between restarts and the failures in a row after which none is tried. */
  restart?: RestartPolicy;
  /** How long close() waits for the thread to exit before terminating it; default the attempt deadline + 2 s. */
  closeMs?: number;
  /** The backoff's and close()'s waits; default real (unref'd) timers. */
  timers?: Timers;
}

export interface ThreadSender extends Sender {
  /** Why no sending thread is started any more (it failed too often in a row), or null (readiness). */
  givenUp(): string | null;
  /** Threads started so far, and whether one is running now. */
  threads(): { started: number; running: boolean };
}

/** Margin of close() over the attempt deadline: the thread's last attempts end within that deadline. */
const CLOSE_MARGIN_MS = 2_000;

interface Pending {
  req: SendRequest;
  resolve(outcome: SendOutcome): void;
  onAbort: (() => void) | undefined;
}

/** One started thread and the attempts it holds. */
interface Thread {
  worker: Worker;
  pending: Map<number, Pending>;
  outgoing: TurnBatch<Outgoing>;
  ended: boolean;
  exited: Promise<void>;
}

export function createThreadSender(opts: ThreadSenderOptions): ThreadSender {
  const inProcess = createSender(opts.sender);
  const timers = opts.timers ?? realTimers;
  const closeMs = opts.closeMs ?? inProcess.timeoutMs + CLOSE_MARGIN_MS;
  const restarts = createRestarts(opts.restart ?? THREAD_RESTART, timers);
  const ca = opts.sender.tls?.ca;
  const settings: SenderThreadSettings = { allowInsecure: opts.sender.policy.allowInsecure, nodeEnv: opts.nodeEnv, timeoutMs: inProcess.timeoutMs, ...(ca !== undefined ? { ca } : {}) };
  let current: Thread | null = null;
  let started = 0;
  let nextId = 1;
  let closed = false;
  let closing: Promise<void> | null = null;

  function start(): Thread | null {
    started += 1;
    let worker: Worker;
    try {
      worker = new Worker(opts.entry, { workerData: settings, ...(opts.execArgv ? { execArgv: opts.execArgv } : {}) });
    } catch (err) {
      failed(asError(err));
      return null;
    }
    const t: Thread = {
      worker,
      pending: new Map(),
      outgoing: batchPerTurn((items) => worker.postMessage({ type: 'send', items } satisfies ToThread)),
      ended: false,
      exited: new Promise((resolve) => worker.once('exit', () => resolve())),
    };
    worker.on('message', (msg: FromThread) => receive(t, msg));
    worker.on('error', (err: unknown) => ended(t, asError(err)));
    worker.on('exit', (code) => ended(t, closed ? null : new Error(`the sending thread exited with code ${code}`)));
    // Held only while attempts are in flight, as their sockets would hold an in-process sender:
    // an idle thread never keeps the process from exiting, a busy one keeps it until they end.
    worker.unref();
    return t;
  }

  function receive(t: Thread, msg: FromThread): void {
    if (msg.type === 'resolve') return void resolveFor(t, msg.id, msg.hostname);
    restarts.answered();
    for (const { id, outcome } of msg.items) answer(t, id, outcome);
  }

  /** The engine's policy resolves the thread's host names: its resolver and rules, not a copy. */
  async function resolveFor(t: Thread, id: number, hostname: string): Promise<void> {
    let answer: Resolution;
    try {
      answer = { id, address: await opts.sender.policy.resolveHost(hostname) };
    } catch (err) {
      answer = isDestinationRefusedError(err) ? { id, refused: { rule: err.rule, detail: err.detail } } : { id, error: asError(err).message };
    }
    if (!t.ended) t.worker.postMessage({ type: 'resolved', answer } satisfies ToThread);
  }

  function answer(t: Thread, id: number, outcome: SendOutcome): void {
    const p = t.pending.get(id);
    if (p === undefined) return;
    t.pending.delete(id);
    if (t.pending.size === 0) t.worker.unref();
    if (p.onAbort) p.req.signal?.removeEventListener('abort', p.onAbort);
    p.resolve(outcome);
  }

  /** A thread is gone: a failure unless closing, and its attempts go out from here. */
  function ended(t: Thread, err: Error | null): void {
    if (t.ended) return;
    t.ended = true;
    if (current === t) current = null;
    if (err !== null) failed(err);
    for (const [id, p] of t.pending) {
      t.pending.delete(id);
      if (p.onAbort) p.req.signal?.removeEventListener('abort', p.onAbort);
      void inProcess.send(p.req).then(p.resolve);
    }
  }

  function failed(err: Error): void {
    const restartInMs = restarts.failed();
    opts.onThreadLost?.(err);
    const fields = { err, failures: restarts.failures() };
    if (restartInMs === null) opts.log.error(fields, 'the sending thread failed again; no new one is started: webhooks are sent from the API thread');
    else opts.log.error({ ...fields, restartInMs }, 'the sending thread failed; its attempts are sent from the API thread until a new one starts');
  }

  /** The thread to send through now, or null: in-process (a restart's backoff, or given up). */
  function thread(): Thread | null {
    if (current === null && restarts.allowed()) current = start();
    return current;
  }

  /** Posts what is still batched first, so that the thread knows the attempt it is told to abort. */
  function abortIn(t: Thread, id: number): void {
    t.outgoing.flush();
    t.worker.postMessage({ type: 'abort', ids: [id] } satisfies ToThread);
  }

  function sendThrough(t: Thread, req: SendRequest): Promise<SendOutcome> {
    const id = nextId++;
    return new Promise<SendOutcome>((resolve) => {
      const onAbort = req.signal ? (): void => abortIn(t, id) : undefined;
      t.pending.set(id, { req, resolve, onAbort });
      if (t.pending.size === 1) t.worker.ref();
      if (onAbort) req.signal!.addEventListener('abort', onAbort, { once: true });
      t.outgoing.push({ id, url: req.url, body: req.body, headers: req.headers });
    });
  }

  async function closeThread(t: Thread): Promise<void> {
    t.outgoing.flush();
    t.worker.ref();
    t.worker.postMessage({ type: 'close' } satisfies ToThread);
    const deadline = timers.setTimeout(() => {
      opts.log.warn({ closeMs }, 'the sending thread did not exit in time: terminated');
      void t.worker.terminate();
    }, closeMs);
    await t.exited;
    timers.clearTimeout(deadline);
  }

  return {
    timeoutMs: inProcess.timeoutMs,
    send(req) {
      // An attempt aborted already, or with no thread to take it, is the in-process sender's.
      const t = closed || req.signal?.aborted ? null : thread();
      return t === null ? inProcess.send(req) : sendThrough(t, req);
    },
    close() {
      closed = true;
      closing ??= (async () => {
        restarts.stop();
        if (current !== null) await closeThread(current);
        await inProcess.close();
      })();
      return closing;
    },
    givenUp: () => restarts.givenUp(),
    threads: () => ({ started, running: current !== null }),
  };
}

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));
