import { describe, expect, it } from 'vitest';
import { nestingGuard } from './nesting-guard.ts';

describe('nestingGuard', () => {
  it('on: refuses a call from inside an open transaction, across awaits, and nothing outside or after it', async () => {
    const guard = nestingGuard(true);
    const scope = { open: true };
    expect(() => guard.check()).not.toThrow();
    await guard.run(scope, async () => {
      expect(() => guard.check()).toThrow(/nested store transaction/);
      await new Promise((r) => setImmediate(r));
      expect(() => guard.check()).toThrow(/nested store transaction/);
      scope.open = false;
      expect(() => guard.check()).not.toThrow();
    });
    expect(() => guard.check()).not.toThrow();
  });

  it('off: runs the body as it is and never refuses', async () => {
    const guard = nestingGuard(false);
    const value = await guard.run({ open: true }, async () => {
      guard.check();
      return 7;
    });
    expect(value).toBe(7);
  });
});
