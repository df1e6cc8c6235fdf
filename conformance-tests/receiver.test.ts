// The receiver target against the example merchant receiver (everything passes) and against
// deliberately broken receivers (each must make the suite fail, on the checks that catch
// its mistake and on no other).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import type { ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALLBACK_PATH, WEBHOOK_PATH, createMerchantReceiver } from '../client/examples/merchant-receiver/receiver.ts';
import type { MerchantReceiver } from '../client/examples/merchant-receiver/receiver.ts';
import { openMerchantStore } from '../client/examples/merchant-receiver/store.ts';
import type { MerchantStore } from '../client/examples/merchant-receiver/store.ts';
import { webhookChannels } from '../conformance/core/asyncapi.ts';
import { runCli } from '../conformance/core/cli.ts';
import type { JsonReport } from '../conformance/core/json.ts';
import { createTargetRegistry } from '../conformance/targets.ts';
import { SUBTLE_RECEIVERS, startAcceptsEverything, startFailsDuplicates, startIgnoresEventId, startStaleTimestamps, startWithKnobs } from './mutants/receivers/index.ts';
import type { MutantOptions, RunningReceiver } from './mutants/receivers/index.ts';
import { MALFORMED_SIGNATURES } from '../conformance/receiver/checks.ts';
import { LOOSE_TIMESTAMPS } from '../conformance/receiver/strict.ts';

const SECRET = 'whsec_Y29uZm9ybWFuY2UtcmVjZWl2ZXItY3VycmVudC1zZWNyZXQ';
const PREVIOUS_SECRET = 'whsec_Y29uZm9ybWFuY2UtcmVjZWl2ZXItcHJldmlvdXMtc2VjcmV0';
const CALLBACK_SECRET = 'whsec_Y29uZm9ybWFuY2UtY2FsbGJhY2stY3VycmVudC1zZWNyZXQ';
const PREVIOUS_CALLBACK_SECRET = 'whsec_Y29uZm9ybWFuY2UtY2FsbGJhY2stcHJldmlvdXMtc2VjcmV0';
const SEED = '20261122';

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'conformance-receiver-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  report: JsonReport;
  junit: string;
}

let runs = 0;
async function runReceiverTarget(args: string[]): Promise<CliRun> {
  runs += 1;
  const json = join(dir, `report-${runs}.json`);
  const junit = join(dir, `report-${runs}.xml`);
  let stdout = '';
  let stderr = '';
  const code = await runCli(
    ['receiver', ...args, '--seed', SEED, '--report', `json=${json}`, '--report', `junit=${junit}`],
    createTargetRegistry(),
    { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } },
  );
  return {
    code,
    stdout,
    stderr,
    report: JSON.parse(readFileSync(json, 'utf8')) as JsonReport,
    junit: readFileSync(junit, 'utf8'),
  };
}

const failedIds = (run: CliRun): string[] => run.report.checks.filter((c) => c.status === 'failed').map((c) => c.id).sort();

const channels = webhookChannels();
const orderChannel = 'orderWebhooks';
const callbackChannel = 'payoutCompleted';

/** The verification checks every channel has. */
function signatureCheckIds(channel: string): string[] {
  return [
    'tampered-body',
    'wrong-secret',
    'timestamp-301s-old',
    'timestamp-301s-ahead',
    ...MALFORMED_SIGNATURES.map((f) => `malformed-signature.${f.slug}`),
    'missing-signature',
  ].map((slug) => `receiver.verification.${channel}.${slug}`);
}

/** The checks of exact.ts that send a request the receiver must refuse (the others must be accepted). */
function exactRejectIds(channel: string): string[] {
  const withBodyId = channel === orderChannel;
  return [
    'raw-body.reindented-after-signing',
    'hmac.body-only',
    'hmac.no-period',
    'digest.last-char-changed',
    'digest.second-half-changed',
    'digest.truncated',
    'digest.extra-hex-char',
    'digest.extra-hex-pair',
    'digest.trailing-garbage',
    'digest.several-all-wrong',
    ...(withBodyId ? ['created-at.fresh-event-stale-t', 'event-id.uppercase', 'event-id.last-char-changed', 'event-id.extra-char', 'event-id.truncated', 'event-id.body-whitespace'] : []),
  ].map((slug) => `receiver.verification.${channel}.${slug}`);
}

/** The checks of strict.ts that send a request the receiver must refuse (without a previous secret). */
function strictRejectIds(channel: string): string[] {
  return ['header.t-twice', ...LOOSE_TIMESTAMPS.map((f) => `header.t-${f.slug}`), 'signature-before-duplicates'].map((slug) => `receiver.verification.${channel}.${slug}`);
}

