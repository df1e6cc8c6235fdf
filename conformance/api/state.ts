// The state the api target's checks need, created through the implementation's own API and
// sandbox: payouts, staking payouts, orders, deposits, unlinked payments, a webhook endpoint,
// a test delivery. Shared fixtures are created once per run (lazily); checks that consume
// state (revoke, settle, refund, cancel) get fresh ones. A fixture that cannot be created
// makes the checks that need it skip, with the reason and the exchange that failed: the
// failure itself is reported by the creating operation's own check.
import type { Exchange } from '../core/check.ts';
import { describeStatus } from '../core/http.ts';
import { subSeed } from '../core/seed.ts';
import type { ApiClient, ApiResponse, Auth, KeyCredentials } from '../core/openapi/client.ts';
import type { ApiOperation } from '../core/openapi/contract.ts';
import { exampleRequest } from '../core/openapi/requests.ts';
import type { RequestParts } from '../core/openapi/requests.ts';
import { isObj } from '../core/openapi/schema.ts';
import { describeAnswer } from '../core/openapi/answer.ts';
import { routeMissing } from './verdict.ts';

/** Why a check cannot run: a fixture could not be created, or an option or feature is missing. */
export class Unavailable extends Error {
  override readonly name = 'Unavailable';
  constructor(
    message: string,
    readonly exchanges: Exchange[] = [],
  ) {
    super(message);
  }
}

export interface StateOptions {
  client: ApiClient;
  operations: readonly ApiOperation[];
  creds: KeyCredentials;
  memberToken?: string;
  refundEmail?: string;
  webhookUrl?: string;
  seed: number;
  /**
   * Distinct for every run (the run's start time): the fresh identifiers (thirdPartyId, txHash,
   * ...) are drawn from the seed and it, so a run repeated with the same seed on the same
   * credentials creates new records instead of colliding with the last run's.
   */
  runNonce: string;
  /** Mocks: nothing is created; requests are built from the documented examples only. */
  skipStateful: boolean;
}

type Json = Record<string, unknown>;

const is2xx = (res: ApiResponse): boolean => res.status !== null && res.status >= 200 && res.status < 300;

export interface Created {
  json: Json;
  request: RequestParts;
  res: ApiResponse;
}

export class ApiState {
  readonly #o: StateOptions;
  readonly #ops: Map<string, ApiOperation>;
  readonly #memo = new Map<string, Promise<unknown>>();
  #counter = 0;

  constructor(opts: StateOptions) {
    this.#o = opts;
    this.#ops = new Map(opts.operations.map((op) => [op.spec.operationId, op]));
  }

  get options(): StateOptions {
    return this.#o;
  }

  op(operationId: string): ApiOperation {
    const op = this.#ops.get(operationId);
    if (!op) throw new Unavailable(`the contract has no operation ${operationId}`);
    return op;
  }

  hasOp(operationId: string): boolean {
    return this.#ops.has(operationId);
  }

