// npm start: every API, the portal and the delivery engine on one port.
//
// Order matters for a clean exit: settings are checked before anything is opened (a bad one
// exits 2 with a message); the port is bound next and answers /healthz and /readyz (503 with
// the reason) while the store is opened, retried while unreachable; SIGTERM marks the
// instance not ready, stops accepting, lets in-flight requests finish, drains the delivery
// engine (in-flight attempts finish or are released for the next start) and closes the store.
import { serve, type ServerType } from '@hono/node-server';
import { ConfigError, loadConfig } from './config.ts';
import { systemClock } from './domain/clock.ts';
import { createTenant } from './domain/admin.ts';
import { answerClientErrors } from './http/client-error.ts';
import { SERVER_LIMITS } from './http/server-limits.ts';
import { createLogger } from './logger.ts';
import { buildApp, type BuiltApp } from './app/build-app.ts';
import type { Services } from './domain/context.ts';
import { openServicesWithRetry } from './lifecycle/open-with-retry.ts';
import { announceReady, stopWithSupervisor } from './lifecycle/supervision.ts';
import { createStartingApp } from './lifecycle/starting-app.ts';
import { createMetrics } from './observability/metrics.ts';
import { createReadiness } from './observability/readiness.ts';
import { createOperatorApp } from './observability/routes.ts';
import { startTracing } from './observability/tracing/index.ts';
import { unsupportedNode } from './runtime.ts';
import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { SENDER_THREAD_PROGRAM } from './delivery/thread/program.ts';
import { bundleFile } from './build/layout.ts';
import type { InstanceHeartbeat } from './store/postgres/heartbeat.ts';

/** In-flight requests get this long to finish at shutdown before their connections are closed (at most a third of the grace period). */
const REQUEST_DRAIN_MS = 15_000;
/** Kept from the grace period for the exit itself: logs flushed, sockets destroyed. */
const EXIT_MARGIN_MS = 500;

type FetchHandler = (req: Request, env: unknown) => Response | Promise<Response>;

function listen(fetch: FetchHandler, port: number, hostname: string): Promise<ServerType> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch, port, hostname, serverOptions: SERVER_LIMITS }, () => {
      server.off('error', reject);
      resolve(server);
    });
    answerClientErrors(server);
    server.once('error', reject);
  });
}

function closeServer(server: ServerType, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      // Requests still running after the grace period: their connections are cut.
      clearInterval(idler);
      (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      resolve();
    }, graceMs);
    timer.unref();
    // Keep-alive connections would hold close() open and keep bringing new requests: each is
    // closed as soon as it is idle, that is once its in-flight request is answered.
    const closeIdle = (): void => (server as { closeIdleConnections?: () => void }).closeIdleConnections?.();
    const idler = setInterval(closeIdle, 50);
    idler.unref();
    server.close(() => {
      clearTimeout(timer);
      clearInterval(idler);
      resolve();
    });
    closeIdle();
  });
}

/**
 * The delivery engine's sending thread (delivery/thread/): its bundle beside this one when the
 * server runs from a bundle (npm start, the tests), its source when it runs from source (npm
 * run dev: the thread inherits tsx's loader from this process's arguments); null otherwise.
 * Beside this one in the build's own folder, not through dist/'s link: a rebuild swaps dist/
 * to another build while this one runs (build/swap.ts).
 */
function senderThreadProgram(): { entry: string | URL } | null {
  const self = process.argv[1] ?? '';
  if (self.endsWith('.mjs')) {
    const bundle = bundleFile(path.dirname(realpathSync(self)), SENDER_THREAD_PROGRAM);
    return existsSync(bundle) ? { entry: bundle } : null;
  }
  return self.endsWith('.ts') ? { entry: new URL('./delivery/thread/sender-thread.ts', import.meta.url) } : null;
}

