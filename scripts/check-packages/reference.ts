// The bundled reference server for `npm run check:packages`: started on loopback with a
// temporary SQLite store, three tenants and the credentials the api and sender targets take.
// Prints one JSON line ({ url, api: [...args], sender: [...args], merchant: { apiKey, apiSecret } }:
// the last a test key for `payments-webhooks listen` and `trigger`), then serves until its
// standard input closes (the parent ends it that way).
import { apiArgs, senderArgs, startSink } from '../../conformance-tests/testing/run.ts';
import { startTestServer } from '../../server/testing/harness.ts';

// Retries arrive within the sender target's attempts window (the contract's schedule, scaled).
const server = await startTestServer({ env: { WEBHOOK_RETRY_SCALE: '0.0001' } });
const sink = await startSink();
const a = await server.newTenant('Partner check A');
const b = await server.newTenant('Partner check B');
// The api target rotates secrets of its tenant: the sender target gets one of its own.
const c = await server.newTenant('Partner check C');
const d = await server.newTenant('Merchant check D');
const merchant = { apiKey: d.apiKey, apiSecret: d.apiHash };
process.stdout.write(`${JSON.stringify({ url: server.url, api: await apiArgs(server, a, b, sink.url), sender: senderArgs(server, c), merchant })}\n`);

process.stdin.resume();
process.stdin.on('end', () => {
  void Promise.all([sink.close(), server.close()]).then(() => process.exit(0));
});
