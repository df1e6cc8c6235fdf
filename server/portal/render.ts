// Pages are rendered on the server with hono/jsx, which escapes every text and attribute
// value: merchant and receiver data can never become markup.
import type { Context } from 'hono';
import type { JSX } from 'hono/jsx/jsx-runtime';

export type PageStatus = 200 | 400 | 401 | 403 | 404 | 409 | 413 | 422 | 429 | 500;

export async function page(c: Context, element: JSX.Element, status: PageStatus = 200): Promise<Response> {
  const html = String(await element);
  return c.html(`<!DOCTYPE html>${html}`, status);
}

/** The string fields of a submitted form (files are ignored; a repeated name keeps its last value). */
export async function formFields(c: Context): Promise<Record<string, string>> {
  const body = await c.req.parseBody();
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(body)) if (typeof value === 'string') fields[name] = value;
  return fields;
}
