// Opaque identifiers. Prefixes make logs and support tickets readable; nothing parses them.
import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** Prefix + 26 Crockford base32 characters: 48 bits of time (sortable) and 80 random bits. */
export function newId(prefix: string, now: number = Date.now()): string {
  // Epoch milliseconds stay below 2^48 for millennia: exact in a Number, no BigInt needed.
  let time = Math.trunc(now);
  let head = '';
  for (let i = 0; i < 10; i++) {
    head = ALPHABET[time % 32] + head;
    time = Math.floor(time / 32);
  }
  const random = randomChunk(16);
  let tail = '';
  for (let i = 0; i < 16; i++) tail += ALPHABET[(random[i] ?? 0) % 32];
  return `${prefix}_${head}${tail}`;
}

// One call into the CSPRNG per 256 ids instead of one per id; every byte is used once.
const POOL = Buffer.alloc(4096);
let poolOffset = POOL.length;
function randomChunk(size: number): Buffer {
  if (poolOffset + size > POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  const chunk = POOL.subarray(poolOffset, poolOffset + size);
  poolOffset += size;
  return chunk;
}

export const newTenantId = (): string => newId('ten');
export const newEnvironmentId = (): string => newId('env');
export const newTransactionId = (now?: number): string => newId('txn', now);
export const newEndpointId = (now?: number): string => newId('whe', now);
export const newDeliveryId = (now?: number): string => newId('dlv', now);
export const newMemberId = (): string => newId('mem');
export const newServiceAccountId = (): string => newId('sa');
export const newPasskeyId = (): string => newId('pky');
/**
 * Order ids: UUIDs of version 7 (RFC 9562): 48 bits of Unix milliseconds, then 74 random bits.
 * Ids that grow with time add to the end of every index on them; random ones (version 4) wrote
 * a different index page per order, which every commit then copies to the log.
 */
export function newOrderId(now: number = Date.now()): string {
  const b = Buffer.from(randomChunk(16));
  b.writeUIntBE(millis48(now), 0, 6);
  b[6] = (b[6]! & 0x0f) | 0x70; // version 7
  b[8] = (b[8]! & 0x3f) | 0x80; // variant 10
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
/**
 * Event ids: 64 lowercase hex characters, the first 12 the creation time in milliseconds (for
 * the indexes, as order ids), the other 52 random (208 bits).
 */
export function newEventId(now: number = Date.now()): string {
  return millis48(now).toString(16).padStart(12, '0') + randomChunk(26).toString('hex');
}

/** Epoch milliseconds as 48 bits (they fit until the year 10889). */
const millis48 = (now: number): number => Math.max(0, Math.trunc(now)) % 2 ** 48;
export const newRequestId = (): string => newId('req');
