// Broken senders of issue 67, round six: a delivery pending a retry at each kind of endpoint
// change (conformance/sender/pending-change.ts), and the payout callback of a settlement
// outcome other than success (conformance/sender/outcomes.ts). Each is the real app with one
// defect, through the store seam (store-seam.ts) or the Sender seam (sender-seam.ts).
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import type { EndpointRecord } from '../../../server/domain/model.ts';
import type { BuiltApp } from '../../../server/app/build-app.ts';
import { resigned, withSender } from './sender-seam.ts';
import { withStore } from './store-seam.ts';
import type { ServerMutant } from './mutant.ts';

type Change = 'disabled' | 'rotated' | 'event-types';

/** What an endpoint update changes, as the pending-change checks name it; null for anything else. */
function changeOf(before: EndpointRecord | null, after: EndpointRecord): Change | 'scheme' | null {
  if (before === null) return null;
  if (before.active && !after.active) return 'disabled';
  if (before.secretEnc !== after.secretEnc) return 'rotated';
  if (JSON.stringify(before.eventTypes) !== JSON.stringify(after.eventTypes)) return 'event-types';
  if (before.version === after.version && before.signatureScheme !== after.signatureScheme) return 'scheme';
  return null;
}

/** A change of kind `kind` leaves the endpoint's pending deliveries pending: they are retried. */
function keepsPendingOn(kind: Change): (services: Services, config: Config) => BuiltApp {
  return (services, config) =>
    withStore(services, config, () => {
      let change: ReturnType<typeof changeOf> = null;
      return {
        endpoints: (real) => ({
          update: async (e) => {
            change = changeOf(await real.endpoints.get(e.environmentId, e.id), e);
            return real.endpoints.update(e);
          },
        }),
        deliveries: (real) => ({
          disableOlderVersions: (endpointId, version, now) => (change === kind ? Promise.resolve(0) : real.deliveries.disableOlderVersions(endpointId, version, now)), // the defect
        }),
      };
    });
}

/** A new signatureScheme alone disables the endpoint's pending deliveries, as a new version would. */
function schemeDisablesPending(services: Services, config: Config): BuiltApp {
  return withStore(services, config, () => ({
    endpoints: (real) => ({
      update: async (e) => {
        const before = await real.endpoints.get(e.environmentId, e.id);
        await real.endpoints.update(e);
        if (changeOf(before, e) === 'scheme') await real.deliveries.disableOlderVersions(e.id, e.version + 1, e.updatedAt); // the defect
      },
    }),
  }));
}

/** The callback of a payout settled as cancelled says success (signed correctly). */
function cancelledCallbackSaysSuccess(services: Services, config: Config): BuiltApp {
  return withSender(services, config, (real, secretOf) => (req) => {
    const body = JSON.parse(req.body) as Record<string, unknown>;
    const secret = secretOf(req);
    if ('type' in body || body.status !== 'cancelled' || secret === null) return real(req);
    return real(resigned(req, secret, JSON.stringify({ ...body, status: 'success' }))); // the defect
  });
}

const only = (id: string): RegExp => new RegExp(`^${id.replace(/\./g, '\\.')}$`);

export const PENDING_CHANGE_MUTANTS: readonly ServerMutant[] = [
  ...(['disabled', 'rotated', 'event-types'] as const).map(
    (kind): ServerMutant => ({
      name: `keeps-pending-when-${kind}`,
      defect: `a delivery pending a retry when its endpoint is ${kind === 'event-types' ? "narrowed (eventTypes)" : kind} stays pending and is retried`,
      target: 'sender',
      build: keepsPendingOn(kind),
      mustFail: [`sender.pending.${kind}`],
      failsOnly: only(`sender.pending.${kind}`),
    }),
  ),
  { name: 'scheme-change-disables-pending', defect: 'a new signatureScheme alone disables the pending deliveries, as a new version does', target: 'sender', build: schemeDisablesPending, mustFail: ['sender.pending.scheme'], failsOnly: only('sender.pending.scheme') },
  { name: 'cancelled-callback-says-success', defect: 'the callback of a payout settled as cancelled carries status success', target: 'sender', build: cancelledCallbackSaysSuccess, mustFail: ['sender.payout.completed.every-outcome'], failsOnly: only('sender.payout.completed.every-outcome') },
];