describe('receiver target against the example merchant receiver', () => {
  let server: ServerType;
  let store: MerchantStore;
  let receiver: MerchantReceiver;
  let base: string;

  beforeAll(async () => {
    store = openMerchantStore(join(dir, 'merchant.db'));
    receiver = createMerchantReceiver({
      secrets: [SECRET, PREVIOUS_SECRET],
      callbackSecrets: [CALLBACK_SECRET, PREVIOUS_CALLBACK_SECRET],
      store,
      // The merchant's own dependency: the current order, here always still paid.
      fetchOrder: async (orderId) => ({ orderId, paymentStatus: 'paid', status: 'open' }),
    });
    const port = await new Promise<number>((resolve) => {
      server = serve({ fetch: receiver.app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => resolve(info.port));
    });
    base = `http://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    await receiver.idle();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    store.close();
  });

  it('passes every check, rotation included', async () => {
    const run = await runReceiverTarget([
      '--url', `${base}${WEBHOOK_PATH}`,
      '--secret', SECRET,
      '--previous-secret', PREVIOUS_SECRET,
      '--callback-url', `${base}${CALLBACK_PATH}`,
      '--callback-secret', CALLBACK_SECRET,
      '--previous-callback-secret', PREVIOUS_CALLBACK_SECRET,
      '--quiet',
    ]);
    expect(failedIds(run), run.stdout).toEqual([]);
    expect(run.code).toBe(0);
    expect(run.report.passed).toBe(true);
    expect(run.report.seed).toBe(Number(SEED));
    expect(run.report.checks.every((c) => c.status === 'passed')).toBe(true);

    // Every message of every channel was replayed, with its examples and variations.
    for (const channel of channels) {
      for (const message of channel.messages) {
        expect(run.report.checks.map((c) => c.id)).toContain(`receiver.duplicate.${message.name}`);
        expect(run.report.checks.map((c) => c.id)).toContain(`receiver.accepts.${message.name}.generated`);
        for (const example of message.examples) {
          expect(run.report.checks.map((c) => c.id)).toContain(`receiver.accepts.${message.name}.${example.name}`);
        }
      }
    }
    const rotation = run.report.checks.find((c) => c.id === `receiver.rotation.${orderChannel}`);
    expect(rotation?.notes.join(' ')).toMatch(/previous secret was accepted/);

    // Every verification rule 1-8 was covered; only the merchant-side delivery rules have no check.
    const coverage = new Map(run.report.coverage.map((c) => [c.id, c]));
    for (let n = 1; n <= 8; n++) expect(coverage.get(`interface#signatures-${n}`)?.status, `rule ${n}`).toBe('covered');
    expect(run.report.coverage.filter((c) => c.status !== 'covered').map((c) => c.id)).toEqual(['interface#delivery-4', 'interface#delivery-5']);
    expect(run.stdout).toMatch(/rules covered by this run:\n  payments-service-interface\.md: 12 of 14 covered, 0 not reached, 2 without a check/);
    expect(run.junit).toContain('name="coverage covered" value="payments-service-interface.md: Webhook signatures, verification rule 8');
    expect(run.stdout).toContain(`seed ${SEED}`);
    expect(run.junit).toContain('<testsuites');

    // The events really landed in the merchant's database.
    expect(store.eventCount()).toBeGreaterThan(10);
    await receiver.idle();
  });

  it('skips the rotation checks, with a reason, when no previous secret is given', async () => {
    const run = await runReceiverTarget([
      '--url', `${base}${WEBHOOK_PATH}`,
      '--secret', SECRET,
      '--callback-url', `${base}${CALLBACK_PATH}`,
      '--callback-secret', CALLBACK_SECRET,
      '--quiet',
    ]);
    expect(run.code).toBe(0);
    const skipped = run.report.checks.filter((c) => c.status === 'skipped');
    expect(skipped.map((c) => c.id).sort()).toEqual(
      [`receiver.rotation.${orderChannel}`, `receiver.rotation.${callbackChannel}`, ...[orderChannel, callbackChannel].map((c) => `receiver.verification.${c}.rotation.previous-secret-window`)].sort(),
    );
    expect(skipped[0]?.reason).toMatch(/no previous secret/);
    const rule8 = run.report.coverage.find((c) => c.id === 'interface#signatures-8');
    expect(rule8?.status).toBe('not_reached');
    expect(rule8?.reasons.join(' ')).toMatch(/no previous secret/);
    expect(run.stdout).toMatch(/NOT REACHED Webhook signatures, verification rule 8: receiver\.rotation/);
  });
});

describe('receiver target against broken receivers', () => {
  const mutants: Array<[string, (o: MutantOptions) => Promise<RunningReceiver>, string[]]> = [
    [
      'a receiver that skips verification',
      startAcceptsEverything,
      [
        ...signatureCheckIds(orderChannel),
        `receiver.verification.${orderChannel}.event-id-mismatch`,
        `receiver.verification.${orderChannel}.missing-event-id`,
        ...exactRejectIds(orderChannel),
        ...strictRejectIds(orderChannel),
        ...signatureCheckIds(callbackChannel),
        ...exactRejectIds(callbackChannel),
        ...strictRejectIds(callbackChannel),
      ],
    ],
    [
      'a receiver that accepts stale timestamps',
      startStaleTimestamps,
      [
        `receiver.verification.${orderChannel}.timestamp-301s-old`,
        `receiver.verification.${orderChannel}.timestamp-301s-ahead`,
        `receiver.verification.${orderChannel}.created-at.fresh-event-stale-t`,
        `receiver.verification.${callbackChannel}.timestamp-301s-old`,
        `receiver.verification.${callbackChannel}.timestamp-301s-ahead`,
      ],
    ],
    [
      'a receiver that does not check the event id header',
      startIgnoresEventId,
      [
        `receiver.verification.${orderChannel}.event-id-mismatch`,
        `receiver.verification.${orderChannel}.missing-event-id`,
        ...['uppercase', 'last-char-changed', 'extra-char', 'truncated'].map((s) => `receiver.verification.${orderChannel}.event-id.${s}`),
      ],
    ],
    [
      'a receiver that answers 500 on duplicates',
      startFailsDuplicates,
      [
        'receiver.duplicate.order.created',
        'receiver.duplicate.order.paid',
        'receiver.duplicate.order.payment_review_required',
        'receiver.duplicate.webhook.test',
        'receiver.duplicate.payout.completed',
        'receiver.duplicate.webhook_endpoint.failing',
        'receiver.duplicate.webhook_endpoint.disabled',
        'receiver.duplicate.webhook_endpoint.recovered',
        // The documented retry example repeats orderPaidExact's event id: a duplicate too.
        'receiver.accepts.order.paid.orderPaidExactRetry',
      ],
    ],
  ];

  for (const [name, start, expected] of mutants) {
    it(`fails ${name}`, async () => {
      const mutant = await start({ secrets: [SECRET] });
      try {
        const run = await runReceiverTarget(['--url', mutant.url, '--secret', SECRET, '--quiet']);
        expect(run.code).toBe(1);
        expect(run.report.passed).toBe(false);
        expect(failedIds(run)).toEqual([...expected].sort());
        // Each failure carries its evidence: the request, the answer and the rule.
        for (const check of run.report.checks.filter((c) => c.status === 'failed')) {
          expect(check.failure?.exchanges.length).toBeGreaterThan(0);
          expect(check.failure?.rule.source).toMatch(/payments-service-interface\.md|webhooks\.asyncapi\.yaml/);
          expect(check.failure?.exchanges[0]?.request.headers['User-Agent']).toBe('PaymentsService-Webhooks/2.0');
          expect(run.stdout).toContain(check.id);
        }
      } finally {
        await mutant.close();
      }
    });
  }

  it('quotes the broken verification rule with its number', async () => {
    const mutant = await startStaleTimestamps({ secrets: [SECRET] });
    try {
      const run = await runReceiverTarget(['--url', mutant.url, '--secret', SECRET, '--quiet']);
      const stale = run.report.checks.find((c) => c.id === `receiver.verification.${orderChannel}.timestamp-301s-old`);
      expect(stale?.failure?.rule.source).toBe('payments-service-interface.md § Webhook signatures, verification rule 4');
      expect(stale?.failure?.rule.quote).toMatch(/exceeds 300 seconds/);
      expect(stale?.failure?.exchanges[0]?.response.status).toBe(200);
      expect(run.stdout).toMatch(/verification rule 4/);
      expect(run.junit).toMatch(/<failure message="[^"]*301 seconds in the past/);
    } finally {
      await mutant.close();
    }
  });
});

