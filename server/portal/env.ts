// Variables of a portal request: the app's (request id) and, behind the session guard, the viewer.
import type { AppEnv } from '../http/app-env.ts';
import type { PasskeyFlows } from './passkeys/flows.ts';
import type { Viewer } from './session.ts';
import type { PortalSettings } from './settings.ts';

/** What every portal route may use besides the services: its settings and the passkey flows. */
export interface PortalDeps {
  settings: PortalSettings;
  passkeys: PasskeyFlows;
}

export interface PortalEnv {
  Variables: AppEnv['Variables'] & { viewer: Viewer; portal: PortalDeps };
}
