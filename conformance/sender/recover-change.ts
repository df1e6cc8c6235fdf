// Recovery after a change (management#recover: "to the endpoint's current URL, version and
// secret"): an order is delivered, then the endpoint changes: its URL is edited, its secret
// rotated and its signatureScheme switched. The recovery of that delivery must reach the new
// URL only, signed with the new secret, carrying the new scheme's header sets; nothing may go
// to the old URL. The watch for strays ends at a later marker, not after a fixed time: a test
// webhook sent once the recovered delivery has arrived. A sender that sends in order has sent
// any stray of the recovery before it, however slow it is. The scheme is set back afterwards,
// so the rest of the run keeps `--scheme`.
import type { Exchange } from '../core/check.ts';
import { fail, pass } from '../core/outcome.ts';
import { answer } from './receiver.ts';
import type { Received } from './receiver.ts';
import { RECOVER_RULE } from './rules.ts';
import { waitDelivered } from './recover.ts';
import type { SuccessOptions } from './success.ts';
import { asExchange, eventIdOf, missingSets, parseBody, signatureProblems, switched } from './verify.ts';


export function recoverAfterChangeChecks(o: SuccessOptions): void {
  const { add, session, receiver } = o;
  const [oldPath, newPath] = [session.path('recover-old'), session.path('recover-new')];
  receiver.route(oldPath, answer(200));
  receiver.route(newPath, answer(200));
  const within = `within ${o.waitMs / 1000} s`;

  add('recover.after-change', 'delivery rules', "after a URL edit, a secret rotation and a scheme change, a recovered delivery goes to the current URL only, signed with the current secret in the current scheme", [RECOVER_RULE], async ({ signal }) => {
    const { scheme } = await o.endpoint();
    const evidence: Exchange[] = [];
    await session.pointTo('recover-old', evidence, signal);
    const { orderId } = await session.createOrder(evidence, signal);
    const ofOrder = (path: string): Received[] => receiver.at(path).filter((r) => (parseBody(r) as { data?: { orderId?: unknown } } | undefined)?.data?.orderId === orderId);
    if (!(await receiver.until(() => ofOrder(oldPath).length > 0, o.waitMs, signal))) return fail(`the order's delivery did not arrive ${within} of creating it`, RECOVER_RULE, evidence);
    const eventId = eventIdOf(ofOrder(oldPath)[0]!) ?? '';
    const ref = await waitDelivered(session, eventId, o.waitMs, evidence, signal);
    await session.pointTo('recover-new', evidence, signal);
    const { previous, secret } = await session.rotate(evidence, signal);
    const current = { secret, scheme: switched(scheme) };
    await session.setScheme(current.scheme, evidence, signal);
    const seenOld = receiver.at(oldPath).length;
    let markerId = '';
    const marker = (): Received[] => [...receiver.at(newPath), ...receiver.at(oldPath).slice(seenOld)].filter((r) => eventIdOf(r) === markerId);
    try {
      await session.recover({ since: ref.createdAt, include: 'all' }, evidence, signal);
      // Either URL ends the wait: a re-delivery to the old one fails at once.
      await receiver.until(() => ofOrder(newPath).length > 0 || receiver.at(oldPath).length > seenOld, o.waitMs, signal);
      markerId = await session.sendTest(evidence, signal);
      await receiver.until(() => marker().length > 0, o.waitMs, signal);
    } finally {
      await session.setScheme(scheme, evidence, signal);
    }
    const again = ofOrder(newPath);
    const stray = receiver.at(oldPath).slice(seenOld);
    const shown = [
      ...evidence,
      ...again.map((r, i) => asExchange(r, `new URL ${i + 1}`)),
      ...stray.map((r, i) => asExchange(r, `old URL, after the change ${i + 1}${eventIdOf(r) === markerId ? ' (the marker)' : ''}`)),
    ];
    if (stray.length > 0) return fail(`${stray.length} request(s) went to the URL of the original delivery after the URL edit: recovery sends to the endpoint's current URL`, RECOVER_RULE, shown);
    if (again.length === 0) return fail(`the recovered delivery did not arrive at the endpoint's current URL ${within} of the recover request`, RECOVER_RULE, shown);
    if (marker().length === 0) return fail(`the test webhook sent after the recovered delivery arrived (the marker that ends the watch for strays to the old URL) did not arrive ${within}`, RECOVER_RULE, shown);
    for (const [i, r] of again.entries()) {
      if (eventIdOf(r) !== eventId) return fail(`re-delivery ${i + 1} carries event id ${eventIdOf(r) ?? '(none)'}, not the original ${eventId}`, RECOVER_RULE, shown);
      const missing = missingSets(r, current.scheme);
      if (missing.length > 0) return fail(`re-delivery ${i + 1} lacks ${missing.join(' and ')}: the endpoint's current scheme is ${current.scheme} (it was ${scheme} at the original delivery)`, RECOVER_RULE, shown);
      const problems = signatureProblems(r, current.secret);
      if (problems.length > 0) {
        const old = signatureProblems(r, previous).length === 0 ? ' (it verifies with the secret before the rotation)' : '';
        return fail(`re-delivery ${i + 1} is not signed with the endpoint's current secret${old}: ${problems.join('; ')}`, RECOVER_RULE, shown);
      }
    }
    return pass([`event ${eventId} recovered to the new URL in the ${current.scheme} scheme, signed with the rotated secret`]);
  });
}
