// Mutant 5: follows redirects. The injected Sender posts with fetch's default
// `redirect: 'follow'`, so a 302 sends the request on to the Location (as a GET, as fetch does
// for a 302) and its answer is taken as the endpoint's.
// Caught by the sender target's `sender.redirect.not-followed` check.
import { performance } from 'node:perf_hooks';
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import type { SendOutcome } from '../../../server/delivery/sender.ts';

export function build(services: Services, config: Config): BuiltApp {
  return buildApp(services, config, {
    delivery: {
      sender: (opts) => {
        const timeoutMs = opts.timeoutMs ?? 10_000;
        return {
          timeoutMs,
          close: async () => {},
          async send(req): Promise<SendOutcome> {
            const started = performance.now();
            const durationMs = (): number => Math.round(performance.now() - started);
            const signals = [AbortSignal.timeout(timeoutMs), ...(req.signal ? [req.signal] : [])];
            try {
              const res = await fetch(req.url, { method: 'POST', headers: req.headers, body: req.body, redirect: 'follow', signal: AbortSignal.any(signals) });
              const text = (await res.text()).slice(0, 2048);
              return { outcome: 'response', statusCode: res.status, errorClass: null, responseBody: text, success: res.ok, durationMs: durationMs() };
            } catch {
              return { outcome: 'error', statusCode: null, errorClass: 'network_error', responseBody: null, success: false, durationMs: durationMs() };
            }
          },
        };
      },
    },
  });
}
