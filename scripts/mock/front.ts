// The mock's one base URL. Every operation of the four documents is routed as on the server:
// credentials must be present where the operation's security asks for them (401), the body is
// read and the request validated by the server's own steps (415, 413, 400 malformed-json,
// 400 validation-failed naming each pointer), and only a request the contract accepts reaches
// the Prism instance of the operation's document (prism.ts, in this process), which answers a
// documented example (the `Prefer` header picks another; prefer.ts). Should Prism still find a
// request violation, that becomes 400 validation-failed too: a refused request never gets an
// unrelated documented example. Each refusal is one line of the log, with its reason.
//
// Mock-only routes live under /_mock: POST /_mock/webhooks sends a signed event to a URL, and
// /_mock/callbacks relays the callbacks Prism fires (the payout's notifyUrl), signed.
import { Hono, type Context } from 'hono';
import pino from 'pino';
import { operationsOf } from '../../contract/operations.ts';
import { API_NAMES, compileOperation, loadDocument, type ApiName, type OperationSpec } from '../../server/contract/operations.ts';
import { problemTypes, type ProblemSlug } from '../../generated/problem-types.ts';
import { AppError } from '../../server/domain/errors.ts';
import { newEventId } from '../../server/domain/ids.ts';
import type { AppEnv } from '../../server/http/app-env.ts';
import { problemErrorHandler } from '../../server/http/errors.ts';
import { jsonBodyStep } from '../../server/http/middleware/body.ts';
import { requestId } from '../../server/http/middleware/request-id.ts';
import { runSteps, type Step } from '../../server/http/middleware/step.ts';
import { validateRequestStep } from '../../server/http/middleware/validate.ts';
import { routeNotFound } from '../../server/http/route-not-found.ts';
import type { EventRecord } from '../../server/domain/model.ts';
import type { Sender } from '../../server/delivery/sender.ts';
import { checkDestination } from '../../server/domain/destination-check.ts';
import { documentedAnswers, honouredPreferences, type Documented } from './prefer.ts';
import { dynamicAnswer } from './dynamic.ts';
import type { PrismAnswer, PrismEngine, PrismRequest, Preferences } from './prism.ts';
import { UnknownEventError, mockDestinationPolicy, mockEvents, postSigned, sendMockEvent, type MockEvent } from './webhooks.ts';

export interface FrontOptions {
  /** The documents served, each prepared once (mockedApi): a reload prepares the changed one only. */
  apis: readonly MockedApi[];
  /** The Prism that serves `api`'s document (a reload replaces it). */
  prism: (api: ApiName) => PrismEngine;
  /** This front's own base URL, for the callbacks Prism fires through it. */
  selfUrl: () => string;
  /** Signs POST /_mock/webhooks when the call names no secret (as an endpoint's signing secret). */
  webhookSecret: string;
  /** Signs the callbacks Prism fires (as a tenant environment's callback secret). */
  callbackSecret: string;
  /** Sends the mocked webhooks and callbacks (createMockSender). */
  sender: Sender;
  /** One line per request the front refuses (with its reason) and per preference it ignores. */
  log?: (line: string) => void;
}

type Obj = Record<string, unknown>;
/** The headers that describe a request's body. */
const BODY_HEADERS = ['content-type', 'content-length', 'transfer-encoding', 'content-encoding'];
/** Response headers of Prism's that are not the contract's. */
const PRISM_ONLY = new Set(['sl-violations', 'access-control-allow-origin', 'access-control-allow-headers', 'access-control-allow-credentials', 'access-control-expose-headers', 'content-length', 'connection', 'keep-alive', 'date', 'transfer-encoding']);

export function createMockFront(opts: FrontOptions): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('*', requestId());
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  mountMockRoutes(app, opts);
  for (const api of opts.apis) mountApi(app, api, opts);
  const notFound = routeNotFound(API_NAMES);
  const onError = problemErrorHandler(pino({ level: 'warn' }));
  const log = opts.log ?? (() => {});
  app.notFound((c) => logRefusal(log, c, notFound(c)));
  app.onError((err, c) => logRefusal(log, c, onError(err, c)));
  return app;
}

