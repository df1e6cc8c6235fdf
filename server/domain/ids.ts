// Opaque identifiers. Prefixes make logs and support tickets readable; nothing parses them.
import { randomBytes, randomFillSync, randomUUID } from 'node:crypto';

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
export const newOrderId = (): string => randomUUID();
/** Event ids: 64 lowercase hex characters. */
export const newEventId = (): string => randomBytes(32).toString('hex');
export const newRequestId = (): string => newId('req');
