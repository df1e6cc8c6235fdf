// Runs the example merchant receiver:
//
//   WEBHOOK_SECRET=whsec_... ORDERS_API_KEY=... ORDERS_API_HASH=... \
//     npx tsx client/examples/merchant-receiver/main.ts
//
// Settings (environment):
//   PORT                      3000
//   HOST                      127.0.0.1 (put TLS in front: the service only posts to https on 443)
//   DB_FILE                   ./merchant-receiver.db
//   WEBHOOK_SECRET            the endpoint's signing secret (required)
//   WEBHOOK_PREVIOUS_SECRET   the previous one, only while a rotation is in flight
//   CALLBACK_SECRET           the callback secret; mounts POST /payouts/completed
//   CALLBACK_PREVIOUS_SECRET  the previous callback secret, during its rotation
//   ORDERS_API_URL            http://localhost:8080
//   ORDERS_API_KEY, ORDERS_API_HASH   a key with the orders_read permission (required)
import { serve } from '@hono/node-server';
import { openMerchantStore } from './store.ts';
import { CALLBACK_PATH, WEBHOOK_PATH, createMerchantReceiver } from './receiver.ts';

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    console.error(`${name} is required`);
    process.exit(2);
  }
  return value;
}

function secrets(current: string | undefined, previous: string | undefined): string[] | undefined {
  if (!current) return undefined;
  return previous ? [current, previous] : [current];
}

const port = Number(process.env.PORT ?? 3000);
const hostname = process.env.HOST ?? '127.0.0.1';
const store = openMerchantStore(process.env.DB_FILE ?? './merchant-receiver.db');
const callbackSecrets = secrets(process.env.CALLBACK_SECRET, process.env.CALLBACK_PREVIOUS_SECRET);

const receiver = createMerchantReceiver({
  secrets: secrets(required('WEBHOOK_SECRET'), process.env.WEBHOOK_PREVIOUS_SECRET) as string[],
  ...(callbackSecrets ? { callbackSecrets } : {}),
  store,
  ordersApi: {
    baseUrl: process.env.ORDERS_API_URL ?? 'http://localhost:8080',
    apiKey: required('ORDERS_API_KEY'),
    apiHash: required('ORDERS_API_HASH'),
  },
  log: (message) => console.log(`${new Date().toISOString()} ${message}`),
});

const server = serve({ fetch: receiver.app.fetch, port, hostname }, (info) => {
  console.log(`merchant receiver on http://${hostname}:${info.port}${WEBHOOK_PATH}${callbackSecrets ? ` and ${CALLBACK_PATH}` : ''}`);
});

// Fulfilments left pending (orders API down, a crash between commit and fulfilment): retry at
// start-up and every minute.
void receiver.resumePendingFulfilment();
const timer = setInterval(() => void receiver.resumePendingFulfilment(), 60_000);
timer.unref();

function shutdown(): void {
  clearInterval(timer);
  server.close(() => {
    void receiver.idle().then(() => {
      store.close();
      process.exit(0);
    });
  });
}
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
