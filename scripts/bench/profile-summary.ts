// npx tsx scripts/bench/profile-summary.ts FILE.cpuprofile [N] [SKIP_S]: the top self-time
// functions of a V8 CPU profile (node --cpu-prof, e.g. from bench:api --profile DIR), and the
// self time per package or source folder, as percentages of the sampled time; SKIP_S seconds
// at the start (start-up: module loading, schema compilation) are left out.
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
const [file, n = '25', skip = '0'] = process.argv.slice(2);
if (!file) throw new Error('usage: profile-summary FILE.cpuprofile [N]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
const byNode = new Map<number, Node>(profile.nodes.map((x) => [x.id, x]));
let t = 0;
const samples = profile.samples.filter((_, i) => (t += profile.timeDeltas[i] ?? 0) >= Number(skip) * 1e6);
const total = samples.length;
const fn = new Map<string, number>();
const area = new Map<string, number>();
const areaOf = (url: string): string => {
  if (!url) return '(native/gc/idle)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  const src = /\/(server|client|generated)\/(.*)\/[^/]+$/.exec(url);
  if (src) return `${src[1]}/${src[2]}`;
  if (url.startsWith('node:')) return url.replace(/^node:internal\/([^/]+).*/, 'node:$1');
  return url;
};
for (const id of samples) {
  const node = byNode.get(id)!;
  const { functionName, url, lineNumber } = node.callFrame;
  const key = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|server|client)\//, '$1/')}:${lineNumber + 1}`;
  fn.set(key, (fn.get(key) ?? 0) + 1);
  const a = areaOf(url);
  area.set(a, (area.get(a) ?? 0) + 1);
}
const pct = (k: number): string => `${((100 * k) / total).toFixed(1)}%`;
console.log(`${total} samples\n\ntop self time:`);
for (const [k, v] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, Number(n))) console.log(`  ${pct(v).padStart(6)}  ${k}`);
console.log('\nself time by package / folder:');
for (const [k, v] of [...area].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`  ${pct(v).padStart(6)}  ${k}`);
