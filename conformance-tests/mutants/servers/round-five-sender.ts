// Round five of the broken webhook senders (issue 51): the Standard Webhooks scheme judged as
// strictly as the seed's. Each is the real app with one defect through the Sender seam
// (sender-seam.ts), run with the `--scheme` its defect needs.
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import type { BuiltApp } from '../../../server/app/build-app.ts';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signatureHeader, standardSignature } from '../../../signing/signature.ts';
import { eventIdOf, headerName, withSender } from './sender-seam.ts';
import type { ServerMutant } from './mutant.ts';
import type { SendRequest } from '../../../server/delivery/sender.ts';

const STANDARD = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;
type Headers = Record<string, string>;

const withoutStandard = (headers: Headers): Headers => Object.fromEntries(Object.entries(headers).filter(([k]) => !(STANDARD as readonly string[]).includes(k.toLowerCase())));
const get = (headers: Headers, name: string): string | undefined => Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];

/** An endpoint in `standard-webhooks` gets the seed's Service-* set instead of the webhook-* set. */
function standardSendsServiceOnly(services: Services, config: Config): BuiltApp {
  return withSender(services, config, (real, secretOf) => async (req) => {
    const id = get(req.headers, 'webhook-id');
    const secret = secretOf(req);
    if (id === undefined || secret === null || headerName(req, SIGNATURE_HEADER) !== undefined) return real(req);
    const headers = { ...withoutStandard(req.headers), [EVENT_ID_HEADER]: id, [SIGNATURE_HEADER]: signatureHeader(secret, Math.floor(Date.now() / 1000), req.body) }; // the defect
    return real({ ...req, headers });
  });
}

/** An endpoint in `both` gets the Service-* set alone. */
function bothSendsServiceOnly(services: Services, config: Config): BuiltApp {
  return withSender(services, config, (real) => (req) => real({ ...req, headers: withoutStandard(req.headers) })); // the defect
}

/** In `both`, every retry carries the webhook-* values of the event's first attempt (the Service-* set is signed anew). */
function bothReusesStandardHeaders(services: Services, config: Config): BuiltApp {
  const first = new Map<string, Headers>();
  return withSender(services, config, (real) => (req) => {
    const id = get(req.headers, 'webhook-id');
    if (id === undefined || headerName(req, SIGNATURE_HEADER) === undefined) return real(req);
    const kept = first.get(id);
    if (kept === undefined) {
      first.set(id, Object.fromEntries(STANDARD.map((h) => [h, get(req.headers, h) ?? ''])));
      return real(req);
    }
    return real({ ...req, headers: { ...withoutStandard(req.headers), ...kept } }); // the defect
  });
}

/** In `standard-webhooks`, after a rotation webhook-signature carries a v1 made with the previous secret beside the new one. */
function standardSignsWithPreviousToo(services: Services, config: Config): BuiltApp {
  let last: string | undefined;
  let previous: string | undefined;
  return withSender(services, config, (real, secretOf) => (req) => {
    const [id, t] = [get(req.headers, 'webhook-id'), get(req.headers, 'webhook-timestamp')];
    const secret = secretOf(req);
    const name = headerName(req, 'webhook-signature');
    if (id === undefined || t === undefined || secret === null || name === undefined) return real(req);
    if (last !== undefined && last !== secret) previous = last;
    last = secret;
    if (previous === undefined) return real(req);
    return real({ ...req, headers: { ...req.headers, [name]: `${req.headers[name]} ${standardSignature(previous, id, Number(t), req.body)}` } }); // the defect
  });
}

/** An event delivered once and sent again (a recovery) goes to the URL of its first successful delivery. */
function recoverToOriginalUrl(services: Services, config: Config): BuiltApp {
  const deliveredAt = new Map<string, string>();
  return withSender(services, config, (real) => async (req) => {
    const id = eventIdOf(req) ?? '';
    const first = deliveredAt.get(id);
    const outcome = await real(first === undefined ? req : { ...req, url: first }); // the defect
    if (outcome.success && first === undefined) deliveredAt.set(id, req.url);
    return outcome;
  });
}

