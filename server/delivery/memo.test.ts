import { describe, expect, it } from 'vitest';
import { boundedMemo } from './memo.ts';

describe('boundedMemo', () => {
  it('computes a key once, keeps at most `size` keys, and does not keep errors', () => {
    const computed: string[] = [];
    const upper = boundedMemo(2, (key) => {
      computed.push(key);
      if (key === 'bad') throw new Error('refused');
      return key.toUpperCase();
    });
    expect([upper('a'), upper('a'), upper('b')]).toEqual(['A', 'A', 'B']);
    expect(computed).toEqual(['a', 'b']);
    upper('c'); // past the bound: emptied, then c kept
    upper('a');
    expect(computed).toEqual(['a', 'b', 'c', 'a']);
    expect(() => upper('bad')).toThrow('refused');
    expect(() => upper('bad')).toThrow('refused');
    expect(computed.filter((k) => k === 'bad')).toHaveLength(2);
  });
});
