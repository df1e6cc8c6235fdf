// The endpoint's rate cap (maxPerSecond) as the portal shows and sets it (Add webhook, the endpoint card).
import { MAX_PER_SECOND } from '../../../generated/vocabulary.ts';

/** The cap a form asks for: undefined when left empty (no cap; on the card, the cap removed), 'invalid' outside the contract's limits. */
export function rateOf(value: string | undefined): number | undefined | 'invalid' {
  const v = (value ?? '').trim();
  if (v === '') return undefined;
  const n = /^\d+$/.test(v) ? Number(v) : NaN;
  return n >= MAX_PER_SECOND.min && n <= MAX_PER_SECOND.max ? n : 'invalid';
}

export const RATE_INVALID = `Enter a whole number of attempts a second from ${MAX_PER_SECOND.min} to ${MAX_PER_SECOND.max}, or leave it empty for no cap.`;

export const rateLabel = (cap: number | null): string => (cap === null ? 'No cap' : `At most ${cap} a second`);

/** The optional rate cap field. */
export function RateField(props: { value: number | null }) {
  return (
    <div class="field">
      <label for="maxPerSecond">Most attempts a second</label>
      <input
        id="maxPerSecond"
        name="maxPerSecond"
        type="number"
        inputmode="numeric"
        min={String(MAX_PER_SECOND.min)}
        max={String(MAX_PER_SECOND.max)}
        value={props.value === null ? '' : String(props.value)}
        data-testid="max-per-second"
      />
      <p class="field__hint">Deliveries over the cap wait their turn; none is dropped. Leave empty for no cap (on an endpoint, empty it to remove its cap).</p>
    </div>
  );
}
