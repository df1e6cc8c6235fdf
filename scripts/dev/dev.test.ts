// npm run dev on a scratch copy of the repository (real processes: the loop, the server, the
// mock): a good save reaches the mock and the docs; a save with a YAML syntax error prints the
// error with its line while the last good mock and server keep answering; the fix is served;
// Ctrl-C leaves nothing running.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../testing/until.ts';
import { driveLoop, type DrivenLoop } from './driver.ts';
import { scratchCopy, type ScratchCopy } from './scratch-copy.ts';

const ORDER = '/v2/orders/3f0c9a8e-6b1d-4c2e-9f7a-2d5b8e1c4a90';
const MOCK_HEADERS = { 'x-api-key': 'pk_test_dev', 'x-api-hash': 'sk_test_dev' };
let copy: ScratchCopy;
let loop: DrivenLoop;
let file: string;
let original: string;

/** The getOrder `paid` example's merchantReference line (the mock's answer), replaced. */
function withExampleLine(line: string): { text: string; lineNumber: number } {
  const at = original.indexOf('merchantReference: ', original.indexOf('operationId: getOrder'));
  const end = original.indexOf('\n', at);
  return { text: `${original.slice(0, at)}${line}${original.slice(end)}`, lineNumber: original.slice(0, at).split('\n').length };
}

const mockAnswer = async (): Promise<string> => (await fetch(`${loop.mockUrl}${ORDER}`, { headers: MOCK_HEADERS })).text();
const docsPage = async (): Promise<string> => (await fetch(`${loop.serverUrl}/docs/orders.html`)).text();
const gone = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
};

beforeAll(async () => {
  copy = scratchCopy();
  file = path.join(copy.dir, 'spec', 'orders.openapi.yaml');
  original = await readFile(file, 'utf8');
  loop = await driveLoop(copy.dir);
}, 300_000);

// The loop is stopped (a test may have failed before its Ctrl-C) before its folder goes.
afterAll(async () => {
  await loop?.stop();
  copy?.remove();
});

describe('npm run dev', () => {
  it('serves a good save on the mock and the docs page, which carries the live-reload script', async () => {
    const served = loop.next('change-served');
    await writeFile(file, withExampleLine('merchantReference: cart-dev-1').text);
    await served;
    await until(async () => (await mockAnswer()).includes('"merchantReference":"cart-dev-1"'), 'the mock answering with cart-dev-1', 60_000);
    const page = await docsPage();
    expect(page).toContain('cart-dev-1');
    expect(page).toContain("new EventSource('/__dev/reload')");
  }, 300_000);

  it('prints a YAML syntax error with its file and line and keeps the last good mock and server answering', async () => {
    const serverPid = (await fetch(`${loop.serverUrl}/healthz`)).headers.get('x-dev-upstream-pid');
    const bad = withExampleLine('merchantReference: cart: dev-2');
    const refused = loop.next('change-refused');
    await writeFile(file, bad.text);
    const { errors } = await refused;
    expect(errors.join('\n')).toContain(`spec/orders.openapi.yaml:${bad.lineNumber}:`);
    expect(loop.output()).toContain(`spec/orders.openapi.yaml:${bad.lineNumber}:`);
    expect(await mockAnswer()).toContain('"merchantReference":"cart-dev-1"');
    const health = await fetch(`${loop.serverUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(health.headers.get('x-dev-upstream-pid')).toBe(serverPid);
    expect(await docsPage()).toContain('cart-dev-1');
  }, 300_000);

  it('serves the fix of the bad save', async () => {
    const served = loop.next('change-served');
    await writeFile(file, withExampleLine('merchantReference: cart-dev-3').text);
    await served;
    await until(async () => (await mockAnswer()).includes('"merchantReference":"cart-dev-3"'), 'the mock answering with cart-dev-3', 60_000);
    expect(await docsPage()).toContain('cart-dev-3');
  }, 300_000);

  it('stops the server and the mock on Ctrl-C', async () => {
    const pids = await Promise.all([`${loop.serverUrl}/healthz`, `${loop.mockUrl}${ORDER}`].map(async (u) => Number((await fetch(u, { headers: MOCK_HEADERS })).headers.get('x-dev-upstream-pid'))));
    expect(await loop.stop()).toBe(0);
    // Each child led a process group of its own (the mock runs Prism in its own process): -pid is the group.
    for (const pid of pids) expect(gone(-pid)).toBe(true);
  }, 120_000);
});
