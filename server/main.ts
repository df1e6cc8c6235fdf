// npm start: every API, the portal and the delivery engine on one port.
import { serve } from '@hono/node-server';
import { ConfigError, loadConfig } from './config.ts';
import { createTenant } from './domain/admin.ts';
import { createLogger } from './logger.ts';
import { buildApp } from './api/index.ts';
import { unsupportedNode } from './runtime.ts';
import { openServices } from './services.ts';

async function main(): Promise<void> {
  const unsupported = unsupportedNode();
  if (unsupported) throw new ConfigError(unsupported);
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  const { services, fresh } = await openServices(config, log);
  const { app, start, stop } = buildApp(services, config);

  if (fresh) {
    // First start on an empty data folder: a demo tenant, its credentials printed once.
    const demo = await createTenant(services, { name: 'Demo Merchant' });
    const url = `http://localhost:${config.port}`;
    process.stdout.write(
      `\nDemo tenant created. These secrets are shown once; keep them somewhere safe.\n${JSON.stringify(demo, null, 2)}\n\n` +
        `Try it:\n  curl -s -X POST ${url}/transactions/payout -H 'content-type: application/json' \\\n` +
        `    -H 'x-api-key: ${demo.apiKey}' -H 'x-api-hash: <apiHash above>' \\\n` +
        `    -d '{"thirdPartyId":"first-payout","userId":"user-1","amount":25.5}'\n\n`,
    );
  }

  const server = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, (info) => {
    log.info({ port: info.port, store: services.store.kind, dataDir: config.databaseUrl ? undefined : config.dataDir }, 'listening');
  });
  await start();

  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down: no new requests, draining deliveries');
    server.close();
    await stop();
    await services.store.close();
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`configuration error: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
