// Mutant: every delivery is signed with the secret its kind was first signed with (the
// endpoint's secret at creation, the environment's first callback secret), so after a rotation
// new events and the next attempts of pending callbacks still carry the previous secret.
// Caught by the sender target's `sender.rotation.new-secret` and `sender.rotation.callback-secret` checks.
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import type { BuiltApp } from '../../../server/app/build-app.ts';
import { SIGNATURE_HEADER, signatureHeader } from '../../../signing/signature.ts';
import { headerName, withSender } from './sender-seam.ts';

export function build(services: Services, config: Config): BuiltApp {
  const firstSecret = new Map<'webhook' | 'callback', string>();
  return withSender(services, config, (real, secret) => async (req) => {
    const key = secret(req);
    const name = headerName(req, SIGNATURE_HEADER);
    const t = name === undefined ? undefined : /^t=([0-9]+),/.exec(req.headers[name] ?? '')?.[1];
    if (key === null || name === undefined || t === undefined) return real(req);
    const kind = 'type' in (JSON.parse(req.body) as object) ? 'webhook' : 'callback';
    const kept = firstSecret.get(kind) ?? key;
    firstSecret.set(kind, kept); // the defect: the secret is never looked up again
    return real({ ...req, headers: { ...req.headers, [name]: signatureHeader(kept, Number(t), req.body) } });
  });
}
