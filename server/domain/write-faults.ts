// Faults a test environment arms for its next write (the sandbox's injectSandboxWriteFault), so
// a client can rehearse the two answers of a real outage: a lost commit (the write is stored,
// then answered 504 outcome-unknown) and an unavailable store (503, nothing written). Kept in
// the serving process's memory, one per environment; the HTTP router applies it (router.ts).
import type { components } from '../../generated/types/sandbox.ts';
import type { AppError } from './errors.ts';
import { outcomeUnknown, storeUnavailable } from './outcomes.ts';

/** What a test environment may arm; `none` disarms. */
export type WriteFault = Exclude<components['schemas']['SandboxWriteFaultKind'], 'none'>;

/** What a faulted write answers, as the real outage's answers do (domain/outcomes.ts). */
export const FAULT_ANSWERS: Readonly<Record<WriteFault, () => AppError>> = {
  'outcome-unknown': () => outcomeUnknown('Sandbox fault: the write was stored, then the answer was lost as if the connection to the data store had dropped at COMMIT'),
  'store-unavailable': () => storeUnavailable('Sandbox fault: the data store is unavailable'),
};

export class WriteFaults {
  readonly #armed = new Map<string, WriteFault>();

  /** Arms `fault` for the next write of the environment, replacing an armed one; `none` disarms. */
  arm(environmentId: string, fault: WriteFault | 'none'): void {
    if (fault === 'none') this.#armed.delete(environmentId);
    else this.#armed.set(environmentId, fault);
  }

  armed(environmentId: string): WriteFault | undefined {
    return this.#armed.get(environmentId);
  }

  /** Disarms the environment's fault: the write that used it is done. */
  used(environmentId: string): void {
    this.#armed.delete(environmentId);
  }
}
