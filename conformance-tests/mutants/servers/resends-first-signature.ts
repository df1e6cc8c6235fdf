// Mutant: every retry of an event carries the Service-Signature of its first attempt (the
// same t and v1), where each attempt is signed anew with its own t. The HMAC still verifies,
// so only t betrays it: hours later every receiver rejects the retry as stale.
// Caught by the sender target's `sender.retry.fresh-timestamp` and
// `sender.retry.manual-fresh-timestamp` checks (the retry is held a second and more).
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import type { BuiltApp } from '../../../server/app/build-app.ts';
import { SIGNATURE_HEADER } from '../../../signing/signature.ts';
import { eventIdOf, headerName, withSender } from './sender-seam.ts';

export function build(services: Services, config: Config): BuiltApp {
  const firstSignature = new Map<string, string>();
  return withSender(services, config, (real) => async (req) => {
    const id = eventIdOf(req);
    const name = headerName(req, SIGNATURE_HEADER);
    if (id === undefined || name === undefined) return real(req);
    const first = firstSignature.get(id);
    if (first === undefined) {
      firstSignature.set(id, req.headers[name] ?? '');
      return real(req);
    }
    return real({ ...req, headers: { ...req.headers, [name]: first } }); // the defect
  });
}
