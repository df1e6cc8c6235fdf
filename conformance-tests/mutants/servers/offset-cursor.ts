// Mutant (issue 67): GET /transactions/users pages by offset. Its Next-Cursor says "skip the
// first N records of this user's list": correct while nothing is created between pages, but a
// record created after the first page shifts every later page by one (the next page repeats
// the record just read, and the oldest is never reached). A cursor still names its user, so a
// cursor of another list stays refused. Caught only by
// `api.rules.paging.inserts-between-pages` (records created between pages).
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import { wrapApp } from './wrap.ts';

const PREFIX = 'off.';
const DEFAULT_LIMIT = 100;

const offsetCursor = (offset: number, userId: string): string => `${PREFIX}${Buffer.from(JSON.stringify({ offset, userId })).toString('base64url')}`;
function readCursor(cursor: string): { offset: number; userId: string } | null {
  try {
    return JSON.parse(Buffer.from(cursor.slice(PREFIX.length), 'base64url').toString('utf8')) as { offset: number; userId: string };
  } catch {
    return null;
  }
}

/** The answer with `body` and its headers, Next-Cursor set to `next` (or removed). */
function answer(res: Response, body: string, next: string | null): Response {
  const headers = new Headers(res.headers);
  headers.delete('content-length');
  headers.delete('next-cursor');
  if (next !== null) headers.set('next-cursor', next);
  return new Response(body, { status: res.status, headers });
}

export function build(services: Services, config: Config): BuiltApp {
  return wrapApp(buildApp(services, config), (inner) => async (c, next) => {
    if (c.req.method !== 'GET' || c.req.path !== '/transactions/users') return next();
    const url = new URL(c.req.url);
    const userId = url.searchParams.get('userId') ?? '';
    const limit = Number(url.searchParams.get('limit') ?? DEFAULT_LIMIT);
    const cursor = url.searchParams.get('cursor');
    const read = cursor?.startsWith(PREFIX) ? readCursor(cursor) : null;
    let res: Response;
    let offset = 0;
    if (read && read.userId === userId) {
      // The defect: the next page is "records offset.. of the list as it is now".
      offset = read.offset;
      url.searchParams.delete('cursor');
      url.searchParams.set('limit', String(Math.min(500, offset + limit + 1)));
      res = await inner(new Request(url, { headers: c.req.raw.headers }));
    } else {
      if (cursor !== null && !read) return next();
      if (read) url.searchParams.set('cursor', 'not-a-cursor-of-this-list'); // another user's: refused as before
      res = await inner(new Request(url, { headers: c.req.raw.headers }));
      if (!read && res.status === 200) {
        const hasMore = res.headers.get('next-cursor') !== null;
        c.res = undefined as unknown as Response; // Hono copies the old answer's headers onto a new one: clear it first
        c.res = answer(res, await res.text(), hasMore ? offsetCursor(limit, userId) : null);
        return;
      }
      c.res = undefined as unknown as Response;
      c.res = res;
      return;
    }
    if (res.status !== 200) {
      c.res = undefined as unknown as Response;
      c.res = res;
      return;
    }
    const all = (await res.json()) as unknown[];
    const page = all.slice(offset, offset + limit);
    c.res = undefined as unknown as Response;
    c.res = answer(res, JSON.stringify(page), all.length > offset + limit ? offsetCursor(offset + limit, userId) : null);
  });
}
