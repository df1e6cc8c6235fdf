// Lint of the documents a save touched (scripts/lib/lint.ts), in this process. Warnings fail
// the save as they fail `npm run lint:spec`.
import type { GenerationTarget } from '../../generate.ts';
import { formatProblem, lintAsyncApi, lintOpenApiFile } from '../../lib/lint.ts';
import { ASYNCAPI_DOC, OPENAPI_DOCS } from '../../lib/specs.ts';

export async function lintProblems(targets: readonly GenerationTarget[]): Promise<string[]> {
  const reports = await Promise.all(
    targets.map(async (t) => {
      if (t === 'problem-types') return [];
      const doc = OPENAPI_DOCS.find((d) => d.name === t);
      const problems = doc === undefined ? await lintAsyncApi(ASYNCAPI_DOC) : await lintOpenApiFile(doc.file);
      return problems.map((p) => `${t}: ${formatProblem(p)}`);
    }),
  );
  return reports.flat();
}
