// Test helpers of the portal: the real server (startTestServer) with the portal's base URL, and
// a small cookie-keeping HTTP client that reads forms the way a browser would.
import type { Clock } from '../domain/clock.ts';
import { startTestServer, type TestServer, type TestServerOptions } from '../testing/harness.ts';

/** Headless Chromium's flags for the portal's browser tests. */
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/** Real time plus a skew a browser test moves forward (a sign-in ages past PORTAL_REVERIFY_AFTER). */
export class SkewClock implements Clock {
  skew = 0;
  now(): number {
    return Date.now() + this.skew;
  }
}

export interface PortalTestServer extends TestServer {
  /** Where /portal is served (the server itself). */
  portalUrl: string;
}

/** The real server, with the portal mounted on it. */
export async function startPortalTestServer(opts: TestServerOptions = {}): Promise<PortalTestServer> {
  const server = await startTestServer(opts);
  return { ...server, portalUrl: server.url };
}

/** The value of the hidden `_csrf` field of the first form in a page. */
export function csrfOf(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!m?.[1]) throw new Error('no _csrf field in the page');
  return m[1];
}

/** How a PortalClient sends: real HTTP by default, or a Hono app's `request` (no socket). */
export type Fetcher = (url: string, init: RequestInit) => Response | Promise<Response>;

/** A browser-like client without a browser: keeps cookies, posts urlencoded forms, never follows redirects. */
export class PortalClient {
  private cookies = new Map<string, string>();

  constructor(
    readonly baseUrl: string,
    readonly opts: { fetch?: Fetcher; headers?: Record<string, string> } = {},
  ) {}

  private send(path: string, init: RequestInit): Promise<Response> {
    return Promise.resolve((this.opts.fetch ?? fetch)(`${this.baseUrl}${path}`, init));
  }

  private remember(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (/max-age=0/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  setCookie(name: string, value: string): void {
    this.cookies.set(name, value);
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    return { ...this.opts.headers, ...(cookie ? { cookie } : {}), ...extra };
  }

  async get(path: string): Promise<{ res: Response; html: string }> {
    const res = await this.send(path, { headers: this.headers(), redirect: 'manual' });
    this.remember(res);
    return { res, html: await res.text() };
  }

  async post(path: string, form: Record<string, string>): Promise<{ res: Response; html: string }> {
    const res = await this.send(path, {
      method: 'POST',
      headers: this.headers({ 'content-type': 'application/x-www-form-urlencoded' }),
      body: new URLSearchParams(form).toString(),
      redirect: 'manual',
    });
    this.remember(res);
    return { res, html: await res.text() };
  }

  /** Signs in through the form; answers the sign-in POST. */
  async signIn(token: string, environment: 'test' | 'live' = 'test'): Promise<{ res: Response; html: string }> {
    const form = await this.get('/portal/sign-in');
    return this.post('/portal/sign-in', { _csrf: csrfOf(form.html), token, environment });
  }
}
