import { describe, expect, it } from 'vitest';
import { jsonBody } from './body.ts';
import { appWith, problemSlug } from './testing.ts';

describe('jsonBody', () => {
  const app = appWith(jsonBody(64));
  // As on the wire: app.request does not add content-length itself.
  const post = (body: string, type = 'application/json') =>
    app.request('/op/1', { method: 'POST', body, headers: { 'content-type': type, 'content-length': String(Buffer.byteLength(body)) } });

  it('puts the parsed JSON in the context', async () => {
    const res = await post('{"amount":1.5}');
    expect(res.status).toBe(200);
    expect(((await res.json()) as { body: unknown }).body).toEqual({ amount: 1.5 });
  });

  it('leaves an empty body undefined', async () => {
    const res = await app.request('/op/1', { method: 'POST' });
    expect(((await res.json()) as { body: unknown }).body).toBeNull();
  });

  it.each([
    ['another media type', () => post('{}', 'text/plain'), 415, 'unsupported-media-type'],
    ['malformed JSON', () => post('{"amount":'), 400, 'malformed-json'],
    ['a body past the limit', () => post(JSON.stringify({ pad: 'x'.repeat(100) })), 413, 'payload-too-large'],
  ])('answers %s with its problem', async (_what, send, status, slug) => {
    const res = await send();
    expect(res.status).toBe(status);
    expect(await problemSlug(res)).toBe(slug);
  });
});
