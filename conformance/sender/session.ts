// The sender target's side of the implementation's APIs: it points the tenant environment's
// webhook endpoint at the suite's receiver through the management API (creating it, or
// updating the active one and rotating its secret to learn it), moves it from scenario to
// scenario (a URL edit per scenario, so a scenario never receives another's deliveries), and
// triggers events through the v2 order API and the sandbox.
import { writeFileSync } from 'node:fs';
import type { Exchange } from '../core/check.ts';
import { ApiClient } from '../core/openapi/client.ts';
import type { ApiResponse, Auth, KeyCredentials } from '../core/openapi/client.ts';
import { walkOperations } from '../core/openapi/contract.ts';
import type { ApiName, ApiOperation } from '../core/openapi/contract.ts';
import { exampleRequest } from '../core/openapi/requests.ts';
import type { RequestParts } from '../core/openapi/requests.ts';
import { isObj } from '../core/openapi/schema.ts';
import { describeAnswer } from '../core/openapi/answer.ts';
import { subSeed } from '../core/seed.ts';
import type { components } from '../../generated/types/management.ts';
import type { components as SandboxComponents } from '../../generated/types/sandbox.ts';
import { SCHEMES, type Scheme } from './verify.ts';

type Json = Record<string, unknown>;

/** An endpoint's signatureScheme as answered; absent (an implementation before schemes) is the seed's. */
function schemeOf(e: Json): Scheme {
  return SCHEMES.find((x) => x === e.signatureScheme) ?? 'service-signature';
}
type Schemas = components['schemas'];
type SandboxSchemas = SandboxComponents['schemas'];
/** The body of recoverDeliveries and its answer, as the contract types them. */
export type RecoverRequest = Schemas['RecoverDeliveriesRequest'];
export type Recovery = Schemas['DeliveryRecovery'];
/** The settlement outcomes of settleSandboxPayout. */
export type SettleStatus = SandboxSchemas['SandboxSettleRequest']['status'];
/** What the checks read of a listed delivery. */
export type DeliveryRef = Pick<Schemas['Delivery'], 'id' | 'state' | 'createdAt'>;

/** A step against the implementation failed; the checks that need it report it. */
export class StepFailed extends Error {
  override readonly name = 'StepFailed';
  constructor(
    message: string,
    readonly exchanges: Exchange[],
    /** The step is not available at all (a 404/405/501 route): checks skip rather than fail. */
    readonly unavailable = false,
  ) {
    super(message);
  }
}

export interface SessionOptions {
  baseUrls: Readonly<Record<ApiName, string>>;
  creds: KeyCredentials;
  memberToken: string;
  /** Where the implementation reaches the suite's receiver, e.g. http://127.0.0.1:4599 */
  publicUrl: string;
  /** A path segment unique to this run. */
  runToken: string;
  seed: number;
  timeoutMs: number;
  /** The endpoint's signatureScheme to set (--scheme); left as it is when absent. */
  scheme?: string;
  /** Where to write the callback secret the run's rotation issues (--save-callback-secret), for the next run. */
  saveCallbackSecret?: string;
}

export interface Endpoint {
  id: string;
  secret: string;
  environment: string;
  /** Whether the suite created it (false: it updated the active one and rotated its secret). */
  created: boolean;
  /** Its signatureScheme as the implementation answered it: which header sets every delivery must carry. */
  scheme: Scheme;
}

export class SenderSession {
  readonly client: ApiClient;
  readonly #ops: Map<string, ApiOperation>;
  readonly #o: SessionOptions;
  #counter = 0;
  endpoint: Endpoint | null = null;

  constructor(opts: SessionOptions) {
    this.#o = opts;
    this.client = new ApiClient({ baseUrls: opts.baseUrls, timeoutMs: opts.timeoutMs });
    this.#ops = new Map(walkOperations().map((op) => [op.spec.operationId, op]));
  }

  /** The receiver path of a scenario: /conformance/<run>/<scenario> */
  path(scenario: string): string {
    return `/conformance/${this.#o.runToken}/${scenario}`;
  }

  url(scenario: string): string {
    return `${this.#o.publicUrl.replace(/\/+$/, '')}${this.path(scenario)}`;
  }

  #member(): Auth {
    return { kind: 'bearer', token: this.#o.memberToken };
  }

  #key(): Auth {
    return { kind: 'key', apiKey: this.#o.creds.apiKey, apiHash: this.#o.creds.apiHash };
  }

