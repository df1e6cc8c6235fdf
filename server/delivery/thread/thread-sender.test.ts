// The sending thread, from the main thread's side: attempts go out from the thread with the
// engine's destination policy and CA, and their outcomes come back; an abort reaches the attempt
// in the thread; a thread that crashes or cannot start is logged and counted and its attempts
// are sent in-process, restarts are backed off and given up; close() ends the thread, within a
// deadline.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../../testing/until.ts';
import { createDestinationPolicy, type DestinationPolicy } from '../../destination/policy.ts';
import { createSender, type SenderOptions } from '../sender.ts';
import { captureLogger, fakeResolver, FakeTimers, loopbackPolicy, startReceiver, testCertificate } from '../testing.ts';
import { createThreadSender, type ThreadSender, type ThreadSenderOptions } from './thread-sender.ts';

let receiver: Server;
let base: string;
const seen: Array<{ path: string; body: string; signature: string | undefined; userAgent: string | undefined }> = [];
/** Requests to /hang are held until released. */
const held: Array<() => void> = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', body, signature: req.headers['service-signature'] as string | undefined, userAgent: req.headers['user-agent'] as string | undefined });
      if (req.url === '/hang') return void held.push(() => res.writeHead(200).end('late'));
      res.writeHead(req.url === '/fail' ? 500 : 200).end(req.url === '/fail' ? 'nope' : 'ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(() => {
  for (const release of held.splice(0)) release();
  receiver.closeAllConnections();
  receiver.close();
});

const program = (file: string): Pick<ThreadSenderOptions, 'entry' | 'execArgv'> => ({ entry: new URL(file, import.meta.url), execArgv: ['--import', 'tsx'] });

function threadSender(over: Partial<ThreadSenderOptions> & { policy?: DestinationPolicy; tls?: SenderOptions['tls'] } = {}): { sender: ThreadSender; lost: Error[]; lines: string[] } {
  const { policy, tls, ...rest } = over;
  const { log, lines } = captureLogger();
  const lost: Error[] = [];
  const sender = createThreadSender({
    ...program('./sender-thread.ts'),
    sender: { policy: policy ?? loopbackPolicy(), timeoutMs: 5_000, ...(tls ? { tls } : {}) },
    nodeEnv: 'test',
    log,
    onThreadLost: (err) => lost.push(err),
    ...rest,
  });
  return { sender, lost, lines };
}

const released = (): void => {
  for (const release of held.splice(0)) release();
};

