// Calls one documented operation of the implementation under test and records the exchange
// as evidence: credentials are redacted, the whole answer is read (to validate it against the
// response schema) but only its first 2 KiB are kept in the evidence.
import type { Exchange } from '../check.ts';
import { RESPONSE_BODY_LIMIT, exchange } from '../http.ts';
import type { ApiName, ApiOperation } from './contract.ts';

/** Answers larger than this are not read (the api target never needs more). */
const READ_LIMIT = 4 * 1024 * 1024;

export interface KeyCredentials {
  apiKey: string;
  apiHash: string;
  tenantId: string;
}

/** How a request authenticates: an API key pair (either half may be left out), a bearer token, or nothing. */
export type Auth =
  | { kind: 'key'; apiKey?: string; apiHash?: string }
  | { kind: 'bearer'; token: string }
  | { kind: 'none' };

export interface ApiRequest {
  auth: Auth;
  path?: Record<string, string>;
  query?: Record<string, string>;
  /** Extra headers, for example `x-tenant-id`. */
  headers?: Record<string, string>;
  /** A JSON value to send as the body; `undefined`: no body. */
  body?: unknown;
  /** Exact bytes and content type to send instead of `body` (malformed, oversized or non-JSON bodies). */
  rawBody?: { contentType: string; bytes: Uint8Array };
  label?: string;
  /** An event stream: how many messages to read before closing it (default 1). */
  streamMessages?: number;
}

export interface ApiResponse {
  exchange: Exchange;
  status: number | null;
  contentType: string | null;
  /** The parsed JSON answer, or undefined when it was empty or not JSON. */
  json: unknown;
  /** Whether the answer was JSON (`json` is meaningful). */
  isJson: boolean;
}

export interface ApiClientOptions {
  baseUrls: Readonly<Record<ApiName, string>>;
  timeoutMs: number;
}

export class ApiClient {
  readonly #opts: ApiClientOptions;

  constructor(opts: ApiClientOptions) {
    this.#opts = opts;
  }

  url(op: ApiOperation, req: Pick<ApiRequest, 'path' | 'query'>): string {
    const base = this.#opts.baseUrls[op.api].replace(/\/+$/, '');
    const path = op.spec.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(req.path?.[name] ?? `{${name}}`));
    const query = new URLSearchParams(req.query ?? {}).toString();
    return `${base}${path}${query ? `?${query}` : ''}`;
  }

  async call(op: ApiOperation, req: ApiRequest, signal?: AbortSignal): Promise<ApiResponse> {
    const headers: Record<string, string> = { accept: op.streams ? 'text/event-stream, application/problem+json' : 'application/json, application/problem+json' };
    if (req.auth.kind === 'key') {
      if (req.auth.apiKey !== undefined) headers['x-api-key'] = req.auth.apiKey;
      if (req.auth.apiHash !== undefined) headers['x-api-hash'] = req.auth.apiHash;
    } else if (req.auth.kind === 'bearer') {
      headers.authorization = `Bearer ${req.auth.token}`;
    }
    Object.assign(headers, req.headers ?? {});
    let body: Uint8Array | undefined;
    if (req.rawBody !== undefined) {
      headers['content-type'] = req.rawBody.contentType;
      body = req.rawBody.bytes;
    } else if (req.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = Buffer.from(JSON.stringify(req.body), 'utf8');
    }
    const x = await exchange({
      method: op.spec.method.toUpperCase(),
      url: this.url(op, req),
      headers,
      ...(body !== undefined ? { body } : {}),
      timeoutMs: this.#opts.timeoutMs,
      responseBodyLimit: READ_LIMIT,
      // An event stream stays open: its first message (a blank line ends it) is the answer.
      ...(op.streams ? { readUntil: '\n\n', readUntilCount: req.streamMessages ?? 1 } : {}),
      ...(req.label !== undefined ? { label: req.label } : {}),
      ...(signal ? { signal } : {}),
    });
    const text = x.response.body;
    const contentType = x.response.headers['content-type'] ?? null;
    let json: unknown;
    let isJson = false;
    if (text !== '' && !x.response.bodyTruncated) {
      try {
        json = JSON.parse(text);
        isJson = true;
      } catch {
        // Not JSON: judged by the caller (the content type and schema checks say so).
      }
    }
    return { exchange: forEvidence(x), status: x.response.status, contentType, json, isJson };
  }
}

/** Credentials and secrets never go into a report; the answer is cut to what a report shows. */
function forEvidence(x: Exchange): Exchange {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(x.request.headers)) {
    const lower = name.toLowerCase();
    if (lower === 'x-api-hash') headers[name] = redact(value);
    else if (lower === 'authorization') headers[name] = `Bearer ${redact(value.replace(/^Bearer\s+/i, ''))}`;
    else headers[name] = value;
  }
  // Answers that reveal a signing or callback secret (creation, rotation) keep it out of reports.
  const body = x.response.body.replace(/("secret"\s*:\s*")[^"]*(")/g, '$1(redacted)$2');
  const cut = Buffer.byteLength(body, 'utf8') > RESPONSE_BODY_LIMIT;
  return {
    ...x,
    request: { ...x.request, headers },
    response: {
      ...x.response,
      body: cut ? Buffer.from(body, 'utf8').subarray(0, RESPONSE_BODY_LIMIT).toString('utf8').replace(/\uFFFD$/, '') : body,
      bodyTruncated: x.response.bodyTruncated || cut,
    },
  };
}

function redact(secret: string): string {
  return secret === '' ? '(empty)' : `(redacted, ${secret.length} characters)`;
}
