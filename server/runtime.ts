// The Node versions this project runs on are package.json's `engines` (">=X.Y.Z"). An older
// Node fails here with a clear message instead of crashing later in a native module
// (better-sqlite3 13 does not load on Node 20).
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
    if ((have[i] ?? 0) < (want[i] ?? 0)) return `Node ${pkg.engines.node} is required (package.json engines); this is Node ${version}.`;
  }
  return null;
}