describe('the sending thread', () => {
  it('sends each attempt with its exact bytes and headers and answers its outcome; close() ends the thread', async () => {
    const { sender, lost } = threadSender();
    try {
      const [ok, failed] = await Promise.all([
        sender.send({ url: `${base}/ok`, body: '{"a":"é"}', headers: { 'Service-Signature': 't=1,v1=ab' } }),
        sender.send({ url: `${base}/fail`, body: '{}', headers: {} }),
      ]);
      expect(ok).toMatchObject({ outcome: 'response', statusCode: 200, success: true, responseBody: 'ok', errorClass: null });
      expect(failed).toMatchObject({ outcome: 'response', statusCode: 500, success: false, responseBody: 'nope' });
      const got = seen.find((s) => s.path === '/ok')!;
      expect(got).toMatchObject({ body: '{"a":"é"}', signature: 't=1,v1=ab' });
      expect(got.userAgent).toMatch(/^PaymentsService-Webhooks\//);
      expect(sender.threads()).toEqual({ started: 1, running: true });
    } finally {
      await sender.close();
    }
    expect(sender.threads()).toEqual({ started: 1, running: false });
    expect(lost).toEqual([]);
  });

  it("applies the engine's destination policy in the thread: its resolver, and what it refuses in-process", async () => {
    const { port } = receiver.address() as AddressInfo;
    const policy = loopbackPolicy(fakeResolver({ 'receiver.test': [{ address: '127.0.0.1', family: 4 }], 'private.test': [{ address: '10.1.2.3', family: 4 }] }));
    const strict = createDestinationPolicy({ nodeEnv: 'test' });
    const senders = [threadSender({ policy }).sender, threadSender({ policy: strict }).sender];
    const inProcess = [createSender({ policy, timeoutMs: 5_000 }), createSender({ policy: strict, timeoutMs: 5_000 })];
    const cases: Array<[number, string]> = [
      [0, `http://private.test:${port}/private`],
      [0, `http://unknown.test:${port}/unknown`],
      [1, `${base}/strict`],
    ];
    try {
      for (const [which, url] of cases) {
        const here = await inProcess[which]!.send({ url, body: '{}', headers: {} });
        const there = await senders[which]!.send({ url, body: '{}', headers: {} });
        expect(here.success).toBe(false);
        expect({ url, errorClass: there.errorClass, outcome: there.outcome }).toEqual({ url, errorClass: here.errorClass, outcome: 'error' });
      }
      expect(seen.filter((s) => ['/private', '/unknown', '/strict'].includes(s.path))).toEqual([]);
      // A name only the engine's resolver knows: the thread asked it.
      expect(await senders[0]!.send({ url: `http://receiver.test:${port}/named`, body: '{}', headers: {} })).toMatchObject({ statusCode: 200, success: true });
    } finally {
      await Promise.all([...senders, ...inProcess].map((s) => s.close()));
    }
  });

  it("trusts the engine's configured CA in the thread, and only with it", async () => {
    const cert = await testCertificate();
    const rx = await startReceiver({ tls: cert });
    const trusting = threadSender({ tls: { ca: cert.cert } }).sender;
    const plain = threadSender().sender;
    try {
      expect(await trusting.send({ url: `${rx.url}/tls`, body: '{}', headers: {} })).toMatchObject({ outcome: 'response', statusCode: 200, success: true });
      expect(await plain.send({ url: `${rx.url}/tls`, body: '{}', headers: {} })).toMatchObject({ outcome: 'error', errorClass: 'tls_error', success: false });
      expect(rx.requests).toHaveLength(1);
    } finally {
      await Promise.all([trusting.close(), plain.close(), rx.close()]);
    }
  });

  it('an abort reaches the attempt in the thread; close() ends the thread and later sends fail unsent', async () => {
    const { sender } = threadSender();
    const controller = new AbortController();
    const hanging = sender.send({ url: `${base}/hang`, body: '{}', headers: {}, signal: controller.signal });
    await until(() => held.length === 1, 'the held request at the receiver');
    controller.abort();
    expect(await hanging).toMatchObject({ outcome: 'error', success: false });
    await sender.close();
    expect(sender.threads()).toEqual({ started: 1, running: false });
    const before = seen.length;
    expect(await sender.send({ url: `${base}/ok`, body: '{}', headers: {} })).toMatchObject({ outcome: 'error', errorClass: 'network_error' });
    expect(seen.length).toBe(before);
    released();
  });

  it('a thread that crashes with attempts in flight is logged and counted, its attempts are sent in-process, and a new thread starts after the backoff', async () => {
    const timers = new FakeTimers();
    const { sender, lost, lines } = threadSender({ ...program('./testing/crashing-thread.ts'), timers, restart: { firstMs: 1_000, maxMs: 8_000, giveUpAfter: 3 } });
    try {
      const hanging = sender.send({ url: `${base}/hang`, body: '{"n":1}', headers: {} });
      await until(() => held.length === 1, 'the held request at the receiver');
      const crash = sender.send({ url: `${base}/crash`, body: '{}', headers: {} });
      // The held attempt is sent again, from this thread, once its thread is gone.
      await until(() => held.length === 2, 'the held attempt sent again in-process');
      released();
      expect(await hanging).toMatchObject({ outcome: 'response', statusCode: 200, success: true, responseBody: 'late' });
      expect(await crash).toMatchObject({ outcome: 'response', statusCode: 200, success: true });
      expect(lost.map((e) => e.message)).toEqual(['the test crashed the sending thread']);
      expect(lines.filter((l) => l.includes('the sending thread failed'))).toHaveLength(1);
      expect(JSON.parse(lines.find((l) => l.includes('the sending thread failed'))!)).toMatchObject({ level: 50, restartInMs: 1_000, failures: 1, err: { message: 'the test crashed the sending thread' } });
      expect(sender.threads()).toEqual({ started: 1, running: false });
      expect(timers.delays()).toEqual([1_000]);

      // Within the backoff: in-process, no thread started.
      expect(await sender.send({ url: `${base}/ok`, body: '{}', headers: {} })).toMatchObject({ statusCode: 200 });
      expect(sender.threads().started).toBe(1);
      timers.fireAll();
      expect(await sender.send({ url: `${base}/ok`, body: '{}', headers: {} })).toMatchObject({ statusCode: 200 });
      expect(sender.threads()).toEqual({ started: 2, running: true });
      expect(sender.givenUp()).toBeNull();
    } finally {
      await sender.close();
    }
    expect(sender.threads().running).toBe(false);
  });

  it("a lost thread's error and late exit leave its successor's attempts alone: each is sent once and answered by its receiver", async () => {
    const timers = new FakeTimers();
    let successor: Promise<unknown> | null = null;
    const { sender, lost } = threadSender({
      ...program('./testing/crashing-thread.ts'),
      timers,
      restart: { firstMs: 1_000, maxMs: 1_000, giveUpAfter: 3 },
      // On the lost thread's 'error', before its 'exit': the backoff ends and a new thread takes an attempt.
      onThreadLost: (err) => {
        lost.push(err);
        timers.fireAll();
        successor = sender.send({ url: `${base}/hang`, body: '{"thread":2}', headers: {} });
      },
    });
    try {
      expect(await sender.send({ url: `${base}/crash`, body: '{}', headers: {} })).toMatchObject({ statusCode: 200 });
      expect(sender.threads()).toEqual({ started: 2, running: true });
      await until(() => held.length === 1, "the successor's attempt at the receiver");
      // A later attempt answered through the new thread: it had sent the held one by then.
      expect(await sender.send({ url: `${base}/ok`, body: '{"marker":2}', headers: {} })).toMatchObject({ statusCode: 200 });
      expect(seen.filter((s) => s.body === '{"thread":2}')).toHaveLength(1);
      released();
      expect(await successor).toMatchObject({ outcome: 'response', statusCode: 200, responseBody: 'late' });
      expect(lost).toHaveLength(1);
    } finally {
      await sender.close();
    }
  });

  it('a thread that cannot start: every attempt is sent in-process, restarts back off under a fake clock and stop after repeated failures', async () => {
    const timers = new FakeTimers();
    const { sender, lost, lines } = threadSender({ ...program('./no-such-thread.ts'), timers, restart: { firstMs: 1_000, maxMs: 1_500, giveUpAfter: 3 } });
    const ok = (): Promise<unknown> => sender.send({ url: `${base}/ok`, body: '{}', headers: {} });
    try {
      expect(await ok()).toMatchObject({ outcome: 'response', statusCode: 200, success: true });
      expect(lost).toHaveLength(1);
      expect(timers.delays()).toEqual([1_000]);
      expect(await ok()).toMatchObject({ statusCode: 200 });
      expect(sender.threads()).toEqual({ started: 1, running: false });

      timers.fireAll();
      expect(await ok()).toMatchObject({ statusCode: 200 });
      expect(sender.threads().started).toBe(2);
      expect(timers.delays()).toEqual([1_500]);
      expect(sender.givenUp()).toBeNull();

      timers.fireAll();
      expect(await ok()).toMatchObject({ statusCode: 200 });
      expect(sender.threads().started).toBe(3);
      expect(timers.delays()).toEqual([]);
      expect(sender.givenUp()).toBe('the sending thread failed 3 times in a row (each logged); webhooks are sent from the API thread');

      expect(await ok()).toMatchObject({ statusCode: 200 });
      expect(sender.threads()).toEqual({ started: 3, running: false });
      expect(lost).toHaveLength(3);
      const failures = lines.filter((l) => l.includes('the sending thread failed')).map((l) => JSON.parse(l) as { msg: string; restartInMs?: number });
      expect(failures.map((f) => f.restartInMs)).toEqual([1_000, 1_500, undefined]);
      expect(failures[2]!.msg).toMatch(/no new one is started/);
    } finally {
      await sender.close();
    }
  });

  it('close() terminates a thread that does not exit within its deadline and sends what it held in-process', async () => {
    const timers = new FakeTimers();
    const { sender, lost, lines } = threadSender({ timers, closeMs: 3_000 });
    const hanging = sender.send({ url: `${base}/hang`, body: '{}', headers: {} });
    await until(() => held.length === 1, 'the held request at the receiver');
    const closing = sender.close();
    // The thread's own close waits for the held attempt (up to its 5 s deadline): the deadline ends it first.
    expect(timers.delays()).toEqual([3_000]);
    timers.fireAll();
    await until(() => held.length === 2, 'the held attempt sent again in-process');
    released();
    expect(await hanging).toMatchObject({ statusCode: 200, success: true });
    await closing;
    expect(sender.threads().running).toBe(false);
    expect(lost).toEqual([]);
    expect(lines.some((l) => l.includes('did not exit in time'))).toBe(true);
  });
});
