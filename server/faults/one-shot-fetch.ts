// A fault test's probe (a /metrics scrape, another tenant's request) on a connection of its
// own, closed after the answer. Under the 10 000-connection fault the test's own process
// stalls: it can read a response seconds late, hand the next request to that idle keep-alive
// socket just as the server's keep-alive timeout (5 s) closes it, and fail with "other side
// closed": a race of the client's pool, not a fault of the server under test. A new connection
// per probe is also what "another client" means.
import { Agent, fetch, type RequestInit, type Response } from 'undici';

// pipelining 0: undici keeps no connection alive.
const oneShot = new Agent({ pipelining: 0 });

export function fetchOnNewConnection(url: string, init: RequestInit = {}): Promise<Response> {
  return fetch(url, { ...init, dispatcher: oneShot });
}
