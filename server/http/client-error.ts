// Answers the HTTP listener gives before any operation runs (headers too large, request
// timeout, bytes that are not HTTP) as problem+json like every other error. Without a
// `clientError` listener Node writes a bare `HTTP/1.1 431` (or 408, 400) itself; with one,
// the answer is ours to write, under the same rule Node follows: only while nothing of a
// response has been sent on the connection, then the connection is closed.
import type { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { PROBLEM_TYPE_BASE, problemTypes, type ProblemSlug } from '../../generated/problem-types.ts';
import { PROBLEM_CONTENT_TYPE, type ProblemBody } from './problem.ts';

/** The problem type of a listener error, by Node's error code. */
export function clientErrorSlug(code: string | undefined): ProblemSlug {
  if (code === 'HPE_HEADER_OVERFLOW') return 'headers-too-large';
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'request-timeout';
  return 'bad-request';
}

const DETAIL: Partial<Record<ProblemSlug, string>> = {
  'headers-too-large': 'The request headers exceed the size limit.',
  'request-timeout': 'The request did not arrive in time.',
  'bad-request': 'The request is not valid HTTP/1.1.',
};

/** The whole HTTP/1.1 answer, connection closed after it. */
export function clientErrorResponse(slug: ProblemSlug): string {
  const { status, title } = problemTypes[slug];
  const problem: ProblemBody = { type: `${PROBLEM_TYPE_BASE}${slug}`, title, status, detail: DETAIL[slug] ?? title };
  const body = JSON.stringify(problem);
  return (
    `HTTP/1.1 ${status} ${title}\r\n` +
    `content-type: ${PROBLEM_CONTENT_TYPE}\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    'connection: close\r\n\r\n' +
    body
  );
}

/** A response already started on the socket (Node's own field): nothing may be written then. */
function responseStarted(socket: Socket): boolean {
  const message = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  return message?.headersSent === true;
}

/** Installs the listener on a server created by @hono/node-server's `serve` (an HTTP/1.1 server). */
export function answerClientErrors(server: Pick<EventEmitter, 'on'>): void {
  server.on('clientError', (err: Error & { code?: string }, socket: Socket) => {
    if (err.code !== 'ECONNRESET' && socket.writable && !responseStarted(socket)) {
      socket.write(clientErrorResponse(clientErrorSlug(err.code)));
      socket.destroySoon(); // once written (the listener allows half-open sockets: end alone would wait for the client)
    } else socket.destroy();
  });
}
