// Mutant 4: signs webhooks with the wrong string: HMAC-SHA256 over the raw body alone instead
// of `<t>.<raw body>` (the header keeps its form t=...,v1=...).
// Seam: an injected Sender that re-signs each request. It learns the secret the way the
// delivery worker hands it over: the worker opens the endpoint's sealed secret and sends in the
// same synchronous step (server/delivery/worker/attempt.ts), so a SecretBox that remembers
// the last secret it opened gives the Sender exactly the secret of the request at hand.
// Caught by the sender target's `sender.<message>.signature` checks.
import { createHmac } from 'node:crypto';
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import type { SecretBox } from '../../../server/domain/secrets.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import { createSender } from '../../../server/delivery/sender.ts';
import { SIGNATURE_HEADER } from '../../../signing/signature.ts';

export function build(services: Services, config: Config): BuiltApp {
  let lastOpened: string | null = null;
  const secrets: SecretBox = {
    seal: (plain) => services.secrets.seal(plain),
    open: (sealed) => (lastOpened = services.secrets.open(sealed)),
  };
  return buildApp({ ...services, secrets }, config, {
    delivery: {
      sender: (opts) => {
        const real = createSender(opts);
        return {
          timeoutMs: real.timeoutMs,
          close: () => real.close(),
          send: (req) => {
            const secret = lastOpened;
            const name = Object.keys(req.headers).find((h) => h.toLowerCase() === SIGNATURE_HEADER.toLowerCase());
            const t = name ? /^t=([0-9]+),/.exec(req.headers[name] ?? '')?.[1] : undefined;
            if (secret === null || name === undefined || t === undefined) return real.send(req);
            const v1 = createHmac('sha256', Buffer.from(secret, 'utf8')).update(Buffer.from(req.body, 'utf8')).digest('hex'); // the defect: no `<t>.`
            return real.send({ ...req, headers: { ...req.headers, [name]: `t=${t},v1=${v1}` } });
          },
        };
      },
    },
  });
}
