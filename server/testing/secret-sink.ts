// The secrets sink of a whole test run: while SECRET_SINK names a folder (set for every
// worker by secret-sink-setup.ts, from secret-sink-global-setup.ts), test servers log through
// the production logger into it, and their error bodies, metrics and child servers' output are
// appended to it; the global teardown greps it all for secret shapes (`findSecrets`) and fails
// the run on one. Each process writes its own file, synchronously (nothing lost on a kill).
import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { pino, type Logger } from 'pino';
import { SECRET_PREFIX } from '../../signing/signature.ts';
import { createLogger } from '../logger.ts';

/** How minted secrets look (server/domain/admin.ts, signing/signature.ts): prefix + 32 random bytes, base64url. */
export const SECRET_SHAPES: ReadonlyArray<{ name: string; pattern: RegExp }> = [
  { name: 'API hash', pattern: /\bsk_(?:test|live)_[A-Za-z0-9_-]{43}/g },
  { name: 'member token', pattern: /\bmt_[A-Za-z0-9_-]{43}/g },
  { name: 'signing or callback secret', pattern: new RegExp(`\\b${SECRET_PREFIX}[A-Za-z0-9_-]{43}`, 'g') },
];

/** Each secret-shaped string in text, named by its kind (the value itself only by its first characters). */
export function findSecrets(text: string): Array<{ kind: string; start: string }> {
  const found: Array<{ kind: string; start: string }> = [];
  for (const { name, pattern } of SECRET_SHAPES) {
    for (const m of text.matchAll(pattern)) found.push({ kind: name, start: `${m[0].slice(0, m[0].indexOf('_', 3) + 3)}…` });
  }
  return found;
}

let file: string | null | undefined;

/** This process's sink file, or null when no sink is set. */
export function sinkFile(): string | null {
  if (file === undefined) {
    const dir = process.env.SECRET_SINK;
    if (!dir) file = null;
    else {
      mkdirSync(dir, { recursive: true });
      file = path.join(dir, `${process.pid}.log`);
    }
  }
  return file;
}

let logger: Logger | null = null;

/** The production logger (redaction included) at debug level writing to the sink, or null. */
export function sinkLogger(): Logger | null {
  const dest = sinkFile();
  if (dest === null) return null;
  logger ??= createLogger('debug', pino.destination({ dest, sync: true, append: true }));
  return logger;
}

/** Appends text (an error body, a metrics page, a child's output) to the sink, if any. */
export function sinkText(source: string, text: string): void {
  const dest = sinkFile();
  if (dest !== null && text.length > 0) appendFileSync(dest, `--- ${source}\n${text}\n`);
}
