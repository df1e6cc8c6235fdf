// Structured JSON logs. Credentials are redacted wherever they could appear.
import { pino, type Logger } from 'pino';

export const REDACT_PATHS = [
  'apiHash',
  'secret',
  'memberToken',
  'callbackSecret',
  '*.apiHash',
  '*.secret',
  '*.secretEnc',
  '*.memberToken',
  '*.callbackSecret',
  '*.callbackSecretEnc',
  'headers.authorization',
  'headers["x-api-hash"]',
  '*.headers.authorization',
  '*.headers["x-api-hash"]',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { service: 'payments' } }, destination);
}
