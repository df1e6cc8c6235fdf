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

export const createTransactionsClient = (opts: ClientOptions & ApiKeyCredentials): Client<TransactionsPaths> =>
  make<TransactionsPaths>(opts, apiKeyHeaders(opts));

export const createOrdersClient = (opts: ClientOptions & ApiKeyCredentials): Client<OrdersPaths> => make<OrdersPaths>(opts, apiKeyHeaders(opts));

export const createSandboxClient = (opts: ClientOptions & ApiKeyCredentials): Client<SandboxPaths> => make<SandboxPaths>(opts, apiKeyHeaders(opts));

/** Webhook management with a member token (portal automation) or a `webhooks_manage` API key. */
export const createManagementClient = (opts: ClientOptions & ({ memberToken: string } | ApiKeyCredentials)): Client<ManagementPaths> =>
  make<ManagementPaths>(opts, 'memberToken' in opts ? { authorization: `Bearer ${opts.memberToken}` } : apiKeyHeaders(opts));

export type { Client, Middleware };
