// Rendered answers of list reads (GET /transactions/users), kept while the store says nothing
// they were read from has changed: a repeated read costs neither the store nor the JSON.
//
// An entry is answered only while the version it was read at (Store.transactionsVersion,
// taken before the read) is still the environment's version. The store moves the version
// before a writer is answered, so a read that follows an acknowledged write on the same
// instance never gets an answer from before it; another instance's (or process's) write moves
// it within the store's bound (PostgreSQL: postgres/versions.ts, 100 ms; SQLite: 100 ms for
// another process). While a store cannot vouch for its bound it gives no version, and
// nothing is answered from the cache. Bounded by bytes (LIST_CACHE_MB); the least
// recently used entry goes first. The composition root puts a handler behind the cache
// (throughPages); the handler itself always renders.
import type { HandlerContext } from './handler-types.ts';
import { RenderedJson } from './rendered.ts';

export interface RenderedPage {
  json: string;
  headers?: Record<string, string>;
}

interface Entry {
  version: string;
  page: RenderedPage;
  bytes: number;
}

/** Bookkeeping per entry beyond its strings (the Map slot, the objects): an estimate. */
const OVERHEAD_BYTES = 200;

export class PageCache {
  private readonly entries = new Map<string, Entry>();
  private used = 0;
  /** Answers from the cache and reads that had to go to the store, since start. */
  readonly stats = { hits: 0, misses: 0 };

  constructor(readonly maxBytes: number) {}

  /** The page for `key` at `version`: the one kept, or `render`'s, kept from now on. */
  async through(key: string, version: string, render: () => Promise<RenderedPage>): Promise<RenderedPage> {
    const kept = this.get(key, version);
    if (kept !== undefined) return kept;
    const page = await render();
    this.set(key, version, page);
    return page;
  }

  /** The page kept for `key`, if it was read at `version`; a stale one is dropped. */
  get(key: string, version: string): RenderedPage | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined || entry.version !== version) {
      if (entry !== undefined) this.drop(key, entry);
      this.stats.misses += 1;
      return undefined;
    }
    // Most recently used last: Map keeps insertion order.
    this.entries.delete(key);
    this.entries.set(key, entry);
    this.stats.hits += 1;
    return entry.page;
  }

  /** Keeps `page`, read at `version` (taken before the read), for `key`. */
  set(key: string, version: string, page: RenderedPage): void {
    // Strings cost at most two bytes a character.
    let bytes = OVERHEAD_BYTES + 2 * (key.length + version.length + page.json.length);
    for (const [name, value] of Object.entries(page.headers ?? {})) bytes += 2 * (name.length + value.length);
    // No single page may push out most of the cache.
    if (bytes > this.maxBytes / 8) return;
    const old = this.entries.get(key);
    if (old !== undefined) this.drop(key, old);
    this.entries.set(key, { version, page, bytes });
    this.used += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.used <= this.maxBytes) break;
      this.drop(oldest, entry);
    }
  }

  /** Entries and their estimated bytes. */
  size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.used };
  }

  private drop(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.used -= entry.bytes;
  }
}

/** Where a handler's page is kept, and the version it is answered at (null: render, keep nothing). */
export interface PageKeys<I> {
  key(input: I, ctx: HandlerContext): string;
  version(ctx: HandlerContext): string | null;
}

type ReadHandler<I> = (input: I, ctx: HandlerContext) => Promise<{ status: number; body: unknown; headers?: Record<string, string> }>;

/**
 * `handler`, a read that answers 200 (a failure throws), read through `pages`: a page rendered
 * before is answered while its version is current. The version is taken before the read it labels.
 */
export function throughPages<I, H extends ReadHandler<I>>(pages: PageCache, keys: PageKeys<I>, handler: H): H {
  const cached: ReadHandler<I> = async (input, ctx) => {
    const version = keys.version(ctx);
    if (version === null) return handler(input, ctx);
    const page = await pages.through(keys.key(input, ctx), version, async () => {
      const reply = await handler(input, ctx);
      return { json: reply.body instanceof RenderedJson ? reply.body.json : JSON.stringify(reply.body), ...(reply.headers ? { headers: reply.headers } : {}) };
    });
    return { status: 200, body: new RenderedJson(page.json), ...(page.headers ? { headers: page.headers } : {}) };
  };
  return cached as H;
}