  async #call(operationId: string, auth: Auth, change: (p: RequestParts) => RequestParts, label: string, evidence: Exchange[], signal?: AbortSignal): Promise<ApiResponse & { parts: RequestParts }> {
    const op = this.#ops.get(operationId);
    if (!op) throw new StepFailed(`the contract has no operation ${operationId}`, evidence, true);
    // The run token keeps identifiers (thirdPartyId, txHash) new in every run against the same tenant.
    const seed = subSeed(this.#o.seed, `${this.#o.runToken}/${operationId}#${++this.#counter}`);
    const parts = change(exampleRequest(op, { seed, tenantId: this.#o.creds.tenantId }));
    const res = await this.client.call(op, { auth, ...parts, label }, signal);
    evidence.push(res.exchange);
    // Any 2xx will do here: the api target judges the statuses; the sender target needs the state.
    if (res.status === null || res.status < 200 || res.status >= 300 || !isObj(res.json)) {
      const missing = res.status === 404 || res.status === 405 || res.status === 501;
      throw new StepFailed(`${label}: ${op.spec.method.toUpperCase()} ${op.spec.path} answered ${describeAnswer(res)}`, evidence, missing);
    }
    return { ...res, parts };
  }

  /** Creates the endpoint at `scenario`'s URL, or takes over the active one (URL edit and secret rotation). */
  async configure(scenario: string, evidence: Exchange[], signal?: AbortSignal): Promise<Endpoint> {
    const url = this.url(scenario);
    try {
      const res = await this.#call('createWebhookEndpoint', this.#member(), (p) => ({ ...p, body: { url, ...this.#scheme() } }), 'create the webhook endpoint', evidence, signal);
      const e = res.json as Json;
      this.endpoint = { id: String(e.id), secret: String(e.secret), environment: String(e.environment), created: true, scheme: schemeOf(e) };
      return this.endpoint;
    } catch (err) {
      const last = evidence[evidence.length - 1];
      if (!(err instanceof StepFailed) || last?.response.status !== 409) throw err;
    }
    const list = await this.#call('listWebhookEndpoints', this.#member(), (p) => p, 'list the webhook endpoints', evidence, signal);
    const data = Array.isArray((list.json as Json).data) ? ((list.json as Json).data as unknown[]) : [];
    const active = data.find((e): e is Json => isObj(e) && e.active === true);
    if (!active) throw new StepFailed('the environment has an active endpoint (409) but none is listed as active', evidence);
    const id = String(active.id);
    const updated = await this.#call('updateWebhookEndpoint', this.#member(), (p) => ({ ...p, path: { endpointId: id }, body: { url, ...this.#scheme() } }), 'point the active endpoint at the suite', evidence, signal);
    const rotated = await this.#call('rotateWebhookSecret', this.#member(), (p) => ({ ...p, path: { endpointId: id } }), 'rotate its secret (the only way to learn it)', evidence, signal);
    const r = rotated.json as Json;
    this.endpoint = { id, secret: String(r.secret), environment: String(r.environment ?? active.environment), created: false, scheme: schemeOf(updated.json as Json) };
    return this.endpoint;
  }

  /** Sets the endpoint's signatureScheme (a change alone keeps the version); the session judges deliveries in it from now on. */
  async setScheme(scheme: Scheme, evidence: Exchange[], signal?: AbortSignal): Promise<void> {
    const id = this.#endpointId();
    const res = await this.#call('updateWebhookEndpoint', this.#member(), (p) => ({ ...p, path: { endpointId: id }, body: { signatureScheme: scheme } }), `set the signature scheme to ${scheme}`, evidence, signal);
    this.endpoint!.scheme = schemeOf(res.json as Json);
  }

  #scheme(): { signatureScheme?: string } {
    return this.#o.scheme === undefined ? {} : { signatureScheme: this.#o.scheme };
  }

  #endpointId(): string {
    if (!this.endpoint) throw new StepFailed('the webhook endpoint is not configured', []);
    return this.endpoint.id;
  }

  /** Points the endpoint at another scenario's path (a URL edit: a new version). */
  async pointTo(scenario: string, evidence: Exchange[], signal?: AbortSignal): Promise<void> {
    const id = this.#endpointId();
    await this.#call('updateWebhookEndpoint', this.#member(), (p) => ({ ...p, path: { endpointId: id }, body: { url: this.url(scenario) } }), `point the endpoint at ${scenario}`, evidence, signal);
  }

  /** Rotates the endpoint's signing secret; the session signs-checks with the new one from now on. Answers the previous one. */
  async rotate(evidence: Exchange[], signal?: AbortSignal): Promise<{ previous: string; secret: string }> {
    const secret = await this.rotateSecretOf(this.#endpointId(), evidence, signal);
    const previous = this.endpoint!.secret;
    this.endpoint!.secret = secret;
    return { previous, secret };
  }

  /** Rotates the signing secret of endpoint `id` (the session's or one it added); answers the new one. */
  async rotateSecretOf(id: string, evidence: Exchange[], signal?: AbortSignal): Promise<string> {
    const res = await this.#call('rotateWebhookSecret', this.#member(), (p) => ({ ...p, path: { endpointId: id } }), 'rotate the signing secret', evidence, signal);
    return String((res.json as Json).secret);
  }

  /** Rotates the tenant environment's callback secret; answers the new one. */
  async rotateCallbackSecret(evidence: Exchange[], signal?: AbortSignal): Promise<string> {
    const res = await this.#call('rotateCallbackSecret', this.#member(), (p) => p, 'rotate the callback secret', evidence, signal);
    const secret = String((res.json as Json).secret);
    // Written at once, readable by the owner only: the next run passes it as --callback-secret file:PATH.
    if (this.#o.saveCallbackSecret !== undefined) writeFileSync(this.#o.saveCallbackSecret, `${secret}\n`, { mode: 0o600 });
    return secret;
  }

  /** Another endpoint of the environment (issue 68) at `scenario`'s URL receiving `eventTypes` (every type when left out): its id and secret. */
  async addEndpoint(scenario: string, eventTypes: string[] | undefined, evidence: Exchange[], signal?: AbortSignal): Promise<{ id: string; secret: string; scheme: Scheme }> {
    const body = { url: this.url(scenario), ...this.#scheme(), ...(eventTypes === undefined ? {} : { eventTypes }) };
    const res = await this.#call('createWebhookEndpoint', this.#member(), (p) => ({ ...p, body }), `create an endpoint for ${scenario}`, evidence, signal);
    const e = res.json as Json;
    return { id: String(e.id), secret: String(e.secret), scheme: schemeOf(e) };
  }

  /** Changes an endpoint the session added (`body`: url, eventTypes, or active false). */
  async changeEndpoint(id: string, body: Json, label: string, evidence: Exchange[], signal?: AbortSignal): Promise<void> {
    await this.#call('updateWebhookEndpoint', this.#member(), (p) => ({ ...p, path: { endpointId: id }, body }), label, evidence, signal);
  }

  /** An endpoint as the management API shows it now (GET). */
  async endpointState(id: string, evidence: Exchange[], signal?: AbortSignal): Promise<Json> {
    const res = await this.#call('getWebhookEndpoint', this.#member(), (p) => ({ ...p, path: { endpointId: id } }), `read endpoint ${id}`, evidence, signal);
    return res.json as Json;
  }

  async disable(evidence: Exchange[], signal?: AbortSignal): Promise<void> {
    const id = this.#endpointId();
    await this.#call('updateWebhookEndpoint', this.#member(), (p) => ({ ...p, path: { endpointId: id }, body: { active: false } }), 'disable the endpoint', evidence, signal);
  }

  // ---- triggers ------------------------------------------------------------------------------

  /** order.created; the order carries an expected token amount so a deposit can pay it. */
  async createOrder(evidence: Exchange[], signal?: AbortSignal): Promise<{ orderId: string; amountBaseUnits: string }> {
    const res = await this.#call('createOrder', this.#key(), (p) => p, 'create an order', evidence, signal);
    const order = res.json as Json;
    const sent = isObj(res.parts.body) ? res.parts.body : {};
    return { orderId: String(order.orderId), amountBaseUnits: String(order.amountBaseUnits ?? sent.amountBaseUnits ?? '1000000') };
  }

  /** order.paid: a verified deposit of the whole expected amount. */
  async payOrder(order: { orderId: string; amountBaseUnits: string }, evidence: Exchange[], signal?: AbortSignal): Promise<void> {
    await this.#call(
      'createSandboxDeposit',
      this.#key(),
      (p) => ({ ...p, path: { orderId: order.orderId }, body: { ...(p.body as Json), amountBaseUnits: order.amountBaseUnits, verified: true } }),
      'pay the order (sandbox deposit)',
      evidence,
      signal,
    );
  }

  /** order.payment_review_required. */
  async reviewOrder(orderId: string, evidence: Exchange[], signal?: AbortSignal): Promise<void> {
    await this.#call('markSandboxOrderForReview', this.#key(), (p) => ({ ...p, path: { orderId } }), 'mark the order for review (sandbox)', evidence, signal);
  }

  /** A verified deposit of `amountBaseUnits` on an order (a surplus once it is paid). */
  async deposit(orderId: string, amountBaseUnits: string, evidence: Exchange[], signal?: AbortSignal): Promise<void> {
    await this.#call(
      'createSandboxDeposit',
      this.#key(),
      (p) => ({ ...p, path: { orderId }, body: { ...(p.body as Json), amountBaseUnits, verified: true } }),
      `deposit ${amountBaseUnits} more (sandbox)`,
      evidence,
      signal,
    );
  }

  /** The delivery of an event, found by its event id (the activity search); to endpoint `endpointId` when given (an event goes to several). */
  async findDelivery(eventId: string, evidence: Exchange[], signal?: AbortSignal, endpointId?: string): Promise<DeliveryRef> {
    const query = { q: eventId, ...(endpointId === undefined ? {} : { endpointId }) };
    const res = await this.#call('listDeliveries', this.#member(), (p) => ({ ...p, query }), `find the delivery of event ${eventId}`, evidence, signal);
    const data = Array.isArray((res.json as Json).data) ? ((res.json as Json).data as unknown[]) : [];
    const found = data.find((d): d is Json => isObj(d) && d.eventId === eventId && (endpointId === undefined || d.endpointId === endpointId));
    if (!found) throw new StepFailed(`the activity search for event ${eventId} found no delivery${endpointId === undefined ? '' : ` to endpoint ${endpointId}`}`, evidence);
    return { id: String(found.id), state: String(found.state) as DeliveryRef['state'], createdAt: String(found.createdAt) };
  }

  /** The newest deliveries (up to a page of 100) of endpoint `endpointId`. */
  async deliveriesOf(endpointId: string, evidence: Exchange[], signal?: AbortSignal): Promise<Array<DeliveryRef & { eventId: string }>> {
    const res = await this.#call('listDeliveries', this.#member(), (p) => ({ ...p, query: { endpointId, limit: '100' } }), `list the deliveries of endpoint ${endpointId}`, evidence, signal);
    const data = Array.isArray((res.json as Json).data) ? ((res.json as Json).data as unknown[]) : [];
    return data.filter(isObj).map((d) => ({ id: String(d.id), state: String(d.state) as DeliveryRef['state'], createdAt: String(d.createdAt), eventId: String(d.eventId) }));
  }

  /** Recovery by time range: the endpoint's deliveries created in [since, until) go again. */
  async recover(window: RecoverRequest, evidence: Exchange[], signal?: AbortSignal, endpointId?: string): Promise<Recovery> {
    const id = endpointId ?? this.#endpointId();
    const res = await this.#call('recoverDeliveries', this.#member(), (p) => ({ ...p, path: { endpointId: id }, body: window }), `recover the deliveries created in [${window.since}, ${window.until ?? 'now'})`, evidence, signal);
    return res.json as Recovery;
  }

  /** Retry webhook (a failed delivery): a new cycle to the current endpoint. */
  async retryDelivery(deliveryId: string, evidence: Exchange[], signal?: AbortSignal): Promise<void> {
    await this.#call('retryDelivery', this.#member(), (p) => ({ ...p, path: { deliveryId } }), 'retry the failed delivery', evidence, signal);
  }

  /** webhook.test from the session's endpoint, or from endpoint `id`; returns its event id. */
  async sendTest(evidence: Exchange[], signal?: AbortSignal, endpointId?: string): Promise<string> {
    const id = endpointId ?? this.#endpointId();
    const res = await this.#call('sendTestWebhook', this.#member(), (p) => ({ ...p, path: { endpointId: id } }), 'send a test webhook', evidence, signal);
    return String((res.json as Json).eventId);
  }

  /** A payout with notifyUrl at `scenario`, settled with `status` (success by default): the payout-completed callback. */
  async settledPayout(scenario: string, evidence: Exchange[], signal?: AbortSignal, status: SettleStatus = 'success'): Promise<{ transactionId: string; thirdPartyId: string; amount: unknown }> {
    const created = await this.#call(
      'createPayout',
      this.#key(),
      (p) => ({ ...p, body: { ...(p.body as Json), notifyUrl: this.url(scenario) } }),
      'create a payout with notifyUrl at the suite',
      evidence,
      signal,
    );
    const payout = created.json as Json;
    const sent = isObj(created.parts.body) ? created.parts.body : {};
    await this.#call('settleSandboxPayout', this.#key(), (p) => ({ ...p, path: { transactionId: String(payout.transactionId) }, body: { status } }), `settle the payout as ${status} (sandbox)`, evidence, signal);
    return { transactionId: String(payout.transactionId), thirdPartyId: String(payout.thirdPartyId), amount: sent.amount };
  }
}
