import { describe, expect, it } from 'vitest';
import { unsupportedNode } from './runtime.ts';

describe('unsupportedNode', () => {
  it('accepts the running Node (CI runs only supported ones) and refuses Node 20', () => {
    expect(unsupportedNode()).toBeNull();
    expect(unsupportedNode('20.20.2')).toMatch(/^Node >=\d+\.\d+\.\d+ is required .*this is Node 20\.20\.2\.$/);
    expect(unsupportedNode('22.16.9')).not.toBeNull();
    expect(unsupportedNode('22.17.0')).toBeNull();
    expect(unsupportedNode('26.0.0')).toBeNull();
  });
});
