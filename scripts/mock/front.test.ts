// Prism's request violations, should any reach the front past the server's validator, become
// the contract's field issues; its response violations and anything unreadable are not the
// client's error.
import { describe, expect, it } from 'vitest';
import { requestViolations } from './front.ts';

describe('requestViolations', () => {
  it('turns sl-violations locations into the pointers of 400 validation-failed', () => {
    const header = JSON.stringify([
      { location: ['request', 'body', 'thirdPartyId'], severity: 'Error', code: 'required', message: "Request body must have required property 'thirdPartyId'" },
      { location: ['request', 'query', 'limit'], severity: 'Error', code: 'maximum', message: 'must be <= 100' },
      { location: ['request', 'body', 'items', '0', 'amount'], severity: 'Error', code: 'type', message: 'must be number' },
      { location: ['response', 'body', 'id'], severity: 'Error', code: 'pattern', message: 'must match pattern' },
      { location: ['request', 'body', 'extra'], severity: 'Warning', code: 'x', message: 'a warning' },
      { location: ['request'], severity: 'Error', code: 401, message: 'Invalid security scheme used' },
    ]);
    expect(requestViolations(header)).toEqual([
      { pointer: '/body/thirdPartyId', detail: "Request body must have required property 'thirdPartyId'" },
      { pointer: '/query/limit', detail: 'must be <= 100' },
      { pointer: '/body/items/0/amount', detail: 'must be number' },
    ]);
  });

  it('finds nothing in an absent or unreadable header', () => {
    expect(requestViolations(null)).toEqual([]);
    expect(requestViolations('not json')).toEqual([]);
  });
});
