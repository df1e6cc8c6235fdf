import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { AppEnv } from '../app-env.ts';
import { operation } from './operation.ts';

describe('operation', () => {
  it('sets the operation id for middleware that runs around the route', async () => {
    const seen: Array<string | undefined> = [];
    const app = new Hono<AppEnv>();
    app.use('*', async (c, next) => {
      await next();
      seen.push(c.get('operationId'));
    });
    app.get('/op/:id', operation('getThing'), (c) => c.text('ok'));
    expect((await app.request('/op/42')).status).toBe(200);
    expect((await app.request('/elsewhere')).status).toBe(404);
    expect(seen).toEqual(['getThing', undefined]);
  });
});
