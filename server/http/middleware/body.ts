// Reads the JSON request body into `body` (415, 413, 400 malformed-json from readJsonBody).
// Mounted only on operations that have a request body: the others ignore any body sent.
import { BODY_LIMIT_BYTES, readJsonBody } from '../body.ts';
import { asMiddleware, type Step } from './step.ts';

export const jsonBody = (limit: number = BODY_LIMIT_BYTES) => asMiddleware(jsonBodyStep(limit));

export function jsonBodyStep(limit: number = BODY_LIMIT_BYTES): Step {
  return async (c) => {
    c.set('body', await readJsonBody(c, limit));
  };
}
