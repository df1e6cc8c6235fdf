// The sending thread, from the main thread's side: attempts go out from the thread and their
// outcomes come back; an abort reaches the attempt in the thread; a thread that dies ends its
// attempts as network errors and the next send starts a new one; close() ends it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createThreadSender } from './thread-sender.ts';
import type { Sender } from '../sender.ts';

let receiver: Server;
let base: string;
const seen: Array<{ path: string; body: string; signature: string | undefined; thread: string | undefined }> = [];
/** Requests to /hang are held until released. */
const held: Array<() => void> = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', body, signature: req.headers['service-signature'] as string | undefined, thread: req.headers['user-agent'] as string | undefined });
      if (req.url === '/hang') return void held.push(() => res.writeHead(200).end());
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

const threadSender = (): Sender =>
  createThreadSender({ entry: new URL('./sender-thread.ts', import.meta.url), execArgv: ['--import', 'tsx'], allowInsecure: true, nodeEnv: 'test', timeoutMs: 5_000 });

describe('the sending thread', () => {
  it('sends each attempt with its exact bytes and headers and answers its outcome', async () => {
    const sender = threadSender();
    try {
      const [ok, failed] = await Promise.all([
        sender.send({ url: `${base}/ok`, body: '{"a":"é"}', headers: { 'Service-Signature': 't=1,v1=ab' } }),
        sender.send({ url: `${base}/fail`, body: '{}', headers: {} }),
      ]);
      expect(ok).toMatchObject({ outcome: 'response', statusCode: 200, success: true, responseBody: 'ok', errorClass: null });
      expect(failed).toMatchObject({ outcome: 'response', statusCode: 500, success: false, responseBody: 'nope' });
      const got = seen.find((s) => s.path === '/ok')!;
      expect(got).toMatchObject({ body: '{"a":"é"}', signature: 't=1,v1=ab' });
      expect(got.thread).toMatch(/^PaymentsService-Webhooks\//);
    } finally {
      await sender.close();
    }
  });

  it('applies the destination policy in the thread: a refused URL is never sent', async () => {
    const sender = createThreadSender({ entry: new URL('./sender-thread.ts', import.meta.url), execArgv: ['--import', 'tsx'], allowInsecure: false, nodeEnv: 'test', timeoutMs: 5_000 });
    try {
      const before = seen.length;
      const outcome = await sender.send({ url: `${base}/ok`, body: '{}', headers: {} });
      expect(outcome).toMatchObject({ outcome: 'error', errorClass: 'destination_not_allowed', success: false });
      expect(seen.length).toBe(before);
    } finally {
      await sender.close();
    }
  });

  it("an abort reaches the attempt in the thread; close() ends the thread and later sends fail unsent", async () => {
    const sender = threadSender();
    const controller = new AbortController();
    const hanging = sender.send({ url: `${base}/hang`, body: '{}', headers: {}, signal: controller.signal });
    const { until } = await import('../../../testing/until.ts');
    await until(() => held.length === 1, 'the held request at the receiver');
    controller.abort();
    expect(await hanging).toMatchObject({ outcome: 'error', success: false });
    await sender.close();
    expect(await sender.send({ url: `${base}/ok`, body: '{}', headers: {} })).toMatchObject({ outcome: 'error', errorClass: 'network_error' });
  });
});
