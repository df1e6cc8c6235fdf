import { describe, expect, it } from 'vitest';
import { hmacHex, readSignature, signedHeader } from './signature.ts';

const SECRET = 'whsec_RG9jc09ubHlfRXhhbXBsZV9TZWNyZXRfMzJfYnl0ZXM';
const V1 = 'a'.repeat(64);

describe('the suite’s own reading of Service-Signature', () => {
  it('reads t and every v1, ignoring other schemes and surrounding whitespace', () => {
    expect(readSignature(` t=1795335017,v1=${V1},v0=old,v1=${'b'.repeat(64)}\t`)).toEqual({ t: 1795335017, v1: [V1, 'b'.repeat(64)] });
  });

  it.each([
    ['', 'is not scheme=value'],
    [`v1=${V1}`, 'no t= element'],
    ['t=1', 'no v1= signature'],
    [`t=1,t=2,v1=${V1}`, 'more than one t= element'],
    [`t=1795335017000,v1=${V1}`, 't= is not 1 to 12 decimal digits'],
    [`t=1,v1=${V1.toUpperCase()}`, 'v1= is not 64 lowercase'],
    [`t=1,v1=${V1},`, 'is not scheme=value'],
    [`t=1, v1=${V1}`, 'is not scheme=value'],
  ])('%j is malformed: %s', (value, why) => {
    const read = readSignature(value);
    expect('malformed' in read && read.malformed).toContain(why);
  });

  it('signs what it reads back: HMAC-SHA256 over "<t>.<raw body>"', () => {
    const body = Buffer.from('{"id":"x"}');
    const read = readSignature(signedHeader(SECRET, 1795335017, body));
    expect(read).toEqual({ t: 1795335017, v1: [hmacHex(SECRET, '1795335017', body)] });
    expect(hmacHex(SECRET, '1795335017', body)).not.toBe(hmacHex(SECRET, '1795335018', body));
  });
});
