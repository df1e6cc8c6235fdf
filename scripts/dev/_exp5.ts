import { generateTargets } from '../generate.ts';
import { lintProblems } from './steps/lint.ts';
import { yamlErrors } from './steps/syntax.ts';
import { OPENAPI_DOCS } from '../lib/specs.ts';
const t = () => performance.now();
const f = OPENAPI_DOCS.find((d) => d.name === 'orders')!.file;
for (let i = 0; i < 4; i++) {
  let t0 = t(); await yamlErrors([f]); const y = t() - t0;
  t0 = t(); await lintProblems(['orders']); const l = t() - t0;
  t0 = t(); const g = await generateTargets(['orders']); const gm = t() - t0;
  t0 = t(); await Promise.all([lintProblems(['orders']), generateTargets(['orders'])]); const both = t() - t0;
  console.log(`yaml ${y.toFixed(0)} lint ${l.toFixed(0)} generate ${gm.toFixed(0)} both ${both.toFixed(0)} files ${[...g.files.keys()].join(',')}`);
}
