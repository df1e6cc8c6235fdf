// Prism's engine in the mock's own process (@stoplight/prism-http, what `prism mock` runs behind
// its HTTP server): one instance per document, holding that document's operations. A reload of
// one document builds its operations anew; the other documents keep theirs.
import './prism-hooks.ts';
import { ProblemJsonError, createInstance, getHttpOperationsFromSpec, type IHttpConfig, type IHttpRequest } from '@stoplight/prism-http';
import pino from 'pino';

type Obj = Record<string, unknown>;

/**
 * What Prism serves of a document (the server's own, generated/openapi/, bundled and
 * dereferenced): all but its servers, since the front is the base URL and Prism matches paths only.
 */
export function prismDocument(doc: Obj): Obj {
  const { servers: _servers, ...rest } = doc;
  return rest;
}

/** What the `Prefer` header (or Prism's `__code`-style query) asks of the mock. */
export interface Preferences {
  code?: number;
  example?: string;
  dynamic?: boolean;
}

export interface PrismRequest {
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  headers: Record<string, string>;
  body: unknown;
  prefer: Preferences;
  /** Fire the operation's callbacks (false when the request names no callback URL). */
  callbacks: boolean;
}

export interface PrismAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  /** Prism's request violations (`location` from `request`), as its server's sl-violations header lists them. */
  violations: Array<{ location: string[]; message: string; severity: string }>;
}

export interface PrismEngine {
  answer(req: PrismRequest): Promise<PrismAnswer>;
}

// As `prism mock` configures its instance: requests validated, security checked, no proxy.
const BASE_CONFIG = { validateRequest: true, validateResponse: false, checkSecurity: true, errors: false, upstreamProxy: undefined, isProxy: false } as const;
const SEVERITY = ['Error', 'Warning', 'Information', 'Hint'];
const SUCCESS_LEVEL = 32; // pino's info (30) + 2, as prism-core's createLogger defines it

/** Prism's instance for one document; `log` receives its log lines (none when absent). */
export async function startPrism(doc: Obj, log?: (line: string) => void): Promise<PrismEngine> {
  const operations = await getHttpOperationsFromSpec(doc);
  if (operations.length === 0) throw new Error('No operations found in the document.');
  const withoutCallbacks = operations.map(({ callbacks: _c, ...op }) => op);
  // Prism logs at a level of its own, `success` (as prism-core's createLogger defines it).
  const options = { customLevels: { success: SUCCESS_LEVEL }, level: log === undefined ? 'silent' : 'info', base: {}, timestamp: false };
  const logger = pino(options, { write: (line: string) => log?.(logLine(line)) });
  // Prism's components type a plain pino Logger; the one with its extra level is one at run time.
  const prism = createInstance({ ...BASE_CONFIG, mock: { dynamic: false } }, { logger: logger as unknown as pino.Logger });
  return {
    async answer(req) {
      const input: IHttpRequest = {
        method: req.method.toLowerCase() as IHttpRequest['method'],
        url: { path: req.path, query: req.query },
        headers: req.headers,
        ...(req.body === undefined ? {} : { body: req.body }),
      };
      const config: IHttpConfig = {
        ...BASE_CONFIG,
        mock: { dynamic: req.prefer.dynamic ?? false, ...(req.prefer.code === undefined ? {} : { code: req.prefer.code }), ...(req.prefer.example === undefined ? {} : { exampleKey: req.prefer.example }) },
      };
      const result = await prism.request(input, req.callbacks ? operations : withoutCallbacks, config)();
      if (result._tag === 'Left') return problemAnswer(result.left);
      const { output, validations } = result.right;
      return {
        status: output.statusCode,
        headers: output.headers ?? {},
        body: output.body,
        violations: validations.input.map((v) => ({ location: ['request', ...(v.path ?? []).map(String)], message: v.message, severity: SEVERITY[v.severity] ?? 'Error' })),
      };
    },
  };
}

/** Prism's own error (no path matched, no such example, ...) as its server sends it. */
function problemAnswer(e: Error & { status?: number; additional?: Obj }): PrismAnswer {
  const headers = { ...((e.additional?.headers ?? {}) as Record<string, string>), 'content-type': 'application/problem+json' };
  return { status: e.status ?? 500, headers, body: ProblemJsonError.toProblemJson(e), violations: [] };
}

/** A pino line of Prism's as one readable line. */
function logLine(line: string): string {
  try {
    const entry = JSON.parse(line) as { name?: string; msg?: string };
    return `[${entry.name ?? 'PRISM'}] ${entry.msg ?? ''}`;
  } catch {
    return line.trimEnd();
  }
}
