// Where a build puts each program, shared by the bundler (bundle.ts) and the programs that look
// for a bundle when they run (main.ts finds its sending thread's). It imports nothing but
// node:path, so that the server never loads the build tooling (esbuild, the staleness check):
// `npm start` decides whether to rebuild before it starts node.
import path from 'node:path';

/** `server/main.ts` → `server__main`: a bundle's name, flat in its folder. */
export function bundleName(program: string): string {
  return program.replace(/\.tsx?$/, '').replaceAll('/', '__');
}

/** The file that runs `program` in a folder of bundles. */
export function bundleFile(dir: string, program: string): string {
  return path.join(dir, `${bundleName(program)}.mjs`);
}

/**
 * The V8 flags the server runs with: `npm start`, `npm run start:cluster`, and the servers the
 * tests and benches start. Under 512 connections of POST /v2/orders with an endpoint, V8's
 * defaults on a machine with 24 GiB grow the young generation to 128 MB and let the old one
 * reach up to four times its live data before a full collection: the process grew by 290–370 MB
 * while holding about 50 MB live. A 16 MB semi-space and a fixed growth factor of 2 hold it to
 * about +170 MB for the same CPU an order within noise (docs/benchmarks.md, "Memory").
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=16', '--heap-growing-percent=100'];

/** The node arguments that run the server's bundle in `dir`. */
export function serverNodeArgs(dir: string): string[] {
  return ['--enable-source-maps', ...SERVER_NODE_FLAGS, bundleFile(dir, 'server/main.ts')];
}