/** Says in one line why the front refused a request (the problem's status, type and detail). */
export async function logRefusal(log: (line: string) => void, c: Context<AppEnv>, answer: Response | Promise<Response>): Promise<Response> {
  const res = await answer;
  const problem = (await res.clone().json().catch(() => ({}))) as Obj;
  const type = String(problem.type ?? '').split('/').pop();
  log(`refused ${c.req.method} ${c.req.path}: ${res.status} ${type} ${String(problem.detail ?? problem.title ?? '')}`.trimEnd());
  return res;
}

/** An operation of a document as the front handles it: its steps, then its document's Prism. */
interface MockedOperation {
  spec: OperationSpec;
  steps: Step[];
  callbackPointers: string[];
  /** Its documented statuses and example names, which `Prefer` may pick from. */
  documented: Documented;
}

export interface MockedApi {
  api: ApiName;
  operations: MockedOperation[];
}

/** Compiles the steps of `api`'s operations (the costly part of a front), from generated/openapi/ by default. */
export function mockedApi(api: ApiName, doc: Obj = loadDocument(api)): MockedApi {
  const schemes = ((doc.components as Obj | undefined)?.securitySchemes ?? {}) as Record<string, Obj>;
  const operations = operationsOf(api, doc).map((spec) => {
    const validate = onFirstUse(() => validateRequestStep(compileOperation(spec)));
    return {
      spec,
      steps: [
        credentialsPresentStep(spec, schemes),
        ...(spec.requestBody ? [jsonBodyStep()] : []),
        (c: Context<AppEnv>) => validate()(c),
        ...(spec.requiredOneOf ? [requiredOneOfStep(spec.requiredOneOf)] : []),
      ],
      callbackPointers: callbackBodyPointers(doc, spec),
      documented: documentedAnswers(operationObject(doc, spec)),
    };
  });
  return { api, operations };
}

// Each operation goes to the Prism of the document it belongs to: the routing follows the
// documents' own paths (/v2/orders is orders', /v2/webhooks management's), no table of prefixes.
function mountApi(app: Hono<AppEnv>, { api, operations }: MockedApi, opts: FrontOptions): void {
  for (const operation of operations) {
    app.on(operation.spec.method.toUpperCase(), [operation.spec.honoPath], async (c) => {
      await runSteps(operation.steps, c);
      const { prefer, ignored } = honouredPreferences(c.req.header('prefer'), operation.documented);
      if (ignored !== null) opts.log?.(`ignored Prefer ${ignored} on ${c.req.method} ${c.req.path}: answering as without it`);
      return answerFromPrism(c, opts.prism(api), prefer, opts, operation);
    });
  }
}

function operationObject(doc: Obj, spec: OperationSpec): Obj {
  return ((doc.paths as Obj)[spec.path] as Obj)[spec.method] as Obj;
}

/**
 * Built when a request first needs it: compiling every operation's validators up front
 * would cost the mock seconds of start-up and tens of MiB for operations a frontend may never call.
 */
function onFirstUse<T>(build: () => T): () => T {
  let built: T | null = null;
  return () => (built ??= build());
}

/**
 * 401 unauthenticated when no alternative of the operation's security is present. A mock
 * cannot tell a wrong credential from a right one; it can tell a missing one.
 */
function credentialsPresentStep(spec: OperationSpec, schemes: Record<string, Obj>): Step {
  const present = (c: Context<AppEnv>, name: string): boolean => {
    const scheme = schemes[name];
    if (!scheme) return false;
    if (scheme.type === 'apiKey' && scheme.in === 'header') return (c.req.header(String(scheme.name)) ?? '') !== '';
    if (scheme.type === 'http' && String(scheme.scheme).toLowerCase() === 'bearer') return /^Bearer\s+\S+$/i.test(c.req.header('authorization') ?? '');
    return false;
  };
  const alternatives = spec.security.map((requirement) => Object.keys(requirement));
  const wanted = alternatives.map((names) => names.map((n) => describeScheme(schemes[n], n)).join(' and ')).join(', or ');
  return (c) => {
    if (alternatives.length === 0 || alternatives.some((names) => names.every((n) => present(c, n)))) return;
    throw new AppError('unauthenticated', `Credentials are missing: send ${wanted}.`);
  };
}

/**
 * The operation's `x-required-one-of`: at least one of the parameters given (an empty value
 * counts as absent, as on the server), else the contract's problem type.
 */
