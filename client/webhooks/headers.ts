// Reading one request header the same way for every scheme's rules (rules.ts, standard-rules.ts).

/**
 * Request headers: a fetch `Headers` object, or a plain object such as Node's
 * `req.headers` (names are matched case-insensitively).
 */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export type HeaderLookup = { kind: 'absent' } | { kind: 'one'; value: string } | { kind: 'several'; count: number };

/**
 * One header value. A `Headers` object answers case-insensitively itself (and joins
 * repeats with ", "). A plain object is searched case-insensitively; an array value
 * counts only when it holds exactly one string, and the same name under two spellings
 * counts as two values.
 */
export function singleHeader(headers: WebhookHeaders, name: string): HeaderLookup {
  if (typeof headers !== 'object' || headers === null) {
    throw new TypeError('headers must be a Headers object or a plain object of header values');
  }
  if (isHeadersLike(headers)) {
    const value = headers.get(name);
    return value === null ? { kind: 'absent' } : { kind: 'one', value };
  }
  const wanted = name.toLowerCase();
  const values: string[] = [];
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== wanted) continue;
    if (typeof value === 'string') {
      values.push(value);
    } else if (Array.isArray(value)) {
      for (const item of value) if (typeof item === 'string') values.push(item);
    }
  }
  if (values.length === 0) return { kind: 'absent' };
  if (values.length > 1) return { kind: 'several', count: values.length };
  return { kind: 'one', value: values[0] as string };
}

function isHeadersLike(headers: WebhookHeaders): headers is Headers {
  return typeof (headers as { get?: unknown }).get === 'function';
}