describe('receiver target against subtly broken receivers (conformance/mutants/receivers/subtle.ts)', () => {
  it('passes the step-by-step receiver with every knob right (the control)', async () => {
    const receiver = await startWithKnobs({ secrets: [SECRET, PREVIOUS_SECRET] }, {});
    try {
      const run = await runReceiverTarget(['--url', receiver.url, '--secret', SECRET, '--previous-secret', PREVIOUS_SECRET, '--quiet']);
      expect(failedIds(run), run.stdout).toEqual([]);
      expect(run.code).toBe(0);
    } finally {
      await receiver.close();
    }
  });

  for (const mutant of SUBTLE_RECEIVERS) {
    it(`fails ${mutant.name} (${mutant.defect}) by ${mutant.catchers.join(', ')}`, async () => {
      const secrets = mutant.withPreviousSecret ? [SECRET, PREVIOUS_SECRET] : [SECRET];
      const receiver = await startWithKnobs({ secrets }, mutant.knobs);
      try {
        const run = await runReceiverTarget(['--url', receiver.url, '--secret', SECRET, ...(mutant.withPreviousSecret ? ['--previous-secret', PREVIOUS_SECRET] : []), '--quiet']);
        expect(run.code).toBe(1);
        if (mutant.exact === false) expect(failedIds(run)).toEqual(expect.arrayContaining(mutant.catchers));
        else expect(failedIds(run), run.stdout).toEqual([...mutant.catchers].sort());
        for (const id of mutant.catchers) {
          const check = run.report.checks.find((c) => c.id === id);
          expect(check?.failure?.rule.source, id).toMatch(/payments-service-interface\.md § Webhook signatures, verification rule [1-8]/);
        }
      } finally {
        await receiver.close();
      }
    });
  }
});
