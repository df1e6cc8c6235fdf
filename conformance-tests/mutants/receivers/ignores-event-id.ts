// Mutant: verifies the signature and the timestamp, but never compares Service-Event-Id with
// the body's id (it trusts the body and dedupes by its id).
import { verifyWebhook } from '../../../client/webhooks/verify.ts';
import { isWebhookVerificationError } from '../../../signing/errors.ts';
import { listen, reply } from './serve.ts';
import type { MutantOptions, RunningReceiver } from './serve.ts';

export function startIgnoresEventId(opts: MutantOptions): Promise<RunningReceiver> {
  return listen((req, rawBody, res) => {
    // The bug: the header is replaced by the body's id before verifying, so rule 7 never fails.
    let bodyId: unknown;
    try {
      bodyId = (JSON.parse(rawBody.toString('utf8')) as { id?: unknown }).id;
    } catch {
      bodyId = undefined;
    }
    const headers = { ...req.headers };
    if (typeof bodyId === 'string') headers['service-event-id'] = bodyId;
    try {
      verifyWebhook({ rawBody, headers, secrets: opts.secrets });
    } catch (err) {
      if (isWebhookVerificationError(err)) return reply(res, 400, { error: err.code });
      throw err;
    }
    reply(res, 200, { received: true });
  });
}
