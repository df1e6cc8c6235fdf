// Waiting in tests for something the running server does in the background (a delivery sent,
// a notification received): polls `check` until it holds, and fails naming `what` past the
// timeout, so a hang reads as a failed expectation rather than vitest's bare test timeout.

/** Resolves once check() holds; throws `timed out waiting for <what>` after timeoutMs (what(): read then). */
export async function until(check: () => boolean | Promise<boolean>, what: string | (() => string), timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
