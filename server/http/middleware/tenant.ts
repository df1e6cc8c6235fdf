// An `x-tenant-id` header, when sent, must name the credentials' own tenant (403 tenant-mismatch).
import { AppError } from '../../domain/errors.ts';
import { asMiddleware, type Step } from './step.ts';

export const tenantCheck = () => asMiddleware(tenantCheckStep());

export function tenantCheckStep(): Step {
  return (c) => {
    const tenantHeader = c.req.header('x-tenant-id');
    if (tenantHeader !== undefined && tenantHeader !== c.get('principal').tenantId) {
      throw new AppError('tenant-mismatch', 'The x-tenant-id header names another tenant than the credentials.');
    }
  };
}