function requiredOneOfStep(rule: NonNullable<OperationSpec['requiredOneOf']>): Step {
  if (!(rule.problem in problemTypes)) throw new Error(`x-required-one-of names an unknown problem type: ${rule.problem}`);
  const slug = rule.problem as ProblemSlug;
  return (c) => {
    if (rule.parameters.some((name) => (c.req.query(name) ?? '') !== '')) return;
    throw new AppError(slug, `Either ${rule.parameters.join(' or ')} is required`);
  };
}

function describeScheme(scheme: Obj | undefined, name: string): string {
  if (scheme?.type === 'apiKey') return String(scheme.name);
  if (scheme?.type === 'http') return `Authorization: Bearer <${name}>`;
  return name;
}

/** The body pointers the operation's callbacks take their URL from (`{$request.body#/notifyUrl}`). */
function callbackBodyPointers(doc: Obj, spec: OperationSpec): string[] {
  const op = operationObject(doc, spec);
  const callbacks = (op.callbacks ?? {}) as Record<string, Obj>;
  return Object.values(callbacks).flatMap((cb) =>
    Object.keys(cb)
      .map((expr) => /^\{\$request\.body#\/([^}/]+)\}$/.exec(expr)?.[1])
      .filter((p): p is string => p !== undefined),
  );
}

async function answerFromPrism(c: Context<AppEnv>, prism: PrismEngine, prefer: Preferences, opts: FrontOptions, operation: MockedOperation): Promise<Response> {
  const { callbackPointers } = operation;
  const url = new URL(c.req.url);
  const headers: Record<string, string> = {};
  // Accept is not passed on: the server answers the same whatever the client accepts (JSON, or
  // problem+json for an error), and so does the mock, for every Accept (docs/mock.md).
  // Nor, for an operation without a body, the headers of a body it was sent anyway (`{}`):
  // the server ignores such a body, and Prism would judge the request by them.
  const ignored = operation.spec.requestBody ? ['accept'] : ['accept', ...BODY_HEADERS];
  c.req.raw.headers.forEach((value, name) => {
    if (!ignored.includes(name)) headers[name] = value;
  });
  const body = c.get('body');
  const request: PrismRequest = {
    method: c.req.method,
    path: url.pathname,
    query: queryOf(url.searchParams),
    headers,
    body: body === undefined ? undefined : throughCallbackRelay(body, callbackPointers, opts.selfUrl()),
    prefer,
    callbacks: hasCallbackUrl(body, callbackPointers),
  };
  const answer = prefer.dynamic ? await dynamicOrExample(prism, request, operation, opts) : await prism.answer(request);
  const violations = requestViolations(answer.violations);
  if (violations.length > 0) {
    throw new AppError('validation-failed', `The request is invalid: ${violations.map((v) => `${v.pointer} ${v.detail}`).join('; ')}.`, { errors: violations });
  }
  const out = new Headers({ 'x-request-id': c.get('requestId') });
  for (const [name, value] of Object.entries(answer.headers)) if (!PRISM_ONLY.has(name.toLowerCase())) out.set(name, value);
  if (answer.status === 204 || answer.body === undefined) return new Response(null, { status: answer.status, headers: out });
  return new Response(typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body), { status: answer.status, headers: out });
}

async function dynamicOrExample(prism: PrismEngine, request: PrismRequest, operation: MockedOperation, opts: FrontOptions): Promise<PrismAnswer> {
  const outcome = await dynamicAnswer(prism, request, operation.spec);
  if (!outcome.generated) opts.log?.(`Prefer dynamic=true on ${request.method} ${request.path}: no generated body passed its schema in ${outcome.tries} tries; answered the documented example`);
  return outcome.answer;
}

function queryOf(params: URLSearchParams): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const key of new Set(params.keys())) {
    const values = params.getAll(key);
    query[key] = values.length === 1 ? (values[0] as string) : values;
  }
  return query;
}

/** Prism fires an operation's callbacks only for a request that names their URL (else it would log a failed call). */
function hasCallbackUrl(body: unknown, pointers: readonly string[]): boolean {
  return typeof body === 'object' && body !== null && pointers.some((p) => typeof (body as Obj)[p] === 'string');
}

const destinations = { destinations: mockDestinationPolicy() };

