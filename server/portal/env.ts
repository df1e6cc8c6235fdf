// Variables of a portal request: the app's (request id) and, behind the session guard, the viewer.
import type { AppEnv } from '../http/app-env.ts';
import type { Viewer } from './session.ts';

export interface PortalEnv {
  Variables: AppEnv['Variables'] & { viewer: Viewer };
}
