// The Chromium for browser tests: CHROMIUM_PATH when set to a file, Debian's /usr/bin/chromium
// when installed, otherwise the Chromium shipped inside the npm package `@sparticuz/chromium`.
// CHROMIUM_PATH=npm forces the package, as a machine without a system browser would get.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

const SYSTEM_CHROMIUM = '/usr/bin/chromium';

export async function chromiumExecutable(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const configured = env.CHROMIUM_PATH;
  if (configured && configured !== 'npm') {
    if (!existsSync(configured)) throw new Error(`CHROMIUM_PATH=${configured}: no such file`);
    return configured;
  }
  if (configured !== 'npm' && existsSync(SYSTEM_CHROMIUM)) return SYSTEM_CHROMIUM;
  return packagedChromium();
}

/**
 * executablePath() unpacks the browser into the temp dir once and afterwards returns whatever
 * `<tmpdir>/chromium` holds, whichever release put it there; so each release of the package
 * gets its own folder (the temp dir is switched only around that call).
 */
async function packagedChromium(): Promise<string> {
  const entry = createRequire(import.meta.url).resolve('@sparticuz/chromium');
  const { version } = JSON.parse(readFileSync(path.join(path.dirname(entry), '..', 'package.json'), 'utf8')) as { version: string };
  const dir = path.join(os.tmpdir(), `sparticuz-chromium-${version}`);
  await mkdir(dir, { recursive: true });
  const { default: chromium } = await import('@sparticuz/chromium');
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  try {
    return await chromium.executablePath();
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
}
