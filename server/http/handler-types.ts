// Handler types derived from the generated operation types, so a handler that returns a
// shape or status the spec does not document fails to compile.
import type { Principal } from '../domain/auth.ts';
import type { Scope, Services } from '../domain/context.ts';
import type { EventStreamSettings, StreamedReply } from './event-stream.ts';
import type { RenderedJson } from './rendered.ts';

export interface HandlerContext {
  principal: Principal;
  scope: Scope;
  services: Services;
  requestId: string;
  /** How event streams run (GET /v2/events/stream). */
  streams: EventStreamSettings;
}

export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface HandlerInput {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  body: unknown;
}

export type Handler = (input: HandlerInput, ctx: HandlerContext) => Promise<Reply>;

type SuccessStatus = 200 | 201 | 202;
type JsonContent<R> = R extends { content: { 'application/json': infer B } } ? B : undefined;
/** An event stream is answered as a streamed Response; JSON as a body (or its rendered text). */
type Answer<R> = R extends { content: { 'text/event-stream': unknown } } ? StreamedReply : JsonContent<R> | RenderedJson<JsonContent<R>>;
type Ok<Op> = Op extends { responses: infer Rs }
  ? {
      [S in keyof Rs & SuccessStatus]: { status: S; body: Answer<Rs[S]>; headers?: Record<string, string> };
    }[keyof Rs & SuccessStatus]
  : never;
type Param<Op, K extends 'query' | 'path' | 'header'> = Op extends { parameters: infer P }
  ? P extends { [key in K]?: infer X }
    ? [X] extends [never] | [undefined]
      ? Record<string, never>
      : NonNullable<X>
    : Record<string, never>
  : Record<string, never>;
type Body<Op> = Op extends { requestBody?: infer RB } ? JsonContent<NonNullable<RB>> : undefined;

export type TypedHandler<Op> = (
  input: { path: Param<Op, 'path'>; query: Param<Op, 'query'>; headers: Param<Op, 'header'>; body: Body<Op> },
  ctx: HandlerContext,
) => Promise<Ok<Op>>;

/** One handler per operationId of a generated `operations` interface. */
export type HandlersFor<Ops> = { [K in keyof Ops]: TypedHandler<Ops[K]> };

/** Erases the per-operation types for the router, which validated the input against the same spec. */
export function untyped<Ops>(handlers: HandlersFor<Ops> | Partial<HandlersFor<Ops>>): Record<string, Handler> {
  return handlers as unknown as Record<string, Handler>;
}
