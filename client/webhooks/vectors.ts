// Runs the signature test vectors (generated/signature-vectors.json, shipped in the package as
// signature-vectors.json) against a verifier: each vector becomes one call, and the answer is
// compared with the vector's. Used by the Node tests and, unchanged, under Bun; it imports
// nothing from node:, so it also runs where only Web Crypto exists.
import type { WebhookVerificationErrorCode } from '../../signing/errors.ts';
import type { VerifiedWebhook, VerifyWebhookInput } from './rules.ts';

export interface SignatureVector {
  name: string;
  /** What the case exercises and why the answer is what it is. */
  reason: string;
  secrets: string[];
  /** Request headers as [name, value] pairs, in order; a name may repeat. */
  headers: Array<[string, string]>;
  /** The raw body as UTF-8 text, when it is valid UTF-8. */
  body?: string;
  /** The raw body bytes, base64: always present, and the only form for bytes that are not UTF-8. */
  bodyBase64: string;
  /** The receiver's clock, Unix seconds. */
  now: number;
  toleranceSeconds: number;
  valid: boolean;
  /** For a valid case: what the verifier returns. */
  expected?: { eventId: string; timestamp: number; secretIndex: number };
  /** For an invalid case: the WebhookVerificationError code. */
  error?: WebhookVerificationErrorCode;
}

export interface SignatureVectorFile {
  format: string;
  description: string;
  exampleSecret: string;
  toleranceSeconds: number;
  minSecretBytes: number;
  vectors: SignatureVector[];
}

export type VectorVerifier = (input: VerifyWebhookInput) => VerifiedWebhook<unknown> | Promise<VerifiedWebhook<unknown>>;

/** Headers as a receiver framework hands them over: a plain object (repeats as arrays) or fetch's Headers. */
export function vectorHeaders(vector: SignatureVector, as: 'object' | 'Headers'): VerifyWebhookInput['headers'] {
  if (as === 'Headers') {
    const headers = new Headers();
    for (const [name, value] of vector.headers) headers.append(name, value);
    return headers;
  }
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of vector.headers) {
    const seen = headers[name];
    headers[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  return headers;
}

function decodeBase64(text: string): Uint8Array {
  const binary = atob(text);
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** What went wrong with one vector, or null when the verifier answered as the vector says. */
export async function checkVector(vector: SignatureVector, verify: VectorVerifier, headersAs: 'object' | 'Headers' = 'object'): Promise<string | null> {
  const input: VerifyWebhookInput = {
    rawBody: decodeBase64(vector.bodyBase64),
    headers: vectorHeaders(vector, headersAs),
    secrets: vector.secrets,
    toleranceSeconds: vector.toleranceSeconds,
    now: () => vector.now * 1000,
  };
  let outcome: { ok: VerifiedWebhook<unknown> } | { error: unknown };
  try {
    outcome = { ok: await verify(input) };
  } catch (error) {
    outcome = { error };
  }
  if (vector.valid) {
    if ('error' in outcome) return `${vector.name}: refused (${describe(outcome.error)}), expected valid`;
    const { eventId, timestamp, secretIndex } = outcome.ok;
    const got = JSON.stringify({ eventId, timestamp, secretIndex });
    return got === JSON.stringify(vector.expected) ? null : `${vector.name}: returned ${got}, expected ${JSON.stringify(vector.expected)}`;
  }
  if ('ok' in outcome) return `${vector.name}: accepted, expected ${vector.error}`;
  const code = (outcome.error as { code?: unknown }).code;
  return code === vector.error ? null : `${vector.name}: refused with ${describe(outcome.error)}, expected ${vector.error}`;
}

function describe(error: unknown): string {
  const e = error as { name?: unknown; code?: unknown; message?: unknown };
  return `${String(e.name)} ${String(e.code ?? '')} ${String(e.message)}`.trim();
}

/** Every vector's failure; empty when the verifier passes them all. */
export async function failedVectors(file: SignatureVectorFile, verify: VectorVerifier, headersAs: 'object' | 'Headers' = 'object'): Promise<string[]> {
  const failures: string[] = [];
  for (const vector of file.vectors) {
    const failure = await checkVector(vector, verify, headersAs);
    if (failure !== null) failures.push(failure);
  }
  return failures;
}
