// What the HTTP listener itself answers (before any operation runs), over raw sockets: the
// real test server for oversized headers and bytes that are not HTTP, and a listener with the
// same settings but short timeouts for the request timeout (no waiting 10 s here).
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBLEM_TYPE_BASE, problemTypes } from '../../generated/problem-types.ts';
import { startTestServer, type TestServer } from '../testing/harness.ts';
import { answerClientErrors } from './client-error.ts';
import { SERVER_LIMITS } from './server-limits.ts';

/** Writes raw bytes, resolves with everything the server sent until it closed the connection. */
function exchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    const s = connect({ host: '127.0.0.1', port }, () => s.write(bytes));
    s.on('data', (c: Buffer) => (data += c.toString('latin1')));
    s.on('error', reject);
    s.on('close', () => resolve(data));
  });
}

/** The status line and the problem of a raw answer, checked against the contract's list. */
function expectRawProblem(raw: string, status: number, slug: keyof typeof problemTypes): void {
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  const lines = head.split('\r\n');
  expect(lines[0]).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
  expect(lines).toContain('content-type: application/problem+json');
  const problem = JSON.parse(body) as Record<string, unknown>;
  expect(problem).toEqual({ type: `${PROBLEM_TYPE_BASE}${slug}`, title: problemTypes[slug].title, status, detail: expect.any(String) });
  expect(problemTypes[slug].status).toBe(status);
}

let server: TestServer;
let port: number;
beforeAll(async () => {
  server = await startTestServer();
  port = Number(new URL(server.url).port);
});
afterAll(async () => {
  await server?.close();
});

describe('answers of the HTTP listener', () => {
  it('headers above the limit: 431 problem+json, then the connection is closed', async () => {
    const raw = await exchange(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nx-junk: ${'j'.repeat(64 * 1024)}\r\n\r\n`);
    expectRawProblem(raw, 431, 'headers-too-large');
  });

  it('bytes that are not HTTP: 400 problem+json', async () => {
    expectRawProblem(await exchange(port, 'HELLO THERE\r\n\r\n'), 400, 'bad-request');
    expectRawProblem(await exchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nbad header line\r\n\r\n'), 400, 'bad-request');
  });

  it('the server goes on answering normally afterwards', async () => {
    const res = await fetch(`${server.url}/healthz`);
    expect(res.status).toBe(200);
  });

  it('a request that does not arrive in time: 408 problem+json', async () => {
    const app = new Hono().get('/', (c) => c.text('ok'));
    const short: ServerType = await new Promise((resolve) => {
      const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0, serverOptions: { ...SERVER_LIMITS, headersTimeout: 200, requestTimeout: 300, connectionsCheckingInterval: 50 } }, () => resolve(s));
      answerClientErrors(s);
    });
    try {
      const raw = await exchange((short.address() as AddressInfo).port, 'GET / HTTP/1.1\r\nHost: x\r\n');
      expectRawProblem(raw, 408, 'request-timeout');
    } finally {
      await new Promise<void>((resolve) => short.close(() => resolve()));
    }
  });
});
