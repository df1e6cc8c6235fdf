// Checks path, query, headers and body against the operation's schemas (and refuses NUL
// characters anywhere); sets `request` to the validated, coerced input, or answers 400
// validation-failed listing every issue by JSON pointer.
import type { CompiledOperation } from '../../contract/operations.ts';
import { AppError } from '../../domain/errors.ts';
import { nulIssues } from '../control-characters.ts';
import { asMiddleware, type Step } from './step.ts';

/** Only the headers the operation declares are validated: reading them all costs on every request. */
function declaredHeaders(header: (name: string) => string | undefined, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const v = header(name);
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
      headers: declaredHeaders(c.req.header.bind(c.req), op.headerNames),
      body,
    };
    const { value, issues: schemaIssues } = op.validateRequest(input);
    const issues = [...nulIssues(input.path, '/path'), ...nulIssues(input.query, '/query'), ...nulIssues(body, '/body'), ...schemaIssues];
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
