// The Node versions this project runs on are package.json's `engines` (">=X.Y.Z"). An older
// Node fails here with a clear message instead of crashing later in a native module
// (better-sqlite3 13 does not load on Node 20). `npm ci` installs a supported Node from the npm
// registry (package.json optionalDependencies: node-<platform>-<arch>) and every npm script
// runs on it, so this is met only by running a file with an older `node` directly.
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { engines: { node: string } };

/** The message for an unsupported Node, or null when `version` satisfies engines.node. */
export function unsupportedNode(version: string = process.versions.node): string | null {
  const min = /^>=(\d+)\.(\d+)\.(\d+)$/.exec(pkg.engines.node);
  if (!min) return null;
  const have = version.split('.').map(Number);
  const want = min.slice(1).map(Number);
  for (let i = 0; i < 3; i++) {
    if ((have[i] ?? 0) > (want[i] ?? 0)) return null;
    if ((have[i] ?? 0) < (want[i] ?? 0)) return `Node ${pkg.engines.node} is required (package.json engines); this is Node ${version}. Run it through npm (npm start, npm test, npm run …), which uses the Node that npm ci installed in node_modules/.bin.`;
  }
  return null;
}

/**
 * The message when EXPECT_NODE_VERSION names another Node than this one, or null. CI sets it for
 * each run of the suite, so a run meant for one release cannot quietly run on another (such as
 * the Node pinned in node_modules/.bin, which npm puts first on PATH).
 */
export function unexpectedNode(expected: string | undefined = process.env.EXPECT_NODE_VERSION, version: string = process.versions.node): string | null {
  if (!expected || expected === version) return null;
  return `EXPECT_NODE_VERSION is ${expected} but this is Node ${version} (${process.execPath}).`;
}
