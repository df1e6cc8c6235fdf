import { Hono } from 'hono';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { AppEnv } from '../app-env.ts';
import { requestId } from './request-id.ts';

/** A log that keeps its lines, at the given level. */
function keptLog(level: 'info' | 'warn') {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { log, lines };
}

function appWithIds(...ids: string[]) {
  const app = new Hono<AppEnv>();
  return { app, use: (log?: pino.Logger) => app.use('*', requestId({ newId: () => ids.shift() ?? 'req_none', ...(log ? { log } : {}) })) };
}

describe('requestId', () => {
  it('sets the id for the handler and stamps it on an answer that is not an operation', async () => {
    const { app, use } = appWithIds('req_1');
    use();
    app.get('/x', (c) => c.json({ seen: c.get('requestId') }));
    const res = await app.request('/x');
    expect(await res.json()).toEqual({ seen: 'req_1' });
    expect(res.headers.get('x-request-id')).toBe('req_1');
  });

  it("leaves an operation's answer to the router, which puts the id in it", async () => {
    const { app, use } = appWithIds('req_1');
    use();
    app.get('/op', (c) => {
      c.set('operationId', 'op');
      return c.json({}, 200, { 'x-request-id': 'set-by-router' });
    });
    expect((await app.request('/op')).headers.get('x-request-id')).toBe('set-by-router');
  });

  it('writes one access line per request when the log is at info, none at warn', async () => {
    const info = keptLog('info');
    const { app, use } = appWithIds('req_1');
    use(info.log);
    app.get('/x', (c) => c.text('ok', 201));
    await app.request('/x');
    expect(info.lines).toHaveLength(1);
    expect(info.lines[0]).toMatchObject({ msg: 'request', requestId: 'req_1', method: 'GET', path: '/x', status: 201 });

    const warn = keptLog('warn');
    const quiet = appWithIds('req_2');
    quiet.use(warn.log);
    quiet.app.get('/x', (c) => c.text('ok'));
    expect((await quiet.app.request('/x')).headers.get('x-request-id')).toBe('req_2');
    expect(warn.lines).toEqual([]);
  });
});
