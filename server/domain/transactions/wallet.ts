// The distribution wallet of a tenant environment, as the sandbox reads and funds it.
import type { EnvironmentName } from '../model.ts';
import type { Scope, Services } from '../context.ts';
import { requireTestEnvironment } from './records.ts';

export interface Wallet {
  environment: EnvironmentName;
  /** Exact decimal string. */
  balance: string;
}

export async function getWallet(services: Services, scope: Scope): Promise<Wallet> {
  requireTestEnvironment(scope);
  const env = await services.store.read((tx) => tx.tenants.getEnvironment(scope.environmentId));
  if (!env) throw new Error(`environment ${scope.environmentId} not found`);
  return { environment: env.name, balance: env.walletBalance };
}

/** Adds an exact positive amount to the test wallet; answers the new balance. */
export async function fundWallet(services: Services, scope: Scope, amount: string): Promise<Wallet> {
  requireTestEnvironment(scope);
  const balance = await services.store.transaction((tx) => tx.tenants.adjustWallet(scope.environmentId, amount));
  if (balance === null) throw new Error(`wallet of ${scope.environmentId} refused funding`);
  return { environment: scope.environment, balance };
}
