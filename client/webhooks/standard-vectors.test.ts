// The published Standard Webhooks vectors (generated/standard-webhooks-vectors.json) checked by
// code nobody here wrote: the official `standardwebhooks` package accepts every valid case with the
// secret named by `expected.secretIndex` and refuses every invalid one with every secret. The one
// rule beyond the standard, a webhook-id equal to the body's id (`event_id_mismatch`), is this
// service's own and the library rightly does not check it. payments-webhooks passes them all too.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SignatureVector } from './vectors.ts';
import { failedVectors, vectorHeaders } from './vectors.ts';
import { verifyWebhook } from './verify.ts';
import { verifyWebhookAsync } from './verify-async.ts';

const FILE = path.resolve(import.meta.dirname, '..', '..', 'generated', 'standard-webhooks-vectors.json');
const compact = JSON.parse(readFileSync(FILE, 'utf8')) as { secret: string; toleranceSeconds: number; body: string; vectors: Array<Omit<SignatureVector, 'bodyBase64' | 'toleranceSeconds'>> };
/** The compact file's cases in the form of signature-vectors.json (each with its body and tolerance). */
const file = {
  ...compact,
  vectors: compact.vectors.map((v): SignatureVector => {
    const body = v.body ?? compact.body;
    return { ...v, body, bodyBase64: Buffer.from(body, 'utf8').toString('base64'), toleranceSeconds: compact.toleranceSeconds };
  }),
};

afterEach(() => {
  vi.useRealTimers();
});

/** The index of the secret the official library verifies the vector with, or null. */
function officialMatch(v: SignatureVector): number | null {
  // The library reads Date.now() for its 5-minute window: the vector's clock.
  vi.useFakeTimers({ toFake: ['Date'], now: v.now * 1000 });
  const body = Buffer.from(v.bodyBase64, 'base64');
  const headers = vectorHeaders(v, 'object') as Record<string, string>;
  for (const [i, secret] of v.secrets.entries()) {
    try {
      new Webhook(secret).verify(body, headers);
      return i;
    } catch {
      // the next secret
    }
  }
  return null;
}

describe('the Standard Webhooks vectors', () => {
  it('cover every rule: valid cases, each rule broken alone, rotation lists', () => {
    expect(file.secret).toMatch(/^whsec_[A-Za-z0-9]{44}$/);
    expect(file.vectors.filter((v) => v.valid).length).toBeGreaterThanOrEqual(8);
    expect(new Set(file.vectors.flatMap((v) => (v.error ? [v.error] : [])))).toEqual(
      new Set(['timestamp_out_of_tolerance', 'signature_mismatch', 'missing_signature', 'missing_event_id', 'malformed_signature', 'invalid_json', 'event_id_mismatch']),
    );
    expect(file.vectors.some((v) => v.headers.some(([name, value]) => name.toLowerCase() === 'webhook-signature' && value.split(' ').length > 1))).toBe(true);
  });

  it('the official standardwebhooks package agrees with every case but the body-id rule of this service', () => {
    const disagreements = file.vectors.flatMap((v) => {
      const match = officialMatch(v);
      const expected = v.valid ? (v.expected?.secretIndex ?? 0) : v.error === 'event_id_mismatch' ? 'any' : null;
      if (expected === 'any' || match === expected) return [];
      return [`${v.name}: the library says ${match === null ? 'invalid' : `secret ${match}`}, the vector ${v.valid ? 'valid' : v.error}`];
    });
    expect(disagreements).toEqual([]);
  });

  it('verifyWebhook and verifyWebhookAsync pass them all, with the error codes named', async () => {
    const asFile = { format: '', description: '', exampleSecret: file.secret, toleranceSeconds: file.toleranceSeconds, minSecretBytes: 32, vectors: file.vectors };
    expect(await failedVectors(asFile, verifyWebhook)).toEqual([]);
    expect(await failedVectors(asFile, verifyWebhookAsync, 'Headers')).toEqual([]);
  });
});
