// Mutant: verifies everything, but answers 500 when an event id was already processed, so
// the service would retry a delivered event until the cycle fails.
import { verifyWebhook } from '../../../client/webhooks/verify.ts';
import { isWebhookVerificationError } from '../../../signing/errors.ts';
import { listen, reply } from './serve.ts';
import type { MutantOptions, RunningReceiver } from './serve.ts';

export function startFailsDuplicates(opts: MutantOptions): Promise<RunningReceiver> {
  const processed = new Set<string>();
  return listen((req, rawBody, res) => {
    let eventId: string;
    try {
      ({ eventId } = verifyWebhook({ rawBody, headers: req.headers, secrets: opts.secrets }));
    } catch (err) {
      if (isWebhookVerificationError(err)) return reply(res, 400, { error: err.code });
      throw err;
    }
    if (processed.has(eventId)) return reply(res, 500, { error: 'event already processed' }); // the bug
    processed.add(eventId);
    reply(res, 200, { received: true });
  });
}
