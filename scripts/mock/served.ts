// The documents the mock serves: for each, its Prism and the front's compiled operations, and
// the document text they were made from, so that a reload redoes only the documents that changed.
import { API_NAMES, loadDocument, type ApiName } from '../../server/contract/operations.ts';
import { mockedApi, type MockedApi } from './front.ts';
import { prismDocument, startPrism, type PrismProcess } from './prism.ts';

type Obj = Record<string, unknown>;

export interface ServeOptions {
  /** Prism's log lines. */
  log: (line: string) => void;
  /** Reads a document; default generated/openapi/<api>.json. */
  load?: (api: ApiName) => Obj;
}

interface Served {
  text: string;
  prism: PrismProcess;
  mocked: MockedApi;
  /** Settles when a reload in progress has (Prism listens again, on another port). */
  reloaded: Promise<void>;
}

export interface ServedDocuments {
  /** Every document's compiled operations, for a front. */
  mocked(): MockedApi[];
  /** The base URL of `api`'s Prism; during its reload, once it listens again (a request waits rather than fails). */
  prismUrl(api: ApiName): Promise<string>;
  /** Serves the documents of generated/ whose content changed since they were served; names them. */
  refresh(): Promise<ApiName[]>;
  close(): Promise<void>;
}

async function serveOne(api: ApiName, doc: Obj, log: (line: string) => void): Promise<Served> {
  const prism = await startPrism(prismDocument(doc), log);
  return { text: JSON.stringify(doc), prism, mocked: mockedApi(api, doc), reloaded: Promise.resolve() };
}

/** Starts a Prism for each document (side by side); resolves when every one listens. */
export async function serveDocuments({ log, load = loadDocument }: ServeOptions): Promise<ServedDocuments> {
  const started = await Promise.allSettled(API_NAMES.map((api) => serveOne(api, load(api), log)));
  const failed = started.find((s) => s.status === 'rejected');
  if (failed !== undefined) {
    await Promise.all(started.map((s) => (s.status === 'fulfilled' ? s.value.prism.close() : undefined)));
    throw failed.reason;
  }
  const served = new Map(API_NAMES.map((api, i) => [api, (started[i] as PromiseFulfilledResult<Served>).value]));
  const get = (api: ApiName): Served => served.get(api) as Served;

  const refreshOne = async (api: ApiName): Promise<boolean> => {
    const doc = load(api);
    const text = JSON.stringify(doc);
    const current = get(api);
    if (text === current.text) return false;
    // Prism reloads in its own process while this one compiles the front's validators.
    const reloaded = current.prism.reload(prismDocument(doc));
    served.set(api, { ...current, reloaded: reloaded.catch(() => {}) });
    const mocked = mockedApi(api, doc);
    try {
      await reloaded;
    } catch (err) {
      served.set(api, current);
      throw err;
    }
    served.set(api, { ...current, text, mocked });
    return true;
  };
  return {
    mocked: () => API_NAMES.map((api) => get(api).mocked),
    prismUrl: async (api) => {
      await get(api).reloaded;
      return get(api).prism.url;
    },
    async refresh() {
      // Every document is done (reloaded or not) before a failure is reported.
      const results = await Promise.allSettled(API_NAMES.map(refreshOne));
      const failed = results.find((r) => r.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
      return API_NAMES.filter((_, i) => (results[i] as PromiseFulfilledResult<boolean>).value);
    },
    async close() {
      await Promise.all([...served.values()].map((s) => s.prism.close()));
    },
  };
}
