// What a request's method says about it.

/**
 * A read: GET or HEAD, which change nothing, so a request cut short has no write to settle
 * (the deadline answers 503 rather than 504 outcome-unknown; errors.ts likewise).
 */
export function isRead(method: string): boolean {
  return method === 'GET' || method === 'HEAD';
}
