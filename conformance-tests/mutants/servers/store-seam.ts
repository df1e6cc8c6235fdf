// The seam of the store mutants: the real app on a store whose transactions (and reads) hand
// the domain repositories with some methods replaced. The replacement gets the real repository
// of the same transaction, so a defect is one changed call, everything else the bundled
// server's own.
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import type { CallOptions, ReadTx, Tx } from '../../../server/domain/store.ts';
import { StoreDecorator } from '../../../server/domain/store-decorator.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';

type Repo = 'endpoints' | 'deliveries';
/** Replacements of some methods of a repository, given the transaction's real repositories. */
export type RepoPatch = { [R in Repo]?: (real: Tx) => Partial<Tx[R]> };

/** `repo` of `tx` with the methods `patch` gives replaced; every other member is the real one's. */
function patched<T extends object>(repo: T, patch: Partial<T>): T {
  return new Proxy(repo, {
    get(target, key) {
      if (key in patch) return patch[key as keyof T];
      const value: unknown = Reflect.get(target, key);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

function patchTx<T extends Tx | ReadTx>(tx: T, patch: RepoPatch): T {
  return new Proxy(tx, {
    get(target, key) {
      const make = patch[key as Repo];
      const value: unknown = Reflect.get(target, key);
      if (make !== undefined) return patched(value as object, make(target as Tx) as object);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

class PatchedStore extends StoreDecorator {
  constructor(
    base: Services['store'],
    private readonly patch: () => RepoPatch,
  ) {
    super(base);
  }

  override transaction<T>(fn: (tx: Tx) => Promise<T>, opts?: CallOptions): Promise<T> {
    return this.base.transaction((tx) => fn(patchTx(tx, this.patch())), opts);
  }

  override read<T>(fn: (tx: ReadTx) => Promise<T>, opts?: CallOptions): Promise<T> {
    return this.base.read((tx) => fn(patchTx(tx, this.patch())), opts);
  }
}

/** The real app on a store patched per transaction (`patch` is called once per transaction or read, for its own state). */
export function withStore(services: Services, config: Config, patch: () => RepoPatch): BuiltApp {
  return buildApp({ ...services, store: new PatchedStore(services.store, patch) }, config);
}
