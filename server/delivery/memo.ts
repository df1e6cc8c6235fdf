// A bounded memo for the worker's pure per-attempt lookups (opening a sealed secret, checking a
// stored URL): at most `size` keys, emptied when it would grow past that, so a churn of
// distinct keys costs one recomputation each and never unbounded memory. Errors are not kept.
export function boundedMemo<T>(size: number, compute: (key: string) => T): (key: string) => T {
  const values = new Map<string, T>();
  return (key) => {
    let value = values.get(key);
    if (value === undefined) {
      value = compute(key);
      if (values.size >= size) values.clear();
      values.set(key, value);
    }
    return value;
  };
}
