// Why the api target has no check of a rule of the contract: written per rule (or per family of
// derived rules that no request can provoke), so a new rule without a check and without a
// reason here fails conformance/rules.test.ts. Every rule the suite can judge from outside has
// its check (issue 67): what is left here cannot be provoked by a request.
import { DELIVERY_RULES, type NoCheckReasons } from '../core/contract-rules.ts';

const INTERNAL = 'needs an internal failure of the implementation, which a request cannot cause on purpose';

/**
 * 429 rate-limited: why no request of a run provokes it. A limit a run could reach would be a
 * limit a run would also trip by chance, so the suite's requests stay under it.
 */
const RATE_LIMITED =
  'the contract fixes no limit (429 is documented on every operation; the 100 per second of its example is an example): the limit is per credential and set by the operator (the bundled server: RATE_LIMIT_RPS, 1000 a second, bursts of 2000), so exhausting it from outside needs more requests within one second than an unknown limit, which a run cannot promise to send from a partner\'s machine, and the exhausted credential would refuse the run\'s next checks';

export const apiNoCheck: NoCheckReasons = (r) => {
  if (DELIVERY_RULES.includes(r.id)) return 'shown by deliveries: the sender target judges it (see its coverage)';
  const slug = r.id.slice(r.id.indexOf('#') + 1);
  // Families of derived rules: the same answer on every operation, with the same reason.
  if (slug === 'status-500' || slug === 'problem-internal') return INTERNAL;
  if (slug === 'status-429' || slug === 'problem-rate-limited') return RATE_LIMITED;
  if (/^(status-50[34]|problem-store-unavailable|problem-outcome-unknown)$/.test(slug)) {
    if (r.rule.startsWith('GET ')) return 'a read cannot take the sandbox write fault (it arms the next write): needs the data store down, which a request cannot cause on purpose';
    if (r.document === 'management') return 'the sandbox write fault arms writes of the Transactions, v2 order and sandbox APIs only: a management write needs the data store down, which a request cannot cause on purpose';
    // Every other write takes the sandbox fault (api/write-faults.ts); arming it is no write that takes it.
    return 'arming the sandbox write fault is not a write that takes it: a 503 here needs the data store down, which a request cannot cause on purpose';
  }
  return undefined;
};
