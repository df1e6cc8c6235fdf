// Faults a test environment arms for its next write (the sandbox's injectSandboxWriteFault), so
// a client can rehearse the two answers of a real outage: a lost commit (the write is stored,
// then answered 504 outcome-unknown) and an unavailable store (503, nothing written). Kept in
// the serving process's memory, one per environment; the HTTP router applies it (router.ts).
import type { components } from '../../generated/types/sandbox.ts';
import { PERMISSIONS } from '../../generated/vocabulary.ts';
import { AppError } from './errors.ts';
import type { Permission, Principal } from './model.ts';
import { outcomeUnknown, storeUnavailable } from './outcomes.ts';

/** What a test environment may arm; `none` disarms. */
export type WriteFault = Exclude<components['schemas']['SandboxWriteFaultKind'], 'none'>;

/** What a faulted write answers, as the real outage's answers do (domain/outcomes.ts). */
export const FAULT_ANSWERS: Readonly<Record<WriteFault, () => AppError>> = {
  'outcome-unknown': () => outcomeUnknown('Sandbox fault: the write was stored, then the answer was lost as if the connection to the data store had dropped at COMMIT'),
  'store-unavailable': () => storeUnavailable('Sandbox fault: the data store is unavailable'),
};

/** The permissions that let a key write something (every one but the `_read` ones). */
export const WRITE_PERMISSIONS: readonly Permission[] = PERMISSIONS.filter((p) => !p.endsWith('_read'));

/** Arming a fault decides what the environment's next write answers: a read-only key may not. */
export function refuseUnlessWriter(principal: Principal): void {
  if (principal.kind === 'api_key' && !WRITE_PERMISSIONS.some((p) => principal.permissions.has(p))) {
    throw new AppError('permission-denied', `Arming a write fault needs a key with a write permission (${WRITE_PERMISSIONS.join(', ')}); this key may only read.`);
  }
}

export class WriteFaults {
  readonly #armed = new Map<string, WriteFault>();

  /** Arms `fault` for the next write of the environment, replacing an armed one; `none` disarms. */
  arm(environmentId: string, fault: WriteFault | 'none'): void {
    if (fault === 'none') this.#armed.delete(environmentId);
    else this.#armed.set(environmentId, fault);
  }

  /**
   * Takes the environment's fault for the write that starts now: read and disarmed in one step,
   * so of two writes that start together exactly one has it.
   */
  take(environmentId: string): WriteFault | undefined {
    const fault = this.#armed.get(environmentId);
    this.#armed.delete(environmentId);
    return fault;
  }

  /** Gives a taken fault back (its write was refused before anything was stored), unless another was armed meanwhile. */
  giveBack(environmentId: string, fault: WriteFault): void {
    if (!this.#armed.has(environmentId)) this.#armed.set(environmentId, fault);
  }
}
