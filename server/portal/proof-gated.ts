// The one list of the portal's sensitive changes: every route that changes where or how events
// are delivered, sends past events again (Recover, and the retry of one delivery, which re-sends
// its event just as Recover does), or changes who can sign in. Each runs behind proofGate
// (proof.tsx): it needs a proof of presence (a passkey or the member token) no older than
// PORTAL_REVERIFY_AFTER. The routes are registered from this list (proof.tsx, gated), and the
// portal refuses to start when a gate and the list disagree (checkProofGates).
// docs/operations.md ("Proof-gated routes") shows this table, and proof-gated.test.ts checks both
// that the document lists exactly these routes and that each one asks for the proof.

export interface ProofGatedRoute {
  method: 'POST';
  /** The path as registered under /portal (Hono's `:param` syntax). */
  path: string;
  /** What the member is about to do, as the "Confirm it is you" page says it. */
  change: string;
  /**
   * `page`: a stale session gets the "Confirm it is you" page, which carries the form's fields
   * and posts them back with the proof. `refuse`: a step inside a flow whose first step asked
   * already (the passkey ceremony), refused as stale without taking a proof.
   */
  asks: 'page' | 'refuse';
  /** Who may ask at all (checked before the proof): `manager`, an administrator or developer; `member`, any signed-in member. */
  who: 'manager' | 'member';
}

export const PROOF_GATED_ROUTES: readonly ProofGatedRoute[] = [
  { method: 'POST', path: '/portal/webhooks/endpoints', change: 'add a webhook endpoint', asks: 'page', who: 'manager' },
  { method: 'POST', path: '/portal/webhooks/endpoints/:endpointId/edit', change: 'change the endpoint URL', asks: 'page', who: 'manager' },
  { method: 'POST', path: '/portal/webhooks/endpoints/:endpointId/scheme', change: 'change the signature scheme', asks: 'page', who: 'manager' },
  { method: 'POST', path: '/portal/webhooks/endpoints/:endpointId/rotate', change: 'rotate the signing secret', asks: 'page', who: 'manager' },
  { method: 'POST', path: '/portal/webhooks/endpoints/:endpointId/disable', change: 'disable the endpoint', asks: 'page', who: 'manager' },
  { method: 'POST', path: '/portal/webhooks/endpoints/:endpointId/recover', change: 'recover failed deliveries to the endpoint', asks: 'page', who: 'manager' },
  { method: 'POST', path: '/portal/webhooks/deliveries/:deliveryId/retry', change: 'retry the delivery', asks: 'page', who: 'manager' },
  { method: 'POST', path: '/portal/account/passkeys/add', change: 'add a passkey', asks: 'page', who: 'member' },
  { method: 'POST', path: '/portal/api/passkeys/registration-options', change: 'add a passkey (the ceremony starts)', asks: 'refuse', who: 'member' },
  { method: 'POST', path: '/portal/account/passkeys', change: 'add a passkey (the new passkey is stored)', asks: 'refuse', who: 'member' },
  { method: 'POST', path: '/portal/account/passkeys/:passkeyId/remove', change: 'remove a passkey', asks: 'page', who: 'member' },
];

/** The table entry of a path registered under /portal; throws when a route asks for a gate the table does not list. */
export function gatedRoute(path: string): ProofGatedRoute {
  const route = PROOF_GATED_ROUTES.find((r) => r.path === `/portal${path}`);
  if (!route) throw new Error(`${path} is not in PROOF_GATED_ROUTES (server/portal/proof-gated.ts)`);
  return route;
}
