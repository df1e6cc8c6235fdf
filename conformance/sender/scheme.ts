// The endpoint's signatureScheme decides which header sets a delivery must carry
// (`management#signature-scheme`): Service-* for `service-signature`, webhook-* for
// `standard-webhooks`, both sets on every attempt for `both`. The signature checks judge each
// set a delivery carries on its own (verify.ts signatureProblems); this check judges that the
// required ones are there, on every delivery of the endpoint received so far (first attempts,
// retries, manual retries). Payout callbacks are always Service-Signature and not judged here.
import { fail, pass } from '../core/outcome.ts';
import type { Received, SuiteReceiver } from './receiver.ts';
import type { AddCheck } from './rotation.ts';
import { SCHEME_RULE } from './rules.ts';
import type { Endpoint } from './session.ts';
import { asExchange, missingSets } from './verify.ts';

export interface SchemeOptions {
  add: AddCheck;
  receiver: SuiteReceiver;
  endpoint: () => Promise<Endpoint>;
  /** Whether a delivery was sent to the endpoint (not a payout's notifyUrl). */
  ofEndpoint: (r: Received) => boolean;
}

export function schemeChecks(o: SchemeOptions): void {
  o.add('scheme.required-headers', 'delivery rules', "every delivery carries the header sets of the endpoint's signatureScheme (both: each set, on every attempt)", [SCHEME_RULE], async () => {
    const { scheme } = await o.endpoint();
    const deliveries = o.receiver.received.filter(o.ofEndpoint);
    if (deliveries.length === 0) return fail('no delivery of the endpoint arrived before this check', SCHEME_RULE, []);
    for (const [i, r] of deliveries.entries()) {
      const missing = missingSets(r, scheme);
      if (missing.length > 0) return fail(`delivery ${i + 1} of ${deliveries.length} (${r.url}) lacks ${missing.join(' and ')}: the endpoint's signatureScheme is ${scheme}`, SCHEME_RULE, [asExchange(r, `delivery ${i + 1}`)]);
    }
    return pass([`${deliveries.length} deliveries in the ${scheme} scheme`]);
  });
}
