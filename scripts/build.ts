// npm run build: the server and the admin tool bundled into dist/ (server/build/bundle.ts), as
// the tests bundle them. `npm ci` runs it (prepare); `npm start` and `npm run admin` run it with
// --if-stale, so a checkout pulled without `npm ci` never runs code older than its sources.
//   --if-stale        build only when dist/ is missing or a source's content changed (says why)
//   --out-dir DIR     another folder than dist/ (inside the repository: packages resolve from
//                     its node_modules); for tests
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DIST_DIR, ROOT, SERVED_PROGRAMS, buildBundles, staleReason } from '../server/build/bundle.ts';

const { values } = parseArgs({
  options: { 'if-stale': { type: 'boolean', default: false }, 'out-dir': { type: 'string' } },
});
const outDir = values['out-dir'] === undefined ? DIST_DIR : path.resolve(values['out-dir']);
const where = path.relative(process.cwd(), outDir) || '.';

if (path.relative(ROOT, outDir).startsWith('..')) {
  process.stderr.write(`--out-dir must be inside the repository (${ROOT}), where the packages resolve: ${outDir}\n`);
  process.exit(2);
}

let reason: string | null = 'asked';
if (values['if-stale']) {
  reason = await staleReason(outDir, SERVED_PROGRAMS);
  if (reason === null) process.exit(0);
}
const started = Date.now();
try {
  await buildBundles(SERVED_PROGRAMS, outDir);
} catch (err) {
  // esbuild has printed the errors with their places.
  process.stderr.write(`build failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}\n`);
  process.exit(1);
}
const done = `${new Intl.ListFormat('en', { type: 'conjunction' }).format(SERVED_PROGRAMS)} bundled into ${where}/ in ${Date.now() - started} ms`;
// Before `npm run admin`, whose standard output is its JSON answer: the rebuild is said on stderr.
if (values['if-stale']) process.stderr.write(`${done} (${reason})\n`);
else console.log(done);
