import { describe, expect, it } from 'vitest';
import { isRead } from './methods.ts';

describe('isRead', () => {
  it('is true for GET and HEAD only', () => {
    expect(['GET', 'HEAD'].map(isRead)).toEqual([true, true]);
    expect(['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'get'].map(isRead)).toEqual([false, false, false, false, false, false]);
  });
});
