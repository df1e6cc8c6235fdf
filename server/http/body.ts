// Reading a JSON request body: 415 for another media type, 413 past the limit, 400 for
// malformed JSON. The body is read as bytes with the limit enforced while streaming.
import type { Context } from 'hono';
import { AppError } from '../domain/errors.ts';

export const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * A chunked body (no content-length) is read as a stream and cut at the limit. A body with a
 * content-length within the limit is read in one go: the HTTP parser delivers exactly that many
 * bytes, and @hono/node-server then reads the Node stream directly instead of a web stream.
 */
async function readLimited(c: Context, limit: number): Promise<string | undefined> {
  const raw = c.req.raw.body;
  if (!raw) return undefined;
  const reader = raw.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw new AppError('payload-too-large', `The request body exceeds ${limit} bytes.`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function readJsonBody(c: Context, limit = BODY_LIMIT_BYTES): Promise<unknown> {
  const length = c.req.header('content-length');
  const chunked = c.req.header('transfer-encoding');
  if ((!length || length === '0') && !chunked) return undefined;
  const type = (c.req.header('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json' && !(type?.startsWith('application/') && type.endsWith('+json'))) {
    throw new AppError('unsupported-media-type', `Request bodies must be application/json, not ${type || 'an unspecified type'}.`);
  }
  if (length && Number(length) > limit) {
    throw new AppError('payload-too-large', `The request body exceeds ${limit} bytes.`);
  }
  const text = length && !chunked ? await c.req.raw.text() : await readLimited(c, limit);
  if (text === undefined || text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (e) {
    throw new AppError('malformed-json', `The request body is not well-formed JSON: ${(e as Error).message}.`);
  }
  // The validators and checks downstream recurse: a body nested thousands of levels deep would
  // overflow the stack (a 500). No document of the contract nests anywhere near this.
  if (exceedsDepth(value, MAX_BODY_DEPTH)) {
    throw new AppError('validation-failed', `The request body nests deeper than ${MAX_BODY_DEPTH} levels.`, {
      errors: [{ pointer: '/body', detail: `nests deeper than ${MAX_BODY_DEPTH} levels` }],
    });
  }
  return value;
}

export const MAX_BODY_DEPTH = 64;

/** Iterative (an explicit stack), so the check itself cannot overflow. */
function exceedsDepth(root: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (depth > max) return true;
    for (const child of Object.values(value)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}
