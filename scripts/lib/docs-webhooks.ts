// The worked signature example of the webhooks page: the document's first
// order.payment_review_required example, signed by signing/ with the document's own example
// secret (signedExamples checks that the result is the example's documented header), written
// into the description that Redoc renders, just before the delivery rules.
import { EVENT_ID_HEADER, SIGNATURE_HEADER } from '../../signing/signature.ts';
import { signedExamples, type SignedExample } from './signature-vectors.ts';

const WORKED_MESSAGE = 'order.payment_review_required';
const INSERT_BEFORE = '\n### Delivery\n';

export function workedExampleMarkdown(ex: SignedExample): string {
  const message = `${ex.timestamp}.${ex.body}`;
  const v1 = ex.signature.slice(ex.signature.indexOf('v1=') + 3);
  return [
    '### Worked example',
    `Reproduce the signature of the \`${ex.message}\` example \`${ex.example}\` (below) with any HMAC-SHA256 implementation. ` +
      'The values are computed by `npm run docs` with the service\'s own signing code.',
    '',
    `1. Secret: \`${ex.secret}\` (the documentation-only secret; the HMAC key is this whole string as UTF-8 bytes).`,
    `2. \`t\` from the \`${SIGNATURE_HEADER}\` header: \`${ex.timestamp}\`.`,
    '3. Body: the exact bytes received (here the compact JSON of the example):',
    '',
    '```json',
    ex.body,
    '```',
    '',
    `4. Signed message: \`t\`, a period, then the body: \`${ex.timestamp}.{"id":"${ex.eventId.slice(0, 8)}…\`.`,
    `5. Expected \`v1\`, the lowercase hex HMAC-SHA256 of the message: \`${v1}\`, so the request carries`,
    `   \`${SIGNATURE_HEADER}: ${ex.signature}\` and \`${EVENT_ID_HEADER}: ${ex.eventId}\`.`,
    '',
    'On a shell:',
    '',
    '```sh',
    `printf '%s' '${message}' | openssl dgst -sha256 -hmac '${ex.secret}'`,
    `# SHA2-256(stdin)= ${v1}`,
    '```',
    '',
    'The package `payments-webhooks` ships these examples and every way of breaking them as test vectors (`payments-webhooks/signature-vectors.json`).',
    '',
  ].join('\n');
}

/** The bundled AsyncAPI document with the worked example in `info.description`. */
export async function webhooksWithWorkedExample(bundled: Record<string, unknown>, specFile: string): Promise<Record<string, unknown>> {
  const examples = await signedExamples(specFile);
  const worked = examples.find((e) => e.message === WORKED_MESSAGE) ?? examples[0];
  if (!worked) throw new Error('the webhooks document has no message example to work through');
  const info = bundled.info as { description?: string };
  const description = info.description ?? '';
  const at = description.indexOf(INSERT_BEFORE);
  const section = workedExampleMarkdown(worked);
  const withExample = at === -1 ? `${description}\n${section}` : `${description.slice(0, at + 1)}${section}${description.slice(at)}`;
  return { ...bundled, info: { ...info, description: withExample } };
}
