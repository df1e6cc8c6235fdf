// The shapes the run's secrets check looks for match what the server mints, and nothing else
// that is logged by design (key ids, event and delivery ids, hashes, sealed values).
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateSecret } from '../../signing/signature.ts';
import { newId } from '../domain/ids.ts';
import { createSecretBox, hashToken, randomToken } from '../domain/secrets.ts';
import { findSecrets } from './secret-sink.ts';

describe('secret shapes', () => {
  it('finds every kind of minted secret, wherever it sits in a line', () => {
    const minted = [randomToken('sk_test_'), randomToken('sk_live_'), randomToken('mt_'), generateSecret()];
    for (const s of minted) {
      expect(findSecrets(`{"msg":"x","v":"${s}"}`)).toHaveLength(1);
      expect(findSecrets(`GET /x?q=${encodeURIComponent(s)} 401`)).toHaveLength(1);
    }
    expect(findSecrets(minted.join(' ')).map((f) => f.kind)).toEqual(['API hash', 'API hash', 'member token', 'signing or callback secret']);
    // What a finding shows is the kind and a prefix, never the value.
    expect(JSON.stringify(findSecrets(minted[0]!))).not.toContain(minted[0]!.slice(8));
  });

  it('does not flag what is logged by design', () => {
    const box = createSecretBox(randomBytes(32));
    const benign = [newId('pk_test'), newId('pk_live'), hashToken(randomToken('sk_test_')), box.seal(generateSecret()), randomBytes(32).toString('hex')];
    expect(findSecrets(benign.join('\n'))).toEqual([]);
  });
});
