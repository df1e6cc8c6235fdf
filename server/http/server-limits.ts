// Limits of the HTTP listener against clients that misbehave: a slow-loris client (headers
// trickled byte by byte) is cut after HEADERS_TIMEOUT_MS, a request that never finishes after
// REQUEST_TIMEOUT_MS, and headers above 16 KiB are refused with 431 by Node itself. Node
// checks the two timeouts every connectionsCheckingInterval (30 s by default: far too coarse).
import type { ServerOptions } from 'node:http';

export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 30_000;

export const SERVER_LIMITS: ServerOptions = {
  headersTimeout: HEADERS_TIMEOUT_MS,
  requestTimeout: REQUEST_TIMEOUT_MS,
  connectionsCheckingInterval: 1_000,
  maxHeaderSize: 16 * 1024,
  keepAliveTimeout: 5_000,
};
