// One HTTP attempt of a delivery: POST the signed bytes, never follow a redirect, bound the whole
// attempt by one deadline, keep at most 2 KiB of the answer, and name what went wrong.
//
// All deliveries share ONE undici Agent (keep-alive pools per origin). Its connector is the
// destination policy's guarded connector: the scheme, port and IP-literal host of every new
// connection are re-checked and host names are resolved through the policy's checked lookup, so
// a socket only ever opens to an address that passed the rules at connect time.
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import type { Dispatcher } from 'undici';
import type { AttemptErrorClass } from '../domain/model.ts';
import { createGuardedConnector } from '../destination/connector.ts';
import type { DestinationPolicy } from '../destination/policy.ts';
import { isDestinationRefusedError } from '../destination/rules.ts';
import { boundedMemo } from './memo.ts';
import { ATTEMPT_TIMEOUT_MS } from './schedule.ts';
import { USER_AGENT } from './sign.ts';

/** Distinct destination URLs whose check is remembered. */
const CHECKED_URL_CACHE_SIZE = 10_000;

/** How much of a response body is kept (and read at all): 2 KiB. */
export const RESPONSE_BODY_LIMIT = 2048;

export interface SendRequest {
  url: string;
  /** Sent as its UTF-8 bytes, exactly the bytes that were signed. */
  body: string;
  headers: Record<string, string>;
  /** Aborts the attempt early (worker shutdown). */
  signal?: AbortSignal;
}

export interface SendOutcome {
  outcome: 'response' | 'error';
  statusCode: number | null;
  errorClass: AttemptErrorClass | null;
  /** First 2 KiB of the response body (UTF-8, a cut multi-byte character dropped); null for errors. */
  responseBody: string | null;
  /** Only a 2xx response is a success. */
  success: boolean;
  durationMs: number;
  /** The answer's Retry-After header, as sent (retry-after.ts reads it on a 429 or 503); absent: none. */
  retryAfter?: string;
}

export interface Sender {
  /** The deadline of one attempt, connect included. */
  readonly timeoutMs: number;
  send(req: SendRequest): Promise<SendOutcome>;
  close(): Promise<void>;
}

export interface SenderOptions {
  policy: DestinationPolicy;
  /** Whole-attempt deadline (connect, headers, body); default 10 s. */
  timeoutMs?: number;
  /** Sent when the request carries no User-Agent; default `PaymentsService-Webhooks/2.0`. */
  userAgent?: string;
  /** Trust anchors replacing the system CAs (tests pass their test CA). */
  tls?: { ca?: string | Buffer };
}

/** The reason the attempt's AbortSignal carries when the deadline passes. */
export class AttemptTimeoutError extends Error {
  override readonly name = 'AttemptTimeoutError';
  readonly code = 'EATTEMPTTIMEOUT';
  constructor(readonly timeoutMs: number) {
    super(`the attempt did not complete within ${timeoutMs} ms`);
  }
}

export function createSender(opts: SenderOptions): Sender {
  const timeoutMs = opts.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) throw new RangeError(`timeoutMs must be a positive integer, not ${timeoutMs}`);
  const userAgent = opts.userAgent ?? USER_AGENT;
  const agent = new Agent({
    connect: createGuardedConnector(opts.policy, {
      connect: { timeout: timeoutMs, ...(opts.tls?.ca !== undefined ? { ca: opts.tls.ca } : {}) },
    }),
    // The AbortSignal below is the real deadline; these only make sure nothing outlives it.
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    keepAliveTimeout: 4_000,
    keepAliveMaxTimeout: 60_000,
  });
  let closed = false;
  // checkUrl is pure (no DNS; the policy's options are fixed), so a stored URL that passed once
  // passes again: remember the normalized form instead of parsing it on every attempt.
  // Refusals throw and are not remembered.
  const checkedHref = boundedMemo(CHECKED_URL_CACHE_SIZE, (raw) => opts.policy.checkUrl(raw).href);

  async function send(req: SendRequest): Promise<SendOutcome> {
    const started = performance.now();
    const elapsed = (): number => Math.max(0, Math.round(performance.now() - started));
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new AttemptTimeoutError(timeoutMs));
    }, timeoutMs);
    const onOuterAbort = (): void => controller.abort(req.signal?.reason);
    if (req.signal?.aborted) onOuterAbort();
    else req.signal?.addEventListener('abort', onOuterAbort, { once: true });

    try {
      if (closed) throw new Error('the sender is closed');
      // Re-check the stored URL (credentials, fragment, scheme, port, literal address) before
      // anything else; the connector checks the connection itself again.
      const url = checkedHref(req.url);
      const headers: Record<string, string> = { ...req.headers };
      if (!Object.keys(headers).some((name) => name.toLowerCase() === 'user-agent')) headers['User-Agent'] = userAgent;
      const res = await request(url, {
        dispatcher: agent,
        method: 'POST',
        headers,
        body: Buffer.from(req.body, 'utf8'),
        signal: controller.signal,
      });
      const responseBody = await readLimited(res.body, RESPONSE_BODY_LIMIT);
      const retryAfter = res.headers['retry-after'];
      return {
        ...(typeof retryAfter === 'string' ? { retryAfter } : {}),
        outcome: 'response',
        statusCode: res.statusCode,
        errorClass: null,
        responseBody,
        success: res.statusCode >= 200 && res.statusCode < 300,
        durationMs: elapsed(),
      };
    } catch (err) {
      return {
        outcome: 'error',
        statusCode: null,
        errorClass: timedOut ? 'timeout' : classifySendError(err),
        responseBody: null,
        success: false,
        durationMs: elapsed(),
      };
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onOuterAbort);
    }
  }

  return {
    timeoutMs,
    send,
    async close() {
      if (closed) return;
      closed = true;
      await agent.close();
    },
  };
}

