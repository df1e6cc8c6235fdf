// Staking payouts: a user locks an asset (KRU) for a number of months and earns rewards. The
// transaction is a `credit` whose amount is the staked usdAmount; nothing touches the wallet.
import type { TransactionRecord } from '../model.ts';
import type { Scope, Services } from '../context.ts';
import { AppError } from '../errors.ts';
import { createUnique, refuseDuplicate } from './duplicates.ts';
import { describeType, newTransaction, transactionNotFound } from './records.ts';

export const STAKING_ASSETS = ['KRU'] as const;
export const DEFAULT_STAKING_MONTHS = 3;
const MONTHS = { min: 1, max: 60 };

export interface StakingInput {
  thirdPartyId: string;
  userId: string;
  /** Exact decimal string, at most 2 decimal places. */
  usdAmount: string;
  asset: string;
  durationInMonths?: number;
}

export async function createStakingPayout(services: Services, scope: Scope, input: StakingInput): Promise<TransactionRecord> {
  // The contract's enum and bounds already refuse these; the domain keeps its own rule.
  if (!(STAKING_ASSETS as readonly string[]).includes(input.asset)) {
    throw new AppError('validation-failed', `The request is invalid: /body/asset must be one of: ${STAKING_ASSETS.join(', ')}.`, {
      errors: [{ pointer: '/body/asset', detail: `must be one of: ${STAKING_ASSETS.join(', ')}` }],
    });
  }
  const months = input.durationInMonths ?? DEFAULT_STAKING_MONTHS;
  if (!Number.isInteger(months) || months < MONTHS.min || months > MONTHS.max) {
    throw new AppError('validation-failed', `The request is invalid: /body/durationInMonths must be a whole number from ${MONTHS.min} to ${MONTHS.max}.`, {
      errors: [{ pointer: '/body/durationInMonths', detail: `must be a whole number from ${MONTHS.min} to ${MONTHS.max}` }],
    });
  }

  return createUnique(services, scope, { type: 'staking', thirdPartyId: input.thirdPartyId }, async (tx) => {
    await refuseDuplicate(tx, scope, 'staking', input.thirdPartyId);
    const staking = newTransaction(scope, services.clock.now(), {
      type: 'staking',
      side: 'credit',
      status: 'active',
      amount: input.usdAmount,
      userId: input.userId,
      thirdPartyId: input.thirdPartyId,
      asset: input.asset,
      durationInMonths: months,
    });
    await tx.transactions.insert(staking);
    return staking;
  });
}

function notRevocable(t: TransactionRecord): AppError {
  const detail =
    t.type === 'staking'
      ? `Transaction ${t.id} is a staking payout in status ${t.status}, not active.`
      : `Transaction ${t.id} is ${describeType(t.type)}, not a staking payout.`;
  return new AppError('not-revocable', detail);
}

/** An active staking payout becomes `revoked`, with its completion date. */
export async function revokeStakingPayout(services: Services, scope: Scope, transactionId: string): Promise<TransactionRecord> {
  return services.store.transaction(async (tx) => {
    const staking = await tx.transactions.get(scope.environmentId, transactionId);
    if (!staking) throw transactionNotFound(transactionId);
    if (staking.type !== 'staking' || staking.status !== 'active') throw notRevocable(staking);
    const now = services.clock.now();
    if (!(await tx.transactions.updateStatus(scope.environmentId, staking.id, 'active', 'revoked', now))) {
      throw notRevocable((await tx.transactions.get(scope.environmentId, staking.id)) ?? staking);
    }
    return { ...staking, status: 'revoked', completedAt: now };
  });
}
