// The seam of the delivery mutants: the real app with an injected Sender that wraps the real
// one, and the signing secret of the request at hand. The delivery worker opens each sealed
// secret once and keeps it, so the seam remembers every secret its SecretBox opened and picks
// the one whose signature the request carries.
import { createHmac } from 'node:crypto';
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import type { SecretBox } from '../../../server/domain/secrets.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import { createSender } from '../../../server/delivery/sender.ts';
import type { SendOutcome, SendRequest } from '../../../server/delivery/sender.ts';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, standardSignature } from '../../../signing/signature.ts';

export type Send = (req: SendRequest) => Promise<SendOutcome>;

export function withSender(services: Services, config: Config, wrap: (real: Send, secret: (req: SendRequest) => string | null) => Send): BuiltApp {
  const opened = new Set<string>();
  const secrets: SecretBox = {
    seal: (plain) => services.secrets.seal(plain),
    open: (sealed) => {
      const plain = services.secrets.open(sealed);
      opened.add(plain);
      return plain;
    },
  };
  const secretOf = (req: SendRequest): string | null => {
    const name = headerName(req, SIGNATURE_HEADER);
    const m = name === undefined ? null : /^t=(\d+),v1=([0-9a-f]{64})$/.exec(req.headers[name] ?? '');
    if (!m) return standardSecretOf(req, opened);
    for (const secret of opened) {
      const v1 = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${m[1]}.${req.body}`, 'utf8').digest('hex');
      if (v1 === m[2]) return secret;
    }
    return null;
  };
  return buildApp({ ...services, secrets }, config, {
    delivery: {
      sender: (opts) => {
        const real = createSender(opts);
        const send = wrap((req) => real.send(req), secretOf);
        return { timeoutMs: real.timeoutMs, close: () => real.close(), send: (req) => send(req) };
      },
    },
  });
}

/** The secret whose Standard Webhooks signature `req` carries (a request without Service-Signature). */
function standardSecretOf(req: SendRequest, opened: Set<string>): string | null {
  const [id, t, signature] = ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => req.headers[headerName(req, h) ?? h]);
  if (id === undefined || t === undefined || signature === undefined) return null;
  const entries = signature.split(' ');
  for (const secret of opened) if (entries.includes(standardSignature(secret, id, Number(t), req.body))) return secret;
  return null;
}

/** The name under which `req` carries `header` (any case). */
export function headerName(req: SendRequest, header: string): string | undefined {
  return Object.keys(req.headers).find((h) => h.toLowerCase() === header.toLowerCase());
}

export function eventIdOf(req: SendRequest): string | undefined {
  const name = headerName(req, EVENT_ID_HEADER);
  return name === undefined ? undefined : req.headers[name];
}

/** `req` with another body (and event id), signed correctly with `secret` and a fresh t. */
export function resigned(req: SendRequest, secret: string, body: string, eventId?: string): SendRequest {
  const t = Math.floor(Date.now() / 1000);
  const v1 = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${t}.${body}`, 'utf8').digest('hex');
  const headers = { ...req.headers };
  // Each header set the request carries is signed anew (a `standard-webhooks` endpoint has no Service-* set).
  const service = headerName(req, SIGNATURE_HEADER) !== undefined || headerName(req, 'webhook-signature') === undefined;
  if (service) headers[headerName(req, SIGNATURE_HEADER) ?? SIGNATURE_HEADER] = `t=${t},v1=${v1}`;
  if (service && eventId !== undefined) headers[headerName(req, EVENT_ID_HEADER) ?? EVENT_ID_HEADER] = eventId;
  const standard = headerName(req, 'webhook-signature');
  if (standard !== undefined) {
    const id = eventId ?? req.headers[headerName(req, 'webhook-id') ?? 'webhook-id'] ?? '';
    headers[headerName(req, 'webhook-id') ?? 'webhook-id'] = id;
    headers[headerName(req, 'webhook-timestamp') ?? 'webhook-timestamp'] = String(t);
    headers[standard] = standardSignature(secret, id, t, body);
  }
  return { ...req, body, headers };
}
