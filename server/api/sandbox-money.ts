// Handlers of spec/sandbox.openapi.yaml that move money: the test wallet, unlinked payments
// and payout settlement (sandbox-orders.ts holds the order operations).
import type { components, operations } from '../../generated/types/sandbox.ts';
import { AMOUNT_RULE } from '../../generated/vocabulary.ts';
import { exactAmount } from '../domain/transactions/amounts.ts';
import { createUnlinkedPayment } from '../domain/transactions/payments.ts';
import { settlePayout } from '../domain/transactions/settle.ts';
import { fundWallet, getWallet, type Wallet } from '../domain/transactions/wallet.ts';
import type { HandlersFor } from '../http/handler-types.ts';
import { presentTransaction } from './present/transactions.ts';

type SandboxWalletBody = components['schemas']['SandboxWallet'];

function presentWallet(w: Wallet): SandboxWalletBody {
  // The router refuses live keys on the sandbox and the domain checks again.
  if (w.environment !== 'test') throw new Error('the sandbox wallet is the test wallet');
  return { environment: 'test', balance: w.balance };
}

export const sandboxMoneyHandlers: Partial<HandlersFor<operations>> = {
  async getSandboxWallet(_input, { services, scope }) {
    return { status: 200, body: presentWallet(await getWallet(services, scope)) };
  },

  async fundSandboxWallet({ body }, { services, scope }) {
    const wallet = await fundWallet(services, scope, exactAmount(body.amount, AMOUNT_RULE, '/body/amount'));
    return { status: 200, body: presentWallet(wallet) };
  },

  async createSandboxPayment({ body }, { services, scope }) {
    const payment = await createUnlinkedPayment(services, scope, {
      userId: body.userId,
      amount: exactAmount(body.amount, AMOUNT_RULE, '/body/amount'),
      txHash: body.txHash,
    });
    return { status: 201, body: presentTransaction(payment) };
  },

  async settleSandboxPayout({ path, body }, { services, scope }) {
    const payout = await settlePayout(services, scope, { transactionId: path.transactionId, status: body.status });
    return { status: 200, body: presentTransaction(payout) };
  },
};
