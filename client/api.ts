// Typed clients for every API, on openapi-fetch with the generated types. They return
// `{ data }` or `{ error }` (the problem+json body) and never throw for an HTTP status.
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { paths as TransactionsPaths } from '../generated/types/transactions.ts';
import type { paths as OrdersPaths } from '../generated/types/orders.ts';
import type { paths as ManagementPaths } from '../generated/types/management.ts';
import type { paths as SandboxPaths } from '../generated/types/sandbox.ts';

export type { TransactionsPaths, OrdersPaths, ManagementPaths, SandboxPaths };

export interface ApiKeyCredentials {
  apiKey: string;
  apiHash: string;
  /** Sent as x-tenant-id (required by GET /transactions, checked when present elsewhere). */
  tenantId?: string;
}

export interface ClientOptions {
  baseUrl: string;
  fetch?: typeof fetch;
  headers?: Record<string, string>;
}

function apiKeyHeaders(c: ApiKeyCredentials): Record<string, string> {
  return { 'x-api-key': c.apiKey, 'x-api-hash': c.apiHash, ...(c.tenantId ? { 'x-tenant-id': c.tenantId } : {}) };
}

function make<P extends {}>(opts: ClientOptions, headers: Record<string, string>): Client<P, `${string}/${string}`> {
  return createClient<P>({
    baseUrl: opts.baseUrl.replace(/\/$/, ''),
    headers: { ...headers, ...opts.headers },
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
}

type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch' | 'trace';
/** `x-tenant-id` optional in a header parameter set (the client sends it from `tenantId`). */
type TenantOptional<H> = Omit<H, 'x-tenant-id'> & { 'x-tenant-id'?: string };
type WithTenantFromClient<O> = O extends { parameters: infer Params }
  ? 'header' extends keyof Params
    ? Omit<O, 'parameters'> & {
        parameters: Omit<Params, 'header'> &
          ({} extends Omit<NonNullable<Params['header']>, 'x-tenant-id'> ? { header?: TenantOptional<NonNullable<Params['header']>> } : { header: TenantOptional<NonNullable<Params['header']>> });
      }
    : O
  : O;
/**
 * The paths of a client created with `tenantId`: `x-tenant-id` is no longer a header the caller
 * must pass (GET /transactions requires it), since the client sends it on every request.
 */
export type TenantScoped<P> = { [Path in keyof P]: { [M in keyof P[Path]]: M extends HttpMethod ? WithTenantFromClient<P[Path][M]> : P[Path][M] } };

export function createTransactionsClient(opts: ClientOptions & ApiKeyCredentials & { tenantId: string }): Client<TenantScoped<TransactionsPaths>>;
export function createTransactionsClient(opts: ClientOptions & ApiKeyCredentials): Client<TransactionsPaths>;
export function createTransactionsClient(opts: ClientOptions & ApiKeyCredentials): Client<TransactionsPaths> {
  return make<TransactionsPaths>(opts, apiKeyHeaders(opts));
}

export const createOrdersClient = (opts: ClientOptions & ApiKeyCredentials): Client<OrdersPaths> => make<OrdersPaths>(opts, apiKeyHeaders(opts));

export const createSandboxClient = (opts: ClientOptions & ApiKeyCredentials): Client<SandboxPaths> => make<SandboxPaths>(opts, apiKeyHeaders(opts));

/** Webhook management with a member token (portal automation) or a `webhooks_manage` API key. */
export const createManagementClient = (opts: ClientOptions & ({ memberToken: string } | ApiKeyCredentials)): Client<ManagementPaths> =>
  make<ManagementPaths>(opts, 'memberToken' in opts ? { authorization: `Bearer ${opts.memberToken}` } : apiKeyHeaders(opts));

export type { Client, Middleware };
