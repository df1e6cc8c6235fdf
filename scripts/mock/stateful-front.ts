// What the stateful mock adds in front of the reference server: the mock-only calls
// (`/_mock/webhooks`, as in the stateless mock), a clear refusal of the `Prefer` preferences
// that only the stateless mock honours (a request that asks for an error must never write a
// record), and one log line per refusal with its reason. Everything else is the server's.
import { Hono, type Context } from 'hono';
import pino from 'pino';
import type { Sender } from '../../server/delivery/sender.ts';
import { AppError } from '../../server/domain/errors.ts';
import type { AppEnv } from '../../server/http/app-env.ts';
import { problemErrorHandler } from '../../server/http/errors.ts';
import { logRefusal, mountMockWebhooks } from './front.ts';
import { parsePrefer } from './prefer.ts';

type Fetch = (req: Request) => Response | Promise<Response>;

export interface StatefulFrontOptions {
  /** The reference server's app. */
  server: Fetch;
  sender: Sender;
  /** Signs POST /_mock/webhooks calls that name no secret. */
  webhookSecret: string;
  /** One line per refusal (status 400 and above), with its reason. */
  refusals: (line: string) => void;
  /** One line per other answer; none without it. */
  access?: (line: string) => void;
}

/** The preferences the stateless mock honours by answering a documented example instead. */
const MOCK_PREFERENCES = ['code', 'example', 'dynamic'];

export function createStatefulFront(opts: StatefulFrontOptions): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('*', async (c, next) => {
    await next();
    if (c.res.status >= 400) c.res = await logRefusal(opts.refusals, c, c.res);
    else opts.access?.(`${c.req.method} ${c.req.path} ${c.res.status}`);
  });
  mountMockWebhooks(app, opts);
  app.all('*', (c) => {
    refuseMockPreferences(c);
    return opts.server(c.req.raw);
  });
  app.onError(problemErrorHandler(pino({ level: 'warn' })));
  return app;
}

/** 400 before the server is asked: honouring `code=409` here would still have written the payout. */
function refuseMockPreferences(c: Context<AppEnv>): void {
  const asked = Object.entries(parsePrefer(c.req.header('prefer')))
    .filter(([name]) => MOCK_PREFERENCES.includes(name))
    .map(([name, value]) => `${name}=${value}`);
  if (asked.length === 0) return;
  const detail = `the stateful mock does not honour Prefer ${asked.join(', ')}: it answers what the reference server does; the stateless mock (npm run mock, without --stateful) answers documented examples`;
  throw new AppError('validation-failed', `The request is invalid: /header/prefer ${detail}.`, { errors: [{ pointer: '/header/prefer', detail }] });
}
