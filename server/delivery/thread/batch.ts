// Both sides of the sending thread post batches, not single items: everything pushed during one
// turn of the event loop goes out as one message on the next, so a busy queue pays for one
// structured clone per batch instead of one per attempt.

export interface TurnBatch<T> {
  push(item: T): void;
  /** Posts what is batched now (nothing when empty), without waiting for the next turn. */
  flush(): void;
}

export function batchPerTurn<T>(post: (items: T[]) => void): TurnBatch<T> {
  let items: T[] = [];
  const flush = (): void => {
    if (items.length === 0) return;
    const batch = items;
    items = [];
    post(batch);
  };
  return {
    push(item) {
      if (items.length === 0) setImmediate(flush);
      items.push(item);
    },
    flush,
  };
}
