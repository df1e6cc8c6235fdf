// Clients that misbehave, against the real server on loopback: slow-loris headers, huge
// headers, 2 000 concurrent connections (bounded for this shared 2-core machine), and a flood
// from one API key while another tenant works. What callers saw is reported; latencies are
// measured, never asserted.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBLEM_TYPE_BASE } from '../../generated/problem-types.ts';
import { HEADERS_TIMEOUT_MS } from '../http/server-limits.ts';
import { startTestServer, type TestServer, type TestTenant } from '../testing/harness.ts';
import { LONG_FAULTS, report, tally } from './report.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let server: TestServer;
let a: TestTenant;
let b: TestTenant;
let host: { host: string; port: number };
beforeAll(async () => {
  server = await startTestServer({ env: { RATE_LIMIT_RPS: '20' } });
  a = await server.newTenant('Flooder');
  b = await server.newTenant('Bystander');
  const u = new URL(server.url);
  host = { host: u.hostname, port: Number(u.port) };
});
afterAll(async () => {
  await server?.close();
});

function open(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(host, () => resolve(s));
    s.on('error', reject);
  });
}

/** Sends raw bytes, resolves with what came back and when the server closed the socket. */
function rawExchange(socket: Socket): Promise<{ data: string; closedAfterMs: number }> {
  const started = Date.now();
  let data = '';
  return new Promise((resolve) => {
    socket.on('data', (c: Buffer) => (data += c.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ data, closedAfterMs: Date.now() - started }));
  });
}

async function timedGet(t: TestTenant): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const r = await fetch(`${server.url}/transactions/users?userId=u-1&limit=1`, { headers: { 'x-api-key': t.apiKey, 'x-api-hash': t.apiHash } });
  await r.arrayBuffer();
  return { status: r.status, ms: Math.round(performance.now() - started) };
}

