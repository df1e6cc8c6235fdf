// The documents the mock serves: for each, its Prism instance (in this process) and the front's
// compiled operations, and the document text they were made from, so that a reload redoes only
// the documents that changed.
import { API_NAMES, loadDocument, type ApiName } from '../../server/contract/operations.ts';
import { mockedApi, type MockedApi } from './front.ts';
import { prismDocument, startPrism, type PrismEngine } from './prism.ts';

type Obj = Record<string, unknown>;

export interface ServeOptions {
  /** Prism's log lines; none when absent. */
  log?: (line: string) => void;
  /** Reads a document; default generated/openapi/<api>.json. */
  load?: (api: ApiName) => Obj;
}

interface Served {
  text: string;
  prism: PrismEngine;
  mocked: MockedApi;
}

export interface ServedDocuments {
  /** Every document's compiled operations, for a front. */
  mocked(): MockedApi[];
  /** `api`'s Prism (a request during a reload gets the one serving until the reload is done). */
  prism(api: ApiName): PrismEngine;
  /** Serves the documents of generated/ whose content changed since they were served; names them. */
  refresh(): Promise<ApiName[]>;
}

async function serveOne(api: ApiName, doc: Obj, log: ((line: string) => void) | undefined): Promise<Served> {
  const prism = await startPrism(prismDocument(doc), log);
  return { text: JSON.stringify(doc), prism, mocked: mockedApi(api, doc) };
}

/** Prepares Prism and the front's operations for each document. */
export async function serveDocuments({ log, load = loadDocument }: ServeOptions): Promise<ServedDocuments> {
  const started = await Promise.all(API_NAMES.map((api) => serveOne(api, load(api), log)));
  const served = new Map(API_NAMES.map((api, i) => [api, started[i] as Served]));
  const get = (api: ApiName): Served => served.get(api) as Served;

  const refreshOne = async (api: ApiName): Promise<boolean> => {
    const doc = load(api);
    const text = JSON.stringify(doc);
    const current = get(api);
    if (text === current.text) return false;
    served.set(api, await serveOne(api, doc, log));
    return true;
  };
  return {
    mocked: () => API_NAMES.map((api) => get(api).mocked),
    prism: (api) => get(api).prism,
    async refresh() {
      // Every document is done (reloaded or not) before a failure is reported.
      const results = await Promise.allSettled(API_NAMES.map(refreshOne));
      const failed = results.find((r) => r.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
      return API_NAMES.filter((_, i) => (results[i] as PromiseFulfilledResult<boolean>).value);
    },
  };
}
