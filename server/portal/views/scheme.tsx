// The endpoint's signature scheme as the portal shows and chooses it (Add webhook, the endpoint card).
import { webhookSignatureSchemeValues } from '../../../generated/types/management.ts';
import type { SignatureScheme } from '../../domain/model.ts';

/** What each signature scheme sends, in the words of the AsyncAPI document's "Signature schemes". */
export const SCHEME_LABELS: Record<SignatureScheme, string> = {
  'service-signature': 'Service-Signature (Service-Event-Id, Service-Signature)',
  'standard-webhooks': 'Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature)',
  both: 'Both header sets (to move a receiver from one to the other)',
};

/** The endpoint's signature scheme, one of the contract's values. */
export function SchemeField(props: { value: SignatureScheme }) {
  return (
    <div class="field">
      <label for="signatureScheme">Signature scheme</label>
      <select id="signatureScheme" name="signatureScheme" data-testid="signature-scheme">
        {webhookSignatureSchemeValues.map((v) => (
          <option value={v} selected={v === props.value}>
            {SCHEME_LABELS[v]}
          </option>
        ))}
      </select>
      <p class="field__hint">
        Standard Webhooks is verified by any of its official libraries with the secret shown once; both sends the two header sets on every attempt.
      </p>
    </div>
  );
}
