// Deliberately broken variants of the bundled server, each the real app with one defect
// introduced through a narrow seam (a Hono middleware around the app, or an injected Sender or
// retry schedule of the delivery engine), and the checks of the suite that must catch it.
// conformance/mutants/mutants.test.ts runs the relevant target against each one.
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import type { BuiltApp } from '../../../server/api/index.ts';
import * as followsRedirects from './follows-redirects.ts';
import * as missingHashAccepted from './missing-hash-accepted.ts';
import * as retriesPastTen from './retries-past-ten.ts';
import * as signsWithoutTimestamp from './signs-without-timestamp.ts';
import * as status200For201 from './status-200-for-201.ts';
import * as tenantLeak from './tenant-leak.ts';

export interface ServerMutant {
  name: string;
  defect: string;
  target: 'api' | 'sender';
  build: (services: Services, config: Config) => BuiltApp;
  /** Check ids that must fail against this mutant. */
  mustFail: string[];
}

export const SERVER_MUTANTS: readonly ServerMutant[] = [
  {
    name: 'status-200-for-201',
    defect: 'answers 200 where 201 is documented',
    target: 'api',
    build: status200For201.build,
    mustFail: ['api.createPayout.succeeds', 'api.createStakingPayout.succeeds', 'api.createOrder.succeeds', 'api.createWebhookEndpoint.succeeds', 'api.createSandboxPayment.succeeds'],
  },
  {
    name: 'tenant-leak',
    defect: "a GET cache keyed by URL alone serves tenant A's transaction and order to tenant B",
    target: 'api',
    build: tenantLeak.build,
    mustFail: ['api.rules.isolation.transaction', 'api.rules.isolation.order'],
  },
  {
    name: 'missing-hash-accepted',
    defect: 'accepts a request with x-api-key and no x-api-hash',
    target: 'api',
    build: missingHashAccepted.build,
    mustFail: ['api.createPayout.auth.missing-hash', 'api.listUserTransactions.auth.missing-hash', 'api.getOrder.auth.missing-hash', 'api.createSandboxPayment.auth.missing-hash'],
  },
  {
    name: 'signs-without-timestamp',
    defect: 'signs webhooks with HMAC over the body alone, without `<t>.`',
    target: 'sender',
    build: signsWithoutTimestamp.build,
    mustFail: ['sender.order.created.signature', 'sender.order.paid.signature', 'sender.webhook.test.signature', 'sender.retry.fresh-timestamp'],
  },
  {
    name: 'follows-redirects',
    defect: 'follows redirects',
    target: 'sender',
    build: followsRedirects.build,
    mustFail: ['sender.redirect.not-followed', 'sender.redirect.retried'],
  },
  {
    name: 'retries-past-ten',
    defect: 'retries past ten attempts',
    target: 'sender',
    build: retriesPastTen.build,
    mustFail: ['sender.attempts.at-most-ten'],
  },
];
