// A certification run must be repeatable on the same credentials (issue 67): the payouts a run
// creates deduct their amounts from the sandbox wallet, so each run reads the balance before
// its first check and, when it ends, funds back through the sandbox
// (`POST /sandbox/wallet/fund`) exactly what it spent. A run that funded more than it spent
// (the fund operation's own check adds to the wallet) leaves the surplus in place.
import type { ApiClient, Auth } from './openapi/client.ts';
import type { ApiOperation } from './openapi/contract.ts';

export const WALLET_NOTE = 'the sandbox wallet is funded back at the end by what the run spends (POST /sandbox/wallet/fund), so the run can be repeated';

const SCALE = 8;
const UNIT = 10n ** BigInt(SCALE);

/** A decimal string (at most 8 places, as `Decimal` is) in units of 1e-8; null when it is not one. */
export function toUnits(value: unknown): bigint | null {
  const m = typeof value === 'string' || typeof value === 'number' ? /^(-?)(\d+)(?:\.(\d{1,8}))?$/.exec(String(value)) : null;
  if (!m) return null;
  const units = BigInt(m[2]!) * UNIT + BigInt((m[3] ?? '').padEnd(SCALE, '0'));
  return m[1] === '-' ? -units : units;
}

/**
 * The JSON number literals that fund `units` (> 0): the whole part and the fraction apart, so
 * each keeps within an `Amount`'s significant digits and none is written in exponent form.
 */
export function fundingLiterals(units: bigint): string[] {
  const whole = units / UNIT;
  const fraction = units % UNIT;
  const literals: string[] = [];
  if (whole > 0n) literals.push(whole.toString());
  if (fraction > 0n) literals.push(`0.${fraction.toString().padStart(SCALE, '0').replace(/0+$/, '')}`);
  return literals;
}

export interface WalletKeeperOptions {
  client: ApiClient;
  operations: readonly ApiOperation[];
  auth: Auth;
}

/** What a run spends of the sandbox wallet, funded back when it ends. */
export class WalletKeeper {
  readonly #o: WalletKeeperOptions;
  readonly #read: ApiOperation | undefined;
  readonly #fund: ApiOperation | undefined;
  #before: bigint | null = null;

  constructor(opts: WalletKeeperOptions) {
    this.#o = opts;
    this.#read = opts.operations.find((op) => op.spec.operationId === 'getSandboxWallet');
    this.#fund = opts.operations.find((op) => op.spec.operationId === 'fundSandboxWallet');
  }

  /** Reads the balance the run starts with; false when the implementation has no readable sandbox wallet. */
  async start(): Promise<boolean> {
    this.#before = await this.#balance('the wallet balance before the run');
    return this.#before !== null;
  }

  /** Funds back what the run spent since start(); returns the units funded (0n: nothing to fund). */
  async restore(): Promise<bigint> {
    if (this.#before === null || !this.#fund) return 0n;
    const after = await this.#balance('the wallet balance after the run');
    if (after === null || after >= this.#before) return 0n;
    let funded = 0n;
    for (const literal of fundingLiterals(this.#before - after)) {
      const res = await this.#o.client.call(this.#fund, {
        auth: this.#o.auth,
        rawBody: { contentType: 'application/json', bytes: Buffer.from(`{"amount":${literal}}`, 'utf8') },
        label: `fund back ${literal} the run spent`,
      });
      if (res.status !== 200) break;
      funded += toUnits(literal) ?? 0n;
    }
    return funded;
  }

  async #balance(label: string): Promise<bigint | null> {
    if (!this.#read) return null;
    const res = await this.#o.client.call(this.#read, { auth: this.#o.auth, label });
    if (res.status !== 200 || typeof res.json !== 'object' || res.json === null) return null;
    return toUnits((res.json as { balance?: unknown }).balance);
  }
}
