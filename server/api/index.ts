// The whole server: every API's handlers on one Hono app, plus the delivery engine's
// lifecycle. main.ts and the test harness both build it here.
import type { Hono } from 'hono';
import type { Config } from '../config.ts';
import type { Services } from '../domain/context.ts';
import type { AppEnv } from '../http/app-env.ts';
import { createApp } from '../http/app.ts';
import { untyped, type Handler } from '../http/handler-types.ts';
import type { ApiName } from '../contract/operations.ts';
import { createDeliveryEngine, type DeliveryEngine, type DeliveryEngineOptions } from '../delivery/engine.ts';
import { createRateLimiter } from '../http/rate-limit.ts';
import { mountDocs } from '../http/docs.ts';
import { mountPortal } from '../portal/mount.ts';
import { managementHandlers } from './management.ts';
import { ordersHandlers } from './orders.ts';
import { sandboxHandlers } from './sandbox.ts';
import { transactionsHandlers } from './transactions.ts';

export interface BuiltApp {
  app: Hono<AppEnv>;
  engine: DeliveryEngine;
  /** Starts background work (the delivery engine). */
  start(): Promise<void>;
  /** Stops background work, draining what is in flight. */
  stop(): Promise<void>;
}

/**
 * Seams for the conformance suite's mutants (conformance/mutants/servers/): deliberately broken
 * variants of this server built through the real buildApp. Never set in production.
 */
export interface BuildAppOptions {
  /** Passed to the delivery engine: a custom Sender factory and/or retry schedule. */
  delivery?: Pick<DeliveryEngineOptions, 'sender' | 'schedule'>;
}

export function buildApp(services: Services, config: Config, opts: BuildAppOptions = {}): BuiltApp {
  const handlers: Record<ApiName, Record<string, Handler>> = {
    transactions: untyped(transactionsHandlers),
    orders: untyped(ordersHandlers),
    sandbox: untyped(sandboxHandlers),
    management: untyped(managementHandlers),
  };
  const app = createApp(services, {
    handlers,
    validateResponses: config.validateResponses,
    rateLimiter: createRateLimiter({ perSecond: config.rateLimitPerSecond, clock: services.clock }),
    mount: (app) => {
      mountDocs(app, config.docsDir);
      mountPortal(app, services);
    },
  });
  const engine = createDeliveryEngine(services, { retryScale: config.retryScale, ...opts.delivery });
  return {
    app,
    engine,
    async start() {
      engine.start();
    },
    async stop() {
      await engine.stop();
    },
  };
}
