// A reload serves the documents that changed and only those: the changed document gets a new
// Prism instance (which answers the change), the other three keep the instances they had.
import { beforeAll, describe, expect, it } from 'vitest';
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

/** getOrder's answer from the orders Prism: its merchantReference. */
async function paidReference(): Promise<unknown> {
  const answer = await served.prism('orders').answer({ method: 'GET', path: ORDER, query: {}, headers: CREDS, body: undefined, prefer: {}, callbacks: false });
  return (answer.body as Obj).merchantReference;
}

beforeAll(async () => {
  served = await serveDocuments({ load });
}, 120_000);

describe('serveDocuments', () => {
  it('reloads the one document that changed', async () => {
    const before = new Map(API_NAMES.map((api) => [api, served.prism(api)]));
    expect(await served.refresh()).toEqual([]);
    expect(await paidReference()).toBe('cart-served-1');
    reference = 'cart-served-2';
    expect(await served.refresh()).toEqual(['orders']);
    for (const api of API_NAMES) expect(served.prism(api) === before.get(api)).toBe(api !== 'orders');
    expect(await paidReference()).toBe('cart-served-2');
  }, 120_000);

  it('keeps answering from the document served until a reload is done', async () => {
    reference = 'cart-served-3';
    const refreshed = served.refresh();
    expect(await paidReference()).toBe('cart-served-2');
    expect(await refreshed).toEqual(['orders']);
    expect(await paidReference()).toBe('cart-served-3');
  }, 120_000);
});