  keyAuth(): Auth {
    return { kind: 'key', apiKey: this.#o.creds.apiKey, apiHash: this.#o.creds.apiHash };
  }

  /** The credentials a check uses for `op`: the member token or a key with webhooks_manage for management. */
  async authFor(op: ApiOperation): Promise<Auth> {
    return op.api === 'management' ? this.managementAuth() : this.keyAuth();
  }

  /** A valid request of `op` from its examples, with identifiers drawn from the seed and `label`. */
  exampleRequest(op: ApiOperation, label: string): RequestParts {
    return exampleRequest(op, { seed: subSeed(this.#o.seed, `${this.#o.runNonce}/${op.spec.operationId}/${label}`), tenantId: this.#o.creds.tenantId });
  }

  /** Sends `op` and expects a documented success; anything else makes the caller unavailable. */
  async create(operationId: string, label: string, change: (parts: RequestParts) => RequestParts = (p) => p, auth?: Auth): Promise<Created> {
    const op = this.op(operationId);
    const request = change(this.exampleRequest(op, `${label}#${++this.#counter}`));
    const res = await this.#o.client.call(op, { auth: auth ?? (await this.authFor(op)), ...request, label: `${operationId} (${label})` });
    // Any 2xx with a JSON object makes the state; whether it is the documented status is the
    // operation's own `succeeds` check to say.
    if (!is2xx(res) || !isObj(res.json)) {
      const why = res.status === null ? describeStatus(res.exchange.response) : describeAnswer(res);
      const missing = routeMissing(res);
      throw new Unavailable(`could not ${label}: ${op.spec.method.toUpperCase()} ${op.spec.path} answered ${missing ?? why}`, [res.exchange]);
    }
    return { json: res.json, request, res };
  }

  #once<T>(key: string, make: () => Promise<T>): Promise<T> {
    let p = this.#memo.get(key) as Promise<T> | undefined;
    if (!p) {
      p = make();
      this.#memo.set(key, p);
    }
    return p;
  }

  // ---- capabilities ------------------------------------------------------------------------

  /** Credentials for management operations: the member token, else the key when it has webhooks_manage. */
  managementAuth(): Promise<Auth> {
    return this.#once('management-auth', async () => {
      if (this.#o.memberToken) return { kind: 'bearer', token: this.#o.memberToken } as Auth;
      if (this.#o.skipStateful) return this.keyAuth();
      const op = this.op('listWebhookEndpoints');
      const res = await this.#o.client.call(op, { auth: this.keyAuth(), label: 'does the API key have webhooks_manage?' });
      if (is2xx(res)) return this.keyAuth();
      throw new Unavailable(
        `management operations need --member-token or an API key with webhooks_manage (the key was answered ${describeAnswer(res)})`,
        [res.exchange],
      );
    });
  }

  /** Resolves when the sandbox answers; otherwise the checks that need it skip. */
  sandbox(): Promise<void> {
    return this.#once('sandbox', async () => {
      if (this.#o.skipStateful) throw new Unavailable('--skip-stateful: no state is created');
      const op = this.op('getSandboxWallet');
      const res = await this.#o.client.call(op, { auth: this.keyAuth(), label: 'is the sandbox available?' });
      if (is2xx(res)) return;
      throw new Unavailable(`the sandbox is not available (GET /sandbox/wallet answered ${describeAnswer(res)}); this needs it`, [res.exchange]);
    });
  }

  stateful(): void {
    if (this.#o.skipStateful) throw new Unavailable('--skip-stateful: no state is created');
  }

  // ---- fixtures ----------------------------------------------------------------------------

  /** A pending payout (no notifyUrl). */
  payout(fresh: boolean): Promise<{ transactionId: string; thirdPartyId: string; userId: string; amount: unknown }> {
    const make = async () => {
      this.stateful();
      const c = await this.create('createPayout', 'create a payout');
      const body = c.request.body as Json;
      return { transactionId: String(c.json.transactionId), thirdPartyId: String(c.json.thirdPartyId), userId: String(body.userId), amount: body.amount };
    };
    return fresh ? make() : this.#once('payout', make);
  }

  /** An active staking payout. */
  staking(fresh: boolean): Promise<{ transactionId: string; userId: string }> {
    const make = async () => {
      this.stateful();
      const c = await this.create('createStakingPayout', 'create a staking payout');
      return { transactionId: String(c.json.transactionId), userId: String((c.request.body as Json).userId) };
    };
    return fresh ? make() : this.#once('staking', make);
  }

  /** An open order. */
  order(fresh: boolean): Promise<{ orderId: string; orderNumber: string; amountBaseUnits?: string }> {
    const make = async () => {
      this.stateful();
      const c = await this.create('createOrder', 'create an order');
      return {
        orderId: String(c.json.orderId),
        orderNumber: String(c.json.orderNumber),
        ...(typeof c.json.amountBaseUnits === 'string' ? { amountBaseUnits: c.json.amountBaseUnits } : {}),
      };
    };
    return fresh ? make() : this.#once('order', make);
  }

  /** An order with one verified deposit: a payment transaction with orderNumber and txHash. */
  paidOrder(): Promise<{ orderId: string; orderNumber: string; txHash: string }> {
    return this.#once('paid-order', async () => {
      await this.sandbox();
      const order = await this.order(true);
      const c = await this.create('createSandboxDeposit', 'credit a deposit to an order', (p) => ({ ...p, path: { ...p.path, orderId: order.orderId } }));
      const payment = isObj(c.json.payment) ? c.json.payment : {};
      const txHash = typeof payment.txHash === 'string' ? payment.txHash : String((c.request.body as Json).txHash);
      return { ...order, txHash };
    });
  }

  /** A payment not linked to an order, in pending_confirmation. */
  payment(fresh: boolean): Promise<{ transactionId: string; txHash: string; userId: string }> {
    const make = async () => {
      await this.sandbox();
      const c = await this.create('createSandboxPayment', 'create an unlinked payment');
      return { transactionId: String(c.json.id), txHash: String(c.json.txHash), userId: String(c.json.userId) };
    };
    return fresh ? make() : this.#once('payment', make);
  }

  refundEmail(): string {
    if (!this.#o.refundEmail) throw new Unavailable('a refund needs the e-mail of a service account of the tenant: give --refund-email');
    return this.#o.refundEmail;
  }

  webhookUrl(): string {
    if (!this.#o.webhookUrl) throw new Unavailable('needs --webhook-url, a URL the implementation accepts as a webhook destination');
    return this.#o.webhookUrl;
  }

  /**
   * The webhook endpoint the checks use: the one the suite creates (`created: true`, the answer
   * of createWebhookEndpoint in `created`), or an already active one of the environment, which
   * the suite only reads and tests.
   */
  endpoint(): Promise<{ id: string; created: Created | null; existing: ApiResponse | null }> {
    return this.#once('endpoint', async () => {
      this.stateful();
      const auth = await this.managementAuth();
      const url = this.webhookUrl();
      const op = this.op('createWebhookEndpoint');
      const request = { ...this.exampleRequest(op, 'endpoint'), body: { url } };
      const res = await this.#o.client.call(op, { auth, ...request, label: 'createWebhookEndpoint (the suite\'s endpoint)' });
      if (is2xx(res) && isObj(res.json)) {
        return { id: String(res.json.id), created: { json: res.json, request, res }, existing: null };
      }
      if (res.status === 409) {
        // 409: an active endpoint has this URL already (or the environment is at its limit).
        const list = await this.#o.client.call(this.op('listWebhookEndpoints'), { auth, label: 'listWebhookEndpoints (find the active endpoint at the URL)' });
        const data = isObj(list.json) && Array.isArray(list.json.data) ? list.json.data : [];
        const active = data.find((e) => isObj(e) && e.active === true && e.url === url);
        if (isObj(active)) return { id: String(active.id), created: null, existing: res };
      }
      throw new Unavailable(`could not create a webhook endpoint: POST /v2/webhooks/endpoints answered ${describeAnswer(res)}`, [res.exchange]);
    });
  }

  /** The endpoint, only when the suite created it (changes are never made to an endpoint it did not create). */
  async ownEndpoint(): Promise<string> {
    const e = await this.endpoint();
    if (!e.created) throw new Unavailable('the environment already had an active webhook endpoint; the suite does not change an endpoint it did not create');
    return e.id;
  }

  /** A delivery: the one of a test webhook sent to the endpoint. */
  testDelivery(): Promise<{ id: string }> {
    return this.#once('test-delivery', async () => {
      const endpointId = (await this.endpoint()).id;
      const c = await this.create('sendTestWebhook', 'send a test webhook', (p) => ({ ...p, path: { ...p.path, endpointId } }));
      return { id: String(c.json.id) };
    });
  }

  /** A failed delivery of the environment (ten unsuccessful attempts), when one exists. */
  failedDelivery(): Promise<{ id: string }> {
    return this.#once('failed-delivery', async () => {
      this.stateful();
      const auth = await this.managementAuth();
      const op = this.op('listDeliveries');
      const res = await this.#o.client.call(op, { auth, query: { limit: '100' }, label: 'listDeliveries (find a failed delivery)' });
      const data = isObj(res.json) && Array.isArray(res.json.data) ? res.json.data : [];
      const failed = data.find((d) => isObj(d) && d.state === 'failed');
      if (isObj(failed)) return { id: String(failed.id) };
      throw new Unavailable('no failed delivery among the newest 100 of the environment (one takes ten unsuccessful attempts, about 16 h on the real schedule)');
    });
  }

  /** The endpoints the suite created, to disable when the run ends. */
  async createdEndpointId(): Promise<string | null> {
    const p = this.#memo.get('endpoint') as Promise<{ created: Created | null; id: string }> | undefined;
    if (!p) return null;
    try {
      const e = await p;
      return e.created ? e.id : null;
    } catch {
      return null;
    }
  }
}