/**
 * A callback URL of the body must pass the destination rules as on a server in development
 * (400 destination-not-allowed naming the rule), then is pointed at the relay, which signs the
 * callback Prism fires and passes it on.
 */
function throughCallbackRelay(body: unknown, pointers: readonly string[], selfUrl: string): unknown {
  if (pointers.length === 0 || typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const out = { ...(body as Obj) };
  for (const p of pointers) {
    const url = out[p];
    if (typeof url === 'string') out[p] = `${selfUrl}/_mock/callbacks?to=${encodeURIComponent(checkDestination(destinations, url, p))}`;
  }
  return out;
}

interface PrismViolation {
  location?: unknown[];
  message?: string;
  severity?: string;
}

/** Prism's request violations as the contract's field issues (`["request","body","x"]` → `/body/x`). */
export function requestViolations(list: readonly PrismViolation[]): Array<{ pointer: string; detail: string }> {
  return list
    .filter((v) => v.severity === 'Error' && Array.isArray(v.location) && v.location[0] === 'request' && v.location.length > 1)
    .map((v) => {
      const [, where, ...rest] = (v.location ?? []).map(String);
      return { pointer: `/${where}${rest.map((r) => `/${r}`).join('')}`, detail: v.message ?? 'is invalid' };
    });
}

function mountMockRoutes(app: Hono<AppEnv>, opts: FrontOptions): void {
  mountMockWebhooks(app, opts);
  mountCallbackRelay(app, opts);
}

/**
 * POST /_mock/webhooks (a signed documented event to a URL) and GET /_mock/webhooks (the events
 * and their examples): mock-only calls, in the stateless and the stateful mock alike.
 */
export function mountMockWebhooks(app: Hono<AppEnv>, opts: Pick<FrontOptions, 'sender' | 'webhookSecret'>): void {
  let loaded: MockEvent[] | null = null;
  const events = (): MockEvent[] => (loaded ??= mockEvents());
  app.get('/_mock/webhooks', (c) => c.json({ events: events().map((e) => ({ event: e.name, examples: e.examples.map((x) => x.name) })) }));
  // Not part of the contract: a mock-only call. The secret travels in the body, never in the URL.
  app.post('/_mock/webhooks', async (c) => {
    const input = (await c.req.json().catch(() => null)) as Obj | null;
    const to = typeof input?.to === 'string' ? input.to : null;
    if (!input || typeof input.event !== 'string' || !to || !URL.canParse(to)) {
      throw new AppError('validation-failed', 'POST /_mock/webhooks takes {"event": "order.paid", "to": "<url>", "secret"?, "example"?, "newId"?}.', {
        errors: [{ pointer: '/body', detail: 'needs event (a message name) and to (an absolute URL)' }],
      });
    }
    try {
      const sent = await sendMockEvent(opts.sender, events(), {
        event: input.event,
        to,
        secret: typeof input.secret === 'string' ? input.secret : opts.webhookSecret,
        ...(typeof input.example === 'string' ? { example: input.example } : {}),
        ...(input.newId === true ? { newId: true } : {}),
      });
      return c.json(sent, 200);
    } catch (err) {
      if (err instanceof UnknownEventError || err instanceof RangeError) {
        throw new AppError('validation-failed', err.message, { errors: [{ pointer: err instanceof RangeError ? '/body/secret' : '/body/event', detail: err.message }] });
      }
      throw err;
    }
  });
}

/** Prism fires an operation's callbacks after answering it; they arrive here and go on signed. */
function mountCallbackRelay(app: Hono<AppEnv>, opts: FrontOptions): void {
  app.post('/_mock/callbacks', async (c) => {
    const to = c.req.query('to');
    if (!to || !URL.canParse(to)) return c.json({ error: 'to must be an absolute URL' }, 400);
    const now = Date.now();
    const record: EventRecord = {
      id: newEventId(now),
      environmentId: 'mock',
      type: 'payout.completed',
      payload: await c.req.text(),
      orderId: null,
      merchantReference: null,
      transactionId: null,
      createdAt: now,
    };
    const sent = await postSigned(opts.sender, to, record, opts.callbackSecret, now);
    return c.body(null, sent.status !== null && sent.status >= 200 && sent.status < 300 ? 204 : 502);
  });
}
