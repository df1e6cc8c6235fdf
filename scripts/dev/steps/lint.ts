// Lint of the documents a save touched (scripts/lib/lint.ts), all at once. Warnings fail the
// save as they fail `npm run lint:spec`, so what the loop serves would also pass CI.
import type { GenerationTarget } from '../../generate.ts';
import { formatProblem, lintAsyncApi, lintOpenApi } from '../../lib/lint.ts';
import { ASYNCAPI_DOC } from '../../lib/specs.ts';

export async function lintProblems(targets: readonly GenerationTarget[]): Promise<string[]> {
  const reports = await Promise.all(
    targets.map(async (t) => {
      if (t === 'problem-types') return [];
      const problems = t === 'webhooks' ? await lintAsyncApi(ASYNCAPI_DOC) : await lintOpenApi(t);
      return problems.map((p) => `${t}: ${formatProblem(p)}`);
    }),
  );
  return reports.flat();
}
