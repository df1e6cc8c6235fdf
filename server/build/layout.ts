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
