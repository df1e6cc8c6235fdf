// Checks path, query, headers and body against the operation's schemas (and refuses NUL
// characters anywhere); sets `request` to the validated, coerced input, or answers 400
// validation-failed listing every issue by JSON pointer.
import type { CompiledOperation } from '../../contract/operations.ts';
import { AppError } from '../../domain/errors.ts';
import { nulIssues } from '../control-characters.ts';
import { asMiddleware, type Step } from './step.ts';

/** What an operation that declares no header validates: nothing (the validator only reads it). */
const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** Only the headers the operation declares are validated: reading them all costs on every request. */
function declaredHeaders(req: { header(name: string): string | undefined }, names: readonly string[]): Record<string, string> {
  if (names.length === 0) return NO_HEADERS;
  const out: Record<string, string> = {};
  for (const name of names) {
    const v = req.header(name);
    if (v !== undefined) out[name] = v;
  }
  return out;
}

export const validateRequest = (op: CompiledOperation) => asMiddleware(validateRequestStep(op));

export function validateRequestStep(op: CompiledOperation): Step {
  return (c) => {
    const body = c.get('body');
    const input = {
      path: c.req.param() as Record<string, string>,
      query: c.req.query(),
      headers: declaredHeaders(c.req, op.headerNames),
      body,
    };
    const { value, issues: schemaIssues } = op.validateRequest(input);
    // In the order the caller reads them: NULs by location, then the schemas' issues.
    const issues = nulIssues(body, '/body', nulIssues(input.query, '/query', nulIssues(input.path, '/path')));
    for (const issue of schemaIssues) issues.push(issue);
    if (issues.length > 0) {
      const summary = issues
        .slice(0, 3)
        .map((i) => `${i.pointer} ${i.detail}`)
        .join('; ');
      throw new AppError('validation-failed', `The request is invalid: ${summary}${issues.length > 3 ? `; and ${issues.length - 3} more` : ''}.`, {
        errors: issues,
      });
    }
    c.set('request', value);
  };
}
