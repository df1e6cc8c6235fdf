// Sandbox operations move test money only: credentials of the live environment get 403.
import { AppError } from '../../domain/errors.ts';
import { asMiddleware, type Step } from './step.ts';

export const testEnvironmentOnly = () => asMiddleware(testEnvironmentOnlyStep());

export function testEnvironmentOnlyStep(): Step {
  return (c) => {
    if (c.get('principal').environment !== 'test') {
      throw new AppError('live-key-not-allowed', 'Sandbox operations accept only credentials of the test environment.');
    }
  };
}
