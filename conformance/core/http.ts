// One HTTP exchange with the implementation under test, recorded as evidence.
//
// Redirects are never followed (the service never follows them either), the whole exchange
// is bounded by one deadline, and only the first 2 KiB of the answer are kept: what the
// service keeps in a delivery's attempt log.
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import type { Dispatcher } from 'undici';
import type { Exchange, ReceivedResponse, SentRequest } from './check.ts';

/** Characters of a request body kept in the evidence. */
export const REQUEST_BODY_LIMIT = 1024;
/** Bytes of a response body kept in the evidence (as the service keeps them). */
export const RESPONSE_BODY_LIMIT = 2048;

export interface HttpRequest {
  method: string;
  url: string;
  /** Sent exactly as given, in this order. */
  headers: Record<string, string>;
  /** The exact bytes to send. */
  body?: Uint8Array;
  timeoutMs: number;
  label?: string;
  signal?: AbortSignal;
  /**
   * Bytes of the answer to read (default RESPONSE_BODY_LIMIT). A target that must parse whole
   * answers (the api target validates response bodies) raises it and cuts the evidence itself.
   */
  responseBodyLimit?: number;
  /**
   * Stop reading once the answer so far contains this text (an event stream never ends: its
   * first complete message is what a check judges).
   */
  readUntil?: string;
  /** How many times `readUntil` must occur before reading stops (default 1: an event stream's first message). */
  readUntilCount?: number;
}

export async function exchange(req: HttpRequest): Promise<Exchange> {
  const sent = describeRequest(req);
  const started = performance.now();
  const elapsed = (): number => Math.max(0, Math.round(performance.now() - started));
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`no complete answer within ${req.timeoutMs} ms`)), req.timeoutMs);
  const onAbort = (): void => controller.abort(req.signal?.reason);
  if (req.signal?.aborted) onAbort();
  else req.signal?.addEventListener('abort', onAbort, { once: true });
  let response: ReceivedResponse;
  try {
    // undici's request() never follows redirects (that needs its redirect interceptor).
    const res = await request(req.url, {
      method: req.method as Dispatcher.HttpMethod,
      headers: req.headers,
      ...(req.body !== undefined ? { body: Buffer.from(req.body) } : {}),
      signal: controller.signal,
    });
    const { text, truncated } = await readLimited(res.body, req.responseBodyLimit ?? RESPONSE_BODY_LIMIT, req.readUntil, req.readUntilCount ?? 1);
    response = {
      status: res.statusCode,
      headers: flattenHeaders(res.headers),
      body: text,
      bodyTruncated: truncated,
      durationMs: elapsed(),
    };
  } catch (err) {
    const reason = controller.signal.aborted ? controller.signal.reason : err;
    response = {
      status: null,
      headers: {},
      body: '',
      bodyTruncated: false,
      durationMs: elapsed(),
      error: describeError(reason),
    };
  } finally {
    clearTimeout(timer);
    req.signal?.removeEventListener('abort', onAbort);
  }
  return { ...(req.label !== undefined ? { label: req.label } : {}), request: sent, response };
}

export function is2xx(response: ReceivedResponse): boolean {
  return response.status !== null && response.status >= 200 && response.status < 300;
}

/** `200`, `no answer: connect ECONNREFUSED 127.0.0.1:9`, ... */
export function describeStatus(response: ReceivedResponse): string {
  if (response.status === null) return `no HTTP answer (${response.error ?? 'unknown error'})`;
  return String(response.status);
}

function describeRequest(req: HttpRequest): SentRequest {
  const bytes = req.body ?? new Uint8Array();
  const text = Buffer.from(bytes).toString('utf8');
  const truncated = text.length > REQUEST_BODY_LIMIT;
  return {
    method: req.method,
    url: req.url,
    headers: { ...req.headers },
    body: truncated ? text.slice(0, REQUEST_BODY_LIMIT) : text,
    bodyBytes: bytes.byteLength,
    bodyTruncated: truncated,
  };
}

async function readLimited(body: AsyncIterable<Buffer | Uint8Array> & { destroy?: () => void }, limit: number, until?: string, count = 1): Promise<{ text: string; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  for await (const chunk of body) {
    const buf = Buffer.from(chunk);
    if (size + buf.length > limit) {
      chunks.push(buf.subarray(0, limit - size));
      size = limit;
      truncated = true;
      body.destroy?.();
      break;
    }
    chunks.push(buf);
    size += buf.length;
    if (until !== undefined && Buffer.concat(chunks).toString('utf8').split(until).length > count) {
      body.destroy?.();
      break;
    }
  }
  // Drop a multi-byte character cut at the limit.
  const text = new TextDecoder('utf-8', { fatal: false }).decode(Buffer.concat(chunks)).replace(/\uFFFD$/, '');
  return { text, truncated };
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

function describeError(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    const cause = (err as { cause?: unknown }).cause;
    const causeText = cause instanceof Error ? `: ${cause.message}` : '';
    return `${typeof code === 'string' ? `${code} ` : ''}${err.message}${causeText}`.trim();
  }
  return String(err);
}