/**
 * Reads at most `limit` bytes of a response body and stops there: the rest is never read (the
 * stream is destroyed, which closes that connection). A multi-byte character cut at the limit
 * is dropped rather than turned into a replacement character.
 */
async function readLimited(body: Dispatcher.ResponseData['body'], limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    for await (const chunk of body) {
      const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      const room = limit - size;
      if (buf.length > room) {
        chunks.push(buf.subarray(0, room));
        size = limit;
        truncated = true;
        break;
      }
      chunks.push(buf);
      size += buf.length;
    }
  } finally {
    if (truncated) body.destroy();
  }
  return new TextDecoder('utf-8').decode(Buffer.concat(chunks, size), { stream: truncated });
}

const TIMEOUT_CODES = new Set([
  'ETIMEDOUT',
  'EATTEMPTTIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ERR_TLS_HANDSHAKE_TIMEOUT',
]);
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NODATA', 'EAI_NONAME', 'EAI_FAIL', 'ENODATA', 'ESERVFAIL']);
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET', 'ERR_STREAM_PREMATURE_CLOSE']);
const TLS_CODES = new Set([
  'EPROTO',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);
const TLS_CODE_PATTERN = /^(ERR_SSL_|ERR_TLS_|ERR_OSSL_)|CERT|SELF_SIGNED|UNABLE_TO_/;

/** The error class of one candidate error, or null when it says nothing recognisable. */
function classifyOne(err: unknown): AttemptErrorClass | null {
  if (isDestinationRefusedError(err)) return err.rule === 'unresolvable-host' ? 'dns_failure' : 'destination_not_allowed';
  if (typeof err !== 'object' || err === null) return null;
  const code = typeof (err as { code?: unknown }).code === 'string' ? (err as { code: string }).code : '';
  const name = typeof (err as { name?: unknown }).name === 'string' ? (err as { name: string }).name : '';
  if (code === 'EDESTINATION') return 'destination_not_allowed';
  if (TIMEOUT_CODES.has(code) || name === 'TimeoutError' || name === 'AttemptTimeoutError') return 'timeout';
  if (DNS_CODES.has(code)) return 'dns_failure';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (TLS_CODES.has(code) || TLS_CODE_PATTERN.test(code)) return 'tls_error';
  if (RESET_CODES.has(code)) return 'connection_reset';
  return null;
}

/**
 * Names a failed attempt from the error undici (or the connector) raised. The error itself is
 * looked at first, then its causes and the members of an AggregateError (happy eyeballs), so
 * the outermost meaningful error wins. Anything unrecognised is `network_error`.
 */
export function classifySendError(err: unknown): AttemptErrorClass {
  const queue: unknown[] = [err];
  const seen = new Set<unknown>();
  while (queue.length > 0 && seen.size < 16) {
    const current = queue.shift();
    if (current === undefined || current === null || seen.has(current)) continue;
    seen.add(current);
    const found = classifyOne(current);
    if (found !== null) return found;
    if (typeof current === 'object') {
      const { cause, errors } = current as { cause?: unknown; errors?: unknown };
      if (cause !== undefined) queue.push(cause);
      if (Array.isArray(errors)) queue.push(...errors);
    }
  }
  return 'network_error';
}
