// The seam of the HTTP mutants: the real app (server/app/build-app.ts buildApp) behind one Hono
// middleware that introduces the defect. Everything else (routing, validation, the store,
// the delivery engine) is the bundled server's own. A middleware that needs to change the
// request itself sends the changed request to the real app with `inner`.
import { Hono } from 'hono';
import type { MiddlewareHandler } from 'hono';
import type { BuiltApp } from '../../../server/app/build-app.ts';
import type { AppEnv } from '../../../server/http/app-env.ts';

/** Sends a request to the real app. */
export type Inner = (req: Request) => Promise<Response>;

export function wrapApp(built: BuiltApp, middleware: (inner: Inner) => MiddlewareHandler<AppEnv>): BuiltApp {
  const app = new Hono<AppEnv>();
  app.use('*', (c, next) => middleware(async (req) => built.app.fetch(req, c.env))(c, next));
  app.all('*', (c) => built.app.fetch(c.req.raw, c.env));
  return { ...built, app };
}
