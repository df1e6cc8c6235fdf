// A reload serves the documents that changed and only those: the changed document's Prism
// reloads it (and answers the change), the other three keep the processes and ports they had;
// a request to the reloading document waits for the reload instead of failing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_NAMES, loadDocument, type ApiName } from '../../server/contract/operations.ts';
import { serveDocuments, type ServedDocuments } from './served.ts';

type Obj = Record<string, unknown>;
const ORDER = '/v2/orders/3f0c9a8e-6b1d-4c2e-9f7a-2d5b8e1c4a90';
const CREDS = { 'x-api-key': 'pk_test_served', 'x-api-hash': 'sk_test_served' };

/** The orders document with getOrder's `paid` example naming `reference`. */
function ordersWith(reference: string): Obj {
  const doc = loadDocument('orders');
  const get = ((doc.paths as Obj)['/v2/orders/{orderId}'] as Obj).get as { responses: Record<string, { content: Record<string, { examples: Record<string, { value: Obj }> }> }> };
  const paid = get.responses['200']?.content['application/json']?.examples.paid;
  if (paid === undefined) throw new Error('getOrder has no paid example');
  paid.value = { ...paid.value, merchantReference: reference };
  return doc;
}

let reference = 'cart-served-1';
let served: ServedDocuments;
const load = (api: ApiName): Obj => (api === 'orders' ? ordersWith(reference) : loadDocument(api));

const urls = async (): Promise<Map<ApiName, string>> => new Map(await Promise.all(API_NAMES.map(async (api) => [api, await served.prismUrl(api)] as const)));

/** getOrder's answer from the orders Prism: its merchantReference. */
async function paidReference(): Promise<unknown> {
  const res = await fetch(`${await served.prismUrl('orders')}${ORDER}`, { headers: CREDS });
  return ((await res.json()) as Obj).merchantReference;
}

beforeAll(async () => {
  served = await serveDocuments({ log: () => {}, load });
}, 120_000);

afterAll(() => served?.close());

describe('serveDocuments', () => {
  it('reloads the one document that changed', async () => {
    const before = await urls();
    expect(await served.refresh()).toEqual([]);
    reference = 'cart-served-2';
    expect(await served.refresh()).toEqual(['orders']);
    const after = await urls();
    for (const api of API_NAMES.filter((a) => a !== 'orders')) expect(after.get(api)).toBe(before.get(api));
    expect(await paidReference()).toBe('cart-served-2');
  }, 120_000);

  it('has a request made during the reload wait for it, then answer from the new document', async () => {
    reference = 'cart-served-3';
    const refreshed = served.refresh();
    expect(await paidReference()).toBe('cart-served-3');
    expect(await refreshed).toEqual(['orders']);
  }, 120_000);
});
