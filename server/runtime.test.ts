import { describe, expect, it } from 'vitest';
import { unexpectedNode, unsupportedNode } from './runtime.ts';

describe('unsupportedNode', () => {
  it('accepts the running Node (CI runs only supported ones) and refuses Node 20', () => {
    expect(unsupportedNode()).toBeNull();
    expect(unsupportedNode('20.20.2')).toMatch(/^Node >=\d+\.\d+\.\d+ is required .*this is Node 20\.20\.2\. Run it through npm .*node_modules\/\.bin\.$/);
    expect(unsupportedNode('22.16.9')).not.toBeNull();
    expect(unsupportedNode('22.17.0')).toBeNull();
    expect(unsupportedNode('26.0.0')).toBeNull();
  });
});

describe('unexpectedNode', () => {
  it('is silent without an expectation or when the versions match, and names both otherwise', () => {
    // '' as no expectation: undefined would take the default, this run's EXPECT_NODE_VERSION.
    expect(unexpectedNode('', '24.1.0')).toBeNull();
    expect(unexpectedNode('24.1.0', '24.1.0')).toBeNull();
    expect(unexpectedNode('22.20.0', '24.1.0')).toMatch(/^EXPECT_NODE_VERSION is 22\.20\.0 but this is Node 24\.1\.0 \(/);
  });

  it('holds for this run (CI sets EXPECT_NODE_VERSION for each Node it tests)', () => {
    expect(unexpectedNode()).toBeNull();
  });
});
