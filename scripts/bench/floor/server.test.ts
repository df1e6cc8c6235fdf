// The orders floor as the bench runs it (plain Node on a tenant's SQLite file, real HTTP on
// loopback): it answers what the server answers, writes the server's rows with the server's
// ids, and refuses what the contract refuses, so the floor the server is measured against does
// the work a correct server must do.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../server/domain/clock.ts';
import { createTenant, type CreatedTenant } from '../../../server/domain/admin.ts';
import { createSecretBox } from '../../../server/domain/secrets.ts';
import { createDestinationPolicy } from '../../../server/destination/policy.ts';
import { silentLog } from '../../../server/http/middleware/testing.ts';
import { openSqliteStore } from '../../../server/store/sqlite/store.ts';
import { startFloor } from '../orders-floor.ts';

let dir: string;
let tenant: CreatedTenant;
let floor: Awaited<ReturnType<typeof startFloor>> | undefined;
let url: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'floor-test-'));
  const store = await openSqliteStore({ file: path.join(dir, 'payments.db') });
  await store.migrate();
  tenant = await createTenant({ store, clock: systemClock, secrets: createSecretBox(randomBytes(32)), destinations: createDestinationPolicy({ allowInsecure: true, nodeEnv: 'test' }), log: silentLog }, { name: 'Floor' });
  await store.close();
  // As the bench starts it.
  floor = await startFloor('sqlite', dir, tenant);
  url = `${floor.url}/v2/orders`;
});

afterAll(async () => {
  await floor?.stop();
  await rm(dir, { recursive: true, force: true });
});

const post = (body: string, headers: Record<string, string> = { 'x-api-key': tenant.apiKey, 'x-api-hash': tenant.apiHash }): Promise<Response> =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

describe('the orders floor', () => {
  it("answers 201 with the server's shape and writes the order and its event with the server's ids", async () => {
    const answers = await Promise.all(['cart-1', 'cart-2'].map((ref) => post(JSON.stringify({ merchantReference: ref, amountMinor: 4999 }))));
    const orders = (await Promise.all(answers.map((a) => (expect(a.status).toBe(201), a.json())))) as Record<string, unknown>[];
    expect(orders.map((o) => o.orderNumber).sort()).toEqual(['ORD-000001', 'ORD-000002']);
    const order = orders[0]!;
    expect(order).toMatchObject({ amountMinor: 4999, currency: 'USD', status: 'open', paymentStatus: 'unpaid', receivedBaseUnits: '0', payments: [] });
    // A version 7 UUID, as server/domain/ids.ts makes them.
    expect(order.orderId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(answers[0]!.headers.get('location')).toBe(`/v2/orders/${order.orderId}`);
    const db = new Database(path.join(dir, 'payments.db'), { readonly: true });
    try {
      const row = db.prepare('SELECT order_number, merchant_reference, amount_minor, status, payment_status, received_base_units FROM orders WHERE id = ?').get(order.orderId);
      expect(row).toEqual({ order_number: order.orderNumber, merchant_reference: order.merchantReference, amount_minor: 4999, status: 'open', payment_status: 'unpaid', received_base_units: '0' });
      const event = db.prepare('SELECT id, type, payload FROM events WHERE order_id = ?').get(order.orderId) as { id: string; type: string; payload: string };
      expect(event.type).toBe('order.created');
      expect(event.id).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.parse(event.payload)).toMatchObject({ id: event.id, type: 'order.created', data: { orderId: order.orderId, merchantReference: order.merchantReference, amountMinor: 4999 } });
      // No active endpoint, no delivery.
      expect(db.prepare('SELECT count(*) AS n FROM deliveries').get()).toEqual({ n: 0 });
    } finally {
      db.close();
    }
  });

  it.each([
    ['a zero amount', { merchantReference: 'cart', amountMinor: 0 }],
    ['a fractional amount', { merchantReference: 'cart', amountMinor: 1.5 }],
    ['an empty reference', { merchantReference: '', amountMinor: 1 }],
    ['a reference of 129 characters', { merchantReference: 'x'.repeat(129), amountMinor: 1 }],
    ['a property the contract does not know', { merchantReference: 'cart', amountMinor: 1, note: 'x' }],
    ['no amount', { merchantReference: 'cart' }],
  ])('refuses %s with 422 as the contract does', async (_what, body) => {
    expect((await post(JSON.stringify(body))).status).toBe(422);
  });

  it('takes a reference of 128 characters, counted in code points', async () => {
    expect((await post(JSON.stringify({ merchantReference: '😀'.repeat(128), amountMinor: 1 }))).status).toBe(201);
  });

  it('refuses a body that is not JSON with 400, and a wrong or missing credential with 401', async () => {
    expect((await post('{')).status).toBe(400);
    expect((await post('{}', { 'x-api-key': tenant.apiKey, 'x-api-hash': 'nope' })).status).toBe(401);
    expect((await post('{}', { 'x-api-hash': tenant.apiHash })).status).toBe(401);
  });
});
