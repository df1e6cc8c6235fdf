// The Chromium for browser tests: CHROMIUM_PATH when set to a file, Debian's /usr/bin/chromium
// when installed, otherwise the Chromium shipped inside the npm package `@sparticuz/chromium`
// (unpacked once into the temp dir by its executablePath()). CHROMIUM_PATH=npm forces the
// package, as a machine without a system browser would get.
import { existsSync } from 'node:fs';

const SYSTEM_CHROMIUM = '/usr/bin/chromium';

export async function chromiumExecutable(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const configured = env.CHROMIUM_PATH;
  if (configured && configured !== 'npm') {
    if (!existsSync(configured)) throw new Error(`CHROMIUM_PATH=${configured}: no such file`);
    return configured;
  }
  if (configured !== 'npm' && existsSync(SYSTEM_CHROMIUM)) return SYSTEM_CHROMIUM;
  const { default: chromium } = await import('@sparticuz/chromium');
  return chromium.executablePath();
}
