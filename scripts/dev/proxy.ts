// The ports the designer uses (PORT for the server and its /docs, MOCK_PORT for the mock) are
// held by this process and forwarded to the current server or mock process, each on a port of
// its own. A replacement is started beside the running one and the forward switches to it once
// it answers: the old one serves until then, and keeps serving when a bad save never gets a
// replacement. Answers carry `x-dev-upstream-pid`, the process that gave them.
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { ReloadHub } from './reload.ts';
import { RELOAD_PATH, withReloadScript } from './reload.ts';

export interface Upstream {
  pid: number;
  /** The port that answers a request for this path. */
  portFor(path: string): number;
}

export interface ProxyOptions {
  name: string;
  upstream: () => Upstream | null;
  /** Live reload of HTML pages (the server's /docs). */
  reload?: ReloadHub;
}

// A page the reload script goes into must come uncompressed.
function requestHeaders(opts: ProxyOptions, req: IncomingMessage): IncomingMessage['headers'] {
  if (opts.reload === undefined) return req.headers;
  const { 'accept-encoding': _dropped, ...rest } = req.headers;
  return rest;
}

// A mock that reloads its document (Prism does, on a change of the file it serves) refuses
// connections for a moment: a request waits for it rather than failing.
const REFUSED_RETRY_MS = 10_000;

function send(opts: ProxyOptions, req: IncomingMessage, body: Buffer, res: ServerResponse, since: number): void {
  const up = opts.upstream();
  if (up === null) {
    res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '1' }).end(`npm run dev: the ${opts.name} is starting\n`);
    return;
  }
  const upstreamReq = request(
    { host: '127.0.0.1', port: up.portFor(req.url ?? '/'), method: req.method, path: req.url, headers: requestHeaders(opts, req) },
    (upRes) => {
      const headers = { ...upRes.headers, 'x-dev-upstream-pid': String(up.pid) };
      const html = opts.reload !== undefined && String(upRes.headers['content-type'] ?? '').startsWith('text/html');
      if (!html) {
        res.writeHead(upRes.statusCode ?? 502, headers);
        upRes.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      upRes.on('data', (c: Buffer) => chunks.push(c));
      upRes.on('end', () => {
        const page = withReloadScript(Buffer.concat(chunks).toString('utf8'));
        res.writeHead(upRes.statusCode ?? 502, { ...headers, 'content-length': String(Buffer.byteLength(page)) }).end(page);
      });
    },
  );
  upstreamReq.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'ECONNREFUSED' && Date.now() - since < REFUSED_RETRY_MS) {
      setTimeout(() => send(opts, req, body, res, since), 50);
      return;
    }
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`npm run dev: the ${opts.name} did not answer (${err.message})\n`);
  });
  upstreamReq.end(body);
}

function forward(opts: ProxyOptions, req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => send(opts, req, Buffer.concat(chunks), res, Date.now()));
}

export function startProxy(opts: ProxyOptions, port: number, host: string): Promise<Server> {
  const server = createServer((req, res) => {
    if (opts.reload !== undefined && req.url === RELOAD_PATH) opts.reload.handle(req, res);
    else forward(opts, req, res);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}
