// The stateful mock's pinned endpoint (MOCK_ENDPOINT_URL and MOCK_ENDPOINT_SECRET): the one thing
// the API never lets a caller choose, a signing secret, so that a frontend's receiver keeps its
// secret across restarts. It lives here, not in the domain: a production server has no way to
// set an arbitrary secret. It is built from the domain's own pieces, so what it saves is what
// the API saves: the save-time destination checks, a secret sealed as a created or rotated one
// is, a change of URL or secret as a new version (older versions' pending deliveries disabled).
import { assertSigningSecret } from '../../signing/signature.ts';
import type { Scope, Services } from '../../server/domain/context.ts';
import { checkDestination } from '../../server/domain/destination-check.ts';
import { newEndpointRecord, saveNewVersion } from '../../server/domain/endpoints/endpoints.ts';
import type { EndpointRecord, SignatureScheme } from '../../server/domain/model.ts';

/** What pinEndpoint found and did. */
export interface PinnedEndpoint {
  endpoint: EndpointRecord;
  /**
   * `created`: there was no active endpoint; `kept`: the active one was at the URL with that
   * secret (and scheme); `updated`: the active one at the URL took the secret (a rotation: a
   * new version) or the scheme; `moved`: the active one at another URL (`previousUrl`) took
   * the URL and the secret (a URL edit and a rotation: a new version).
   */
  outcome: 'created' | 'kept' | 'updated' | 'moved';
  previousUrl?: string;
}

export interface PinRequest {
  url: string;
  secret: string;
  /** Absent: a new endpoint's default, a kept one's own; given: saved as a PATCH of the scheme alone. */
  signatureScheme?: SignatureScheme;
  /** The name a refused URL is reported under (400 destination-not-allowed); default `url`. */
  field?: string;
}

/** A sealed secret opened; null when this instance's key cannot open it (then it is replaced). */
function openedOrNull(services: Services, sealed: string): string | null {
  try {
    return services.secrets.open(sealed);
  } catch {
    return null;
  }
}

/** An active endpoint of the environment at `url`, signed with `secret`, created or changed as needed. */
export async function pinEndpoint(services: Services, scope: Scope, input: PinRequest): Promise<PinnedEndpoint> {
  const url = checkDestination(services, input.url, input.field ?? 'url');
  assertSigningSecret(input.secret);
  return services.store.transaction(async (tx) => {
    const now = services.clock.now();
    // The active endpoint at this URL, else the newest active one (an environment may have several).
    const actives = await tx.endpoints.listActive(scope.environmentId);
    const active = actives.find((e) => e.url === url) ?? actives[0] ?? null;
    const scheme = input.signatureScheme === undefined ? {} : { signatureScheme: input.signatureScheme };
    if (!active) {
      const endpoint = newEndpointRecord(services, scope.environmentId, url, input.secret, input.signatureScheme, now);
      await tx.endpoints.insert(endpoint);
      return { endpoint, outcome: 'created' };
    }
    if (active.url !== url) {
      const endpoint = await saveNewVersion(tx, active, { url, secretEnc: services.secrets.seal(input.secret), ...scheme }, now);
      return { endpoint, outcome: 'moved', previousUrl: active.url };
    }
    if (openedOrNull(services, active.secretEnc) !== input.secret) {
      return { endpoint: await saveNewVersion(tx, active, { secretEnc: services.secrets.seal(input.secret), ...scheme }, now), outcome: 'updated' };
    }
    if (input.signatureScheme !== undefined && input.signatureScheme !== active.signatureScheme) {
      const endpoint = { ...active, ...scheme, updatedAt: now };
      await tx.endpoints.update(endpoint);
      return { endpoint, outcome: 'updated' };
    }
    return { endpoint: active, outcome: 'kept' };
  });
}
