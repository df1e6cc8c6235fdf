// Opaque identifiers. Prefixes make logs and support tickets readable; nothing parses them.
import { randomBytes, randomUUID } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** Prefix + 26 Crockford base32 characters: 48 bits of time (sortable) and 80 random bits. */
export function newId(prefix: string, now: number = Date.now()): string {
  let time = BigInt(now);
  let head = '';
  for (let i = 0; i < 10; i++) {
    head = ALPHABET[Number(time % 32n)] + head;
    time /= 32n;
  }
  const random = randomBytes(16);
  let tail = '';
  for (let i = 0; i < 16; i++) tail += ALPHABET[(random[i] ?? 0) % 32];
  return `${prefix}_${head}${tail}`;
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