async function main(): Promise<void> {
  const unsupported = unsupportedNode();
  if (unsupported) throw new ConfigError(unsupported);
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  // Off unless the OTEL_* variables ask for it (docs/operations.md, Tracing): then null, and nothing is traced.
  const tracing = startTracing(process.env, { log });
  if (tracing) log.info({ endpoint: process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? process.env.OTEL_EXPORTER_OTLP_ENDPOINT }, 'tracing on: spans go to the OTLP endpoint');
  const readiness = createReadiness({ clock: systemClock });
  const metrics = createMetrics({ clock: systemClock });
  const starting = new AbortController();

  // What answers while the API may not: while starting, and once this code may no longer serve.
  const notServing: FetchHandler = createStartingApp(config, readiness, metrics).fetch;
  let handler: FetchHandler = notServing;
  const servers: ServerType[] = [];
  let heartbeat: InstanceHeartbeat | null = null;
  // The API answers only while the heartbeat (PostgreSQL) says this instance may serve: after a
  // pause past its lease, requests get 503 until a beat confirms that its schema still stands.
  servers.push(await listen((req, env) => (heartbeat?.notServing() ? notServing : handler)(req, env), config.port, config.host));
  if (config.metrics.port !== null) {
    const operator = createOperatorApp({ readiness, metrics, token: config.metrics.token });
    servers.push(await listen(operator.fetch, config.metrics.port, config.metrics.host));
    log.info({ host: config.metrics.host, port: config.metrics.port }, 'operator listener (/metrics, /readyz, /healthz)');
  } else if (config.metrics.token === null) {
    log.info('/metrics is off: set METRICS_TOKEN or METRICS_PORT to serve it');
  }
  log.info({ port: config.port, host: config.host }, 'listening; opening the store');

  let services: Services | null = null;
  let built: BuiltApp | null = null;
  let stopping: Promise<void> | null = null;
  const shutdown = (signal: string): Promise<void> =>
    (stopping ??= (async () => {
      log.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down: not ready, no new connections, draining requests and deliveries');
      // Whatever still waits then (a database that never answers), the process exits: in-flight
      // store calls are abandoned, their leases expire and other instances send the deliveries.
      const deadline = setTimeout(() => {
        log.error({ graceMs: config.shutdownGraceMs }, 'shutdown grace period over: exiting now');
        process.exit(1);
      }, config.shutdownGraceMs - EXIT_MARGIN_MS);
      deadline.unref();
      readiness.draining();
      built?.endStreams();
      starting.abort(new Error(`${signal} during start-up`));
      await Promise.all(servers.map((s) => closeServer(s, Math.min(REQUEST_DRAIN_MS, config.shutdownGraceMs / 3))));
      await built?.stop();
      // Deregistered once it serves no more (a contract migration may then go ahead), beside
      // the store's close: each is bounded on a silent database, and neither waits for the other.
      await Promise.all([heartbeat?.stop(), services?.store.close()]);
      // What is still buffered goes out before the exit.
      await tracing?.shutdown().catch((err: unknown) => log.warn({ err: { message: (err as Error).message } }, 'could not export the last spans'));
      clearTimeout(deadline);
      log.info('stopped');
    })());
  const onSignal = (signal: string, exitCode = 0): void => {
    void shutdown(signal).then(
      () => process.exit(exitCode),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  // Continued after a stop (SIGSTOP, job control): the others may have counted this instance
  // dead meanwhile; a beat now says whether it may serve, rather than one up to 10 s later.
  process.on('SIGCONT', () => heartbeat?.beatNow());
  // Started by a supervisor (npm run start:cluster): without it, stop as on SIGTERM.
  stopWithSupervisor(() => onSignal('supervisor exited'));

  try {
    const opened = await openServicesWithRetry(config, log, { readiness, signal: starting.signal });
    services = opened.services;
    if (stopping) return;
    readiness.notReady('starting', 'the store is open; starting the API and the delivery engine');
    const senderThread = senderThreadProgram();
    if (senderThread === null) log.warn('no program for the sending thread beside this one: webhooks are sent from the API thread');
    built = buildApp(services, config, { readiness, metrics, tracing, ...(senderThread !== null ? { senderThread } : {}) });
    if (opened.fresh) {
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
    // A beat that finds a migration this code cannot run on (logged there, naming it): no
    // request reaches the API again, and the instance stops as on SIGTERM, then exits 1.
    const schemaRefused = (): void => {
      handler = notServing;
      onSignal('a migration this code cannot run on', 1);
    };
    if (config.databaseUrl) {
      const registered = (heartbeat = await registerServer(config.databaseUrl, log, schemaRefused));
      readiness.heartbeat(() => registered.notServing());
    }
    if (stopping) return;
    handler = built.app.fetch;
    await built.start();
    log.info({ port: config.port, store: services.store.kind, dataDir: config.databaseUrl ? undefined : config.dataDir }, 'ready');
    announceReady();
  } catch (err) {
    if (stopping) return; // a signal during start-up: shutdown() exits
    // Nothing may stay open, or the process would not exit.
    await Promise.all(servers.map((s) => closeServer(s, 0)));
    await built?.stop().catch(() => undefined);
    await heartbeat?.stop().catch(() => undefined);
    await services?.store.close().catch(() => undefined);
    await tracing?.shutdown().catch(() => undefined);
    throw err;
  }
}

/** PostgreSQL: the instance's heartbeat row (store/postgres/heartbeat.ts), loaded only there. */
async function registerServer(databaseUrl: string, log: ReturnType<typeof createLogger>, onSchemaRefused: () => void): Promise<InstanceHeartbeat> {
  const { heartbeatPool, registerInstance } = await import('./store/postgres/heartbeat.ts');
  const pool = heartbeatPool(databaseUrl);
  try {
    return await registerInstance({ pool, log, onSchemaRefused });
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`configuration error: ${err.message}\n`);
    process.exit(2);
  }
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'EADDRINUSE' || code === 'EACCES') {
    process.stderr.write(`cannot listen: ${(err as Error).message}\n`);
    process.exit(1);
  }
  process.stderr.write(`failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
