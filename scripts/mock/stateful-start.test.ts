// The stateful mock listens before its store is open (a port in use is said at once): a request
// that arrives meanwhile, even while its temporary folder is being made, waits for the store and
// gets the server's own answer.
import { once } from 'node:events';
import { afterEach, expect, it } from 'vitest';
import { listenOn, urlOf } from './start.ts';
import { startStatefulMock, type RunningStatefulMock } from './stateful.ts';

let mock: RunningStatefulMock | null = null;
afterEach(async () => {
  await mock?.close();
  mock = null;
});

it('answers a request that arrived before its folder was made, once the store is open', async () => {
  let early: Promise<Response> | null = null;
  // Listens, then has a request dispatched before startStatefulMock goes on to make its folder.
  const listenThenRequest: typeof listenOn = async (fetch, port, host) => {
    const server = await listenOn(fetch, port, host);
    const dispatched = once(server, 'request');
    early = globalThis.fetch(`${urlOf(server, host)}/v2/orders/6f1c2a9e-4b7d-4e0a-9c55-3d2f8b1a7e10`);
    await dispatched;
    return server;
  };
  mock = await startStatefulMock({ port: 0 }, listenThenRequest);
  const res = await early!;
  // No credentials: the server's own 401, not a crash of the mock's front.
  expect(res.status).toBe(401);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
});
