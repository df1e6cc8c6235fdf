// Live reload of the docs pages open in a browser: a Server-Sent Events stream, and a script
// the dev proxy adds to every HTML page it serves, which reloads the page when it is rebuilt.
import type { IncomingMessage, ServerResponse } from 'node:http';

export const RELOAD_PATH = '/__dev/reload';

export const RELOAD_SCRIPT = `<script>
new EventSource('${RELOAD_PATH}').addEventListener('reload', (e) => {
  const page = location.pathname.split('/').pop().replace(/\\.html$/, '');
  if (e.data === '*' || e.data === page) location.reload();
});
</script>`;

export interface ReloadHub {
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** Tells the open pages named (or every page: '*') to reload. */
  notify(pages: readonly string[]): void;
  close(): void;
}

export function createReloadHub(): ReloadHub {
  const clients = new Set<ServerResponse>();
  return {
    handle(req, res) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
      res.write(': connected\n\n');
      clients.add(res);
      req.on('close', () => clients.delete(res));
    },
    notify(pages) {
      for (const page of pages) for (const res of clients) res.write(`event: reload\ndata: ${page}\n\n`);
    },
    close() {
      for (const res of clients) res.end();
      clients.clear();
    },
  };
}

/** The page with the reload script before its closing body tag (or at its end). */
export function withReloadScript(html: string): string {
  const at = html.lastIndexOf('</body>');
  return at < 0 ? html + RELOAD_SCRIPT : html.slice(0, at) + RELOAD_SCRIPT + html.slice(at);
}
