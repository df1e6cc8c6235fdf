// The command line of payments-webhooks: --forward-to per event type, the secret from a
// setting, --print-secret, resend and trigger's overrides.
import { expect, it } from 'vitest';
import { parseCommandLine, routeOf, UsageError, type ListenArgs } from './args.ts';

const env = { PAYMENTS_API_KEY: 'pk_test_x', PAYMENTS_API_SECRET: 's' };
const listenOf = (argv: string[], extra: NodeJS.ProcessEnv = {}): ListenArgs => parseCommandLine(['listen', ...argv], { ...env, ...extra }) as ListenArgs;

it('routes an event type to its own URL beside the default one, and streams every type', () => {
  const a = listenOf(['--forward-to', 'http://localhost:3000/webhooks', '--forward-to', 'order.paid=http://localhost:4000/paid?x=1']);
  expect(a.routes).toEqual({ fallback: 'http://localhost:3000/webhooks', byType: { 'order.paid': 'http://localhost:4000/paid?x=1' } });
  expect(a.events).toEqual([]);
  expect(routeOf(a.routes, 'order.paid')).toBe('http://localhost:4000/paid?x=1');
  expect(routeOf(a.routes, 'order.created')).toBe('http://localhost:3000/webhooks');
});

it('without a default URL streams only the routed types; --events must all be routed', () => {
  expect(listenOf(['--forward-to', 'webhook.test=http://localhost:1/t', '--forward-to', 'order.paid=http://localhost:1/p']).events).toEqual(['order.paid', 'webhook.test']);
  expect(() => listenOf(['--forward-to', 'order.paid=http://localhost:1/p', '--events', 'order.created'])).toThrow('no --forward-to for order.created');
  expect(() => listenOf(['--forward-to', 'order.nope=http://localhost:1/p'])).toThrow(UsageError);
  expect(() => listenOf(['--forward-to', 'http://a.test/', '--forward-to', 'http://b.test/'])).toThrow(/given twice/);
  expect(() => listenOf([])).toThrow('--forward-to is required');
});

it('takes the secret from PAYMENTS_WEBHOOK_SECRET unless --secret is given; --print-secret needs no URL', () => {
  expect(listenOf(['--forward-to', 'http://a.test/'], { PAYMENTS_WEBHOOK_SECRET: 'whsec_env' }).secret).toBe('whsec_env');
  expect(listenOf(['--forward-to', 'http://a.test/', '--secret', 'whsec_opt'], { PAYMENTS_WEBHOOK_SECRET: 'whsec_env' }).secret).toBe('whsec_opt');
  expect(listenOf(['--print-secret'])).toMatchObject({ printSecret: true, secret: null });
});

it('resend takes an id and the state file; trigger takes --set and --data', () => {
  expect(parseCommandLine(['resend', '5d41402a', '--state', '/tmp/s.json'], {})).toEqual({ command: 'resend', id: '5d41402a', statePath: '/tmp/s.json', routes: null, secret: null });
  expect(parseCommandLine(['trigger', 'order.paid', '--set', 'data.amountMinor=1250', '--data', '{}'], env)).toMatchObject({ sets: [{ path: 'data.amountMinor', value: '1250' }], data: '{}' });
  expect(() => parseCommandLine(['trigger', 'order.paid', '--set', 'amountMinor'], env)).toThrow('--set takes <path>=<value>: amountMinor');
});
