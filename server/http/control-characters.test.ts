import { describe, expect, it } from 'vitest';
import { nulIssues } from './control-characters.ts';

describe('nulIssues', () => {
  it('finds nothing in a value without NUL, and adds nothing to the issues it is given', () => {
    const out = [{ pointer: '/path/id', detail: 'earlier' }];
    expect(nulIssues({ a: 'x', b: [1, 'y', { c: null }], 'd/e~f': true }, '/body', out)).toBe(out);
    expect(out).toEqual([{ pointer: '/path/id', detail: 'earlier' }]);
    expect(nulIssues('plain', '/query/q')).toEqual([]);
  });

  it('names every NUL by its JSON pointer: strings at any depth and property names, escaped', () => {
    const value = { ok: 'x', list: ['a', 'b\u0000'], 'a/b~\u0000': { deep: '\u0000' } };
    expect(nulIssues(value, '/body', [{ pointer: '/path/id', detail: 'earlier' }])).toEqual([
      { pointer: '/path/id', detail: 'earlier' },
      { pointer: '/body/list/1', detail: 'must not contain NUL characters' },
      { pointer: '/body/a~1b~0\u0000', detail: 'property names must not contain NUL characters' },
      { pointer: '/body/a~1b~0\u0000/deep', detail: 'must not contain NUL characters' },
    ]);
  });
});
