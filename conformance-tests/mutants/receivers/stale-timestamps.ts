// Mutant: verifies the signature, but with an effectively infinite timestamp tolerance, so a
// captured request can be replayed at any time.
import { verifyWebhook } from '../../../client/webhooks/verify.ts';
import { isWebhookVerificationError } from '../../../signing/errors.ts';
import { listen, reply } from './serve.ts';
import type { MutantOptions, RunningReceiver } from './serve.ts';

export function startStaleTimestamps(opts: MutantOptions): Promise<RunningReceiver> {
  return listen((req, rawBody, res) => {
    try {
      verifyWebhook({ rawBody, headers: req.headers, secrets: opts.secrets, toleranceSeconds: Number.MAX_SAFE_INTEGER }); // the bug
    } catch (err) {
      if (isWebhookVerificationError(err)) return reply(res, 400, { error: err.code });
      throw err;
    }
    reply(res, 200, { received: true });
  });
}
