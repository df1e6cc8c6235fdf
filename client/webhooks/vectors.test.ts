// Both verifiers against the signature vectors the package ships (generated/signature-vectors.json):
// verifyWebhook on node:crypto, verifyWebhookAsync on Web Crypto (Node's own, an injected one,
// the `web` entry bundled and run in a context where nothing can be imported, and under Bun).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { WEBHOOK_VERIFICATION_ERROR_CODES, verifyWebhook, verifyWebhookAsync } from './index.ts';
import type { HmacSubtle, VerifyWebhookAsyncInput } from './index.ts';
import { failedVectors, type SignatureVectorFile, type VectorVerifier } from './vectors.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const VECTORS_FILE = path.join(ROOT, 'generated', 'signature-vectors.json');
const VECTORS = JSON.parse(readFileSync(VECTORS_FILE, 'utf8')) as SignatureVectorFile;

describe('the signature vectors', () => {
  it('have valid and invalid cases, a reason for each, and a case for every error code', () => {
    const valid = VECTORS.vectors.filter((v) => v.valid);
    expect(valid.length).toBeGreaterThanOrEqual(10);
    expect(VECTORS.vectors.length - valid.length).toBeGreaterThanOrEqual(20);
    for (const v of VECTORS.vectors) expect(v.reason.length, v.name).toBeGreaterThan(10);
    const codes = new Set(VECTORS.vectors.map((v) => v.error).filter(Boolean));
    expect([...codes].sort()).toEqual([...WEBHOOK_VERIFICATION_ERROR_CODES].sort());
    expect(new Set(VECTORS.vectors.map((v) => v.name)).size).toBe(VECTORS.vectors.length);
  });
});

describe.each(['object', 'Headers'] as const)('with headers as %s', (headersAs) => {
  it('verifyWebhook (node:crypto) answers every vector as it says', async () => {
    expect(await failedVectors(VECTORS, verifyWebhook, headersAs)).toEqual([]);
  });

  it('verifyWebhookAsync (Web Crypto) answers every vector as it says', async () => {
    expect(await failedVectors(VECTORS, verifyWebhookAsync, headersAs)).toEqual([]);
  });
});

describe('verifyWebhookAsync', () => {
  it('uses the injected Web Crypto, one HMAC per secret', async () => {
    let signs = 0;
    const subtle: HmacSubtle = {
      importKey: (...args: Parameters<SubtleCrypto['importKey']>) => crypto.subtle.importKey(...args),
      sign: (...args: Parameters<SubtleCrypto['sign']>) => {
        signs += 1;
        return crypto.subtle.sign(...args);
      },
    } as HmacSubtle;
    const injected: VectorVerifier = (input) => verifyWebhookAsync({ ...input, subtle } satisfies VerifyWebhookAsyncInput);
    expect(await failedVectors(VECTORS, injected)).toEqual([]);
    // Invalid vectors refused before step 5 compute nothing; every other one computes one HMAC per secret.
    expect(signs).toBeGreaterThanOrEqual(VECTORS.vectors.filter((v) => v.valid).length);
  });

  it('refuses as a rejected promise, never synchronously', async () => {
    const vector = VECTORS.vectors.find((v) => v.error === 'missing_signature');
    let thrownSynchronously = false;
    let promise: Promise<unknown> | undefined;
    try {
      promise = verifyWebhookAsync({ rawBody: vector?.body ?? '', headers: {}, secrets: vector?.secrets ?? [] });
    } catch {
      thrownSynchronously = true;
    }
    expect(thrownSynchronously).toBe(false);
    await expect(promise).rejects.toMatchObject({ name: 'WebhookVerificationError', code: 'missing_signature' });
  });
});

describe('the web entry', () => {
  it('bundles without any node: import and passes the vectors in a context that has only Web Crypto', async () => {
    const out = await build({
      entryPoints: [path.join(ROOT, 'client', 'webhooks', 'web.ts')],
      bundle: true,
      write: false,
      platform: 'neutral',
      format: 'iife',
      globalName: 'paymentsWebhooksWeb',
      logLevel: 'silent',
    });
    const code = out.outputFiles[0]?.text ?? '';
    expect(code).toContain('verifyWebhookAsync');
    // No module loading of any kind, and none of Node's globals (the one "Buffer" is in an error message).
    expect(code).not.toMatch(/\bimport\s*[("'{*]|\brequire\s*\(|["']node:|\bprocess\.|\bBuffer\./);
    // No require, no process, no import(): only the language, text codecs and crypto.subtle.
    const context = vm.createContext({ crypto: { subtle: crypto.subtle }, TextEncoder, TextDecoder });
    vm.runInContext(code, context);
    const web = (context as { paymentsWebhooksWeb: { verifyWebhookAsync: VectorVerifier } }).paymentsWebhooksWeb;
    expect(vm.runInContext('typeof require + typeof process + typeof Buffer', context)).toBe('undefinedundefinedundefined');
    expect(await failedVectors(VECTORS, web.verifyWebhookAsync)).toEqual([]);
  });

  it('passes the vectors under Bun', async () => {
    const bun = path.join(ROOT, 'node_modules', '.bin', 'bun');
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(bun, [path.join(ROOT, 'client', 'webhooks', 'vectors.bun.ts'), VECTORS_FILE], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { runtime: string; vectors: number; failures: string[] };
    expect(report.runtime).toMatch(/^bun \d+\.\d+/);
    expect(report.vectors).toBe(VECTORS.vectors.length);
    expect(report.failures).toEqual([]);
  });
});