describe.skipIf(!LONG_FAULTS)('misbehaving clients', () => {
  it('slow-loris: connections trickling headers are cut; others are served meanwhile', async () => {
    const LORIS = 100;
    const sockets = await Promise.all(Array.from({ length: LORIS }, () => open()));
    const exchanges = sockets.map((s) => rawExchange(s));
    for (const s of sockets) s.write('GET /transactions/users?userId=u HTTP/1.1\r\nHost: x\r\n');
    const trickle = setInterval(() => sockets.forEach((s) => !s.destroyed && s.write('x')), 500);
    try {
      const during: number[] = [];
      for (let i = 0; i < 5; i++) {
        const r = await timedGet(b);
        expect(r.status).toBe(200);
        during.push(r.ms);
        await sleep(200);
      }
      const closed = await Promise.all(exchanges);
      const cutAfter = closed.map((c) => c.closedAfterMs).sort((x, y) => x - y);
      report({
        fault: `slow-loris: ${LORIS} connections sending a header byte every 500 ms`,
        measured: `cut after ${(cutAfter[0]! / 1000).toFixed(1)}–${(cutAfter[cutAfter.length - 1]! / 1000).toFixed(1)} s (headersTimeout ${HEADERS_TIMEOUT_MS / 1000} s, checked every 1 s); a normal request meanwhile took ${during.join(', ')} ms`,
        lost: 0,
        callerSaw: { slowLoris: closed[0]!.data.split('\r\n')[0] || 'connection closed', bystander: '200' },
      });
      expect(cutAfter[cutAfter.length - 1]).toBeLessThan(HEADERS_TIMEOUT_MS + 15_000);
    } finally {
      clearInterval(trickle);
      sockets.forEach((s) => s.destroy());
    }
  }, 60_000);

  it('huge headers are refused with 431 problem+json before reaching the application', async () => {
    const s = await open();
    const ex = rawExchange(s);
    s.write(`GET /transactions/users?userId=u HTTP/1.1\r\nHost: x\r\nx-api-key: ${a.apiKey}\r\nx-junk: ${'j'.repeat(64 * 1024)}\r\n\r\n`);
    const { data } = await ex;
    const status = data.split('\r\n')[0] ?? '';
    const body = JSON.parse(data.slice(data.indexOf('\r\n\r\n') + 4)) as { type?: string };
    report({ fault: 'huge headers (64 KiB)', measured: 'one request', lost: 0, callerSaw: { answer: status || 'connection closed', type: body.type ?? '' } });
    expect(status).toMatch(/^HTTP\/1\.1 431/);
    expect(body.type).toBe(`${PROBLEM_TYPE_BASE}headers-too-large`);
    expect((await timedGet(b)).status).toBe(200);
  });

  it('2 000 concurrent connections are all answered; a normal request still goes through', async () => {
    const N = 2_000;
    const sockets: Socket[] = [];
    const statuses = tally();
    const started = Date.now();
    // Each sends its request as soon as it is connected (an idle connection is cut after the headers timeout).
    for (let i = 0; i < N; i += 200) {
      const batch = await Promise.all(Array.from({ length: Math.min(200, N - i) }, () => open()));
      for (const s of batch) s.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      sockets.push(...batch);
    }
    const answered = sockets.map(
      (s) =>
        new Promise<void>((resolve) => {
          let data = '';
          s.on('data', (c: Buffer) => {
            data += c.toString();
            if (data.includes('\r\n\r\n')) {
              statuses.add(data.split(' ')[1] ?? '?');
              resolve();
            }
          });
          s.on('close', () => resolve());
          s.on('error', () => resolve());
        }),
    );
    const during = await timedGet(b);
    await Promise.all(answered);
    const allMs = Date.now() - started;
    sockets.forEach((s) => s.destroy());
    report({
      fault: `${N} concurrent keep-alive connections, one request each`,
      measured: `all answered in ${allMs} ms; an authenticated request meanwhile took ${during.ms} ms`,
      lost: 0,
      callerSaw: statuses.counts,
    });
    expect(statuses.counts['200']).toBe(N);
    expect(during.status).toBe(200);
  }, 60_000);

  it('a flood from one key is limited (429 problem+json, Retry-After); another tenant is unaffected', async () => {
    const flood = tally();
    const bystander = tally();
    const bystanderMs: number[] = [];
    let flooding = true;
    const started = Date.now();
    const flooders = Array.from({ length: 32 }, async () => {
      while (flooding) {
        const r = await fetch(`${server.url}/transactions/users?userId=u-1&limit=1`, { headers: { 'x-api-key': a.apiKey, 'x-api-hash': a.apiHash } });
        flood.add(r.status);
        if (r.status === 429) {
          expect(r.headers.get('content-type')).toBe('application/problem+json');
          expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        }
        await r.arrayBuffer();
      }
    });
    for (let i = 0; i < 20; i++) {
      const r = await timedGet(b);
      bystander.add(r.status);
      bystanderMs.push(r.ms);
      await sleep(100);
    }
    flooding = false;
    await Promise.all(flooders);
    const seconds = (Date.now() - started) / 1000;
    bystanderMs.sort((x, y) => x - y);
    report({
      fault: 'flood from one API key (RATE_LIMIT_RPS=20, 32 concurrent loops) while another tenant works',
      measured: `${seconds.toFixed(1)} s; bystander p50 ${bystanderMs[10]} ms, max ${bystanderMs[19]} ms`,
      lost: 0,
      callerSaw: { flooder: JSON.stringify(flood.counts), bystander: JSON.stringify(bystander.counts) },
    });
    expect(bystander.counts).toEqual({ '200': 20 });
    expect(flood.counts['429']).toBeGreaterThan(0);
    // The bucket: a burst of 40, then 20 a second.
    expect(flood.counts['200'] ?? 0).toBeLessThanOrEqual(40 + 20 * Math.ceil(seconds + 1));
  }, 60_000);
});