/**
 * A recovered delivery goes to the current URL, and a copy to the URL of its first successful
 * delivery too, held back until just before the sender's next request: a slow sender's stray,
 * which a watch for strays that ends after a fixed few seconds misses.
 */
function recoverStrayHeldBack(services: Services, config: Config): BuiltApp {
  const firstUrl = new Map<string, string>();
  const held: SendRequest[] = [];
  return withSender(services, config, (real) => async (req) => {
    for (const stray of held.splice(0)) await real(stray);
    const id = eventIdOf(req) ?? '';
    const first = firstUrl.get(id);
    const outcome = await real(req);
    if (first === undefined && outcome.success) firstUrl.set(id, req.url);
    if (first !== undefined && first !== req.url) held.push({ ...req, url: first }); // the defect
    return outcome;
  });
}

const only = (ids: string[]): RegExp => new RegExp(`^(${ids.map((i) => i.replace(/\./g, '\\.')).join('|')})$`);
const REQUIRED = 'sender.scheme.required-headers';
/**
 * Every scenario with several endpoints waits out --wait-ms against this mutant (their events go
 * elsewhere): 10 s, ample on the scaled schedule, instead of 30 s each.
 */
export const SHORT_WAIT = ['--wait-ms', '10000'];
const FRESH = ['sender.retry.fresh-timestamp', 'sender.retry.manual-fresh-timestamp'];
// These mutants remember per event, not per endpoint: when an event goes to several endpoints
// (issue 68), the later endpoints get the first one's headers or URL, which fan-out.* catch too.
const OWN_SECRET = 'sender.fan-out.own-secret';
const VERSION_PER_ENDPOINT = 'sender.fan-out.version-per-endpoint';
// The scenarios of issue 67 with several endpoints too (pending-change.ts, recover-paced.ts).
const SEVERAL_ENDPOINTS = ['sender.pending.disabled', 'sender.pending.rotated', 'sender.pending.event-types', 'sender.pending.scheme', 'sender.recover.paced', 'sender.recover.per-endpoint'];

export const ROUND_FIVE_SENDER_MUTANTS: readonly ServerMutant[] = [
  { name: 'standard-sends-service-only', defect: 'an endpoint in standard-webhooks gets Service-Signature and no webhook-* headers', target: 'sender', args: ['--scheme', 'standard-webhooks'], build: standardSendsServiceOnly, mustFail: [REQUIRED], failsOnly: only([REQUIRED]) },
  { name: 'both-sends-service-only', defect: 'an endpoint in both gets the Service-* set alone', target: 'sender', args: ['--scheme', 'both'], build: bothSendsServiceOnly, mustFail: [REQUIRED], failsOnly: only([REQUIRED]) },
  { name: 'both-reuses-standard-headers', defect: "in both, every retry carries its first attempt's webhook-id, webhook-timestamp and webhook-signature", target: 'sender', args: ['--scheme', 'both'], build: bothReusesStandardHeaders, mustFail: FRESH, failsOnly: only([...FRESH, OWN_SECRET]) },
  { name: 'recover-to-original-url', defect: 'a recovered delivery goes to the URL of its original delivery, not the current one', target: 'sender', args: SHORT_WAIT, build: recoverToOriginalUrl, mustFail: ['sender.recover.after-change'], failsOnly: only(['sender.recover.after-change', VERSION_PER_ENDPOINT, ...SEVERAL_ENDPOINTS]) },
  { name: 'recover-stray-held-back', defect: 'a recovered delivery also goes to the URL of its original delivery, late: just before the next request', target: 'sender', build: recoverStrayHeldBack, mustFail: ['sender.recover.after-change'], failsOnly: only(['sender.recover.after-change', 'sender.recover.per-endpoint']) },
  { name: 'standard-signs-with-previous-too', defect: 'in standard-webhooks, after a rotation webhook-signature carries a v1 made with the previous secret beside the new one', target: 'sender', args: ['--scheme', 'standard-webhooks'], build: standardSignsWithPreviousToo, mustFail: ['sender.rotation.new-secret'], failsOnly: only(['sender.rotation.new-secret']) },
];
