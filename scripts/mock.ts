// npm run mock: Prism serves the Transactions API (port 4010, MOCK_PORT) and the v2 order API
// (next port) from the specs' examples, validating every request against the contract.
import { spawn, type ChildProcess } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { OPENAPI_DOCS, TOOL_ENV, bin } from './lib/specs.ts';
import { checkSettings, portSetting } from './lib/settings.ts';

export interface MockOptions {
  port?: number;
  host?: string;
  /** Which documents to serve, each on its own port from `port` upward. */
  apis?: ReadonlyArray<(typeof OPENAPI_DOCS)[number]['name']>;
}

export function startMocks(opts: MockOptions = {}): Array<{ name: string; port: number; child: ChildProcess }> {
  const base = opts.port ?? 4010;
  const apis = opts.apis ?? ['transactions', 'orders'];
  return apis.map((name, i) => {
    const doc = OPENAPI_DOCS.find((d) => d.name === name);
    if (!doc) throw new Error(`unknown API ${name}`);
    const port = base + i;
    const child = spawn(bin('prism'), ['mock', doc.file, '--host', opts.host ?? '127.0.0.1', '--port', String(port)], {
      env: TOOL_ENV,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return { name, port, child };
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const port = checkSettings('npm run mock', () => portSetting('MOCK_PORT', process.env.MOCK_PORT, 4010));
  const mocks = startMocks({ port, host: process.env.MOCK_HOST ?? '127.0.0.1' });
  for (const m of mocks) {
    m.child.stdout?.pipe(process.stdout);
    m.child.stderr?.pipe(process.stderr);
    console.log(`mock ${m.name}: http://127.0.0.1:${m.port}`);
    m.child.on('exit', (code) => {
      console.error(`mock ${m.name} exited with ${code}`);
      process.exit(code ?? 1);
    });
  }
  const stop = (): void => mocks.forEach((m) => m.child.kill('SIGTERM'));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
