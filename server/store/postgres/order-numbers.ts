// Order numbers in blocks. Taking each number with its own autocommitted upsert would make
// every order of an environment wait for the previous one's WAL flush (the sequence row stays
// locked until its commit is durable), so orders of one environment could not go faster than
// the disk syncs. Instead an instance reserves BLOCK numbers with one upsert and hands them out
// from memory: unique across instances (each block is the database's), one flush per BLOCK
// orders. The price, as with a rolled-back order: gaps (the unused rest of a block when the
// instance stops), and with several instances the numbers of orders created at the same time
// need not be in creation order (each instance counts through its own block).
import type { Conn } from './db.ts';

export const ORDER_NUMBER_BLOCK = 100;

interface Block {
  next: number;
  end: number;
  refill: Promise<void> | null;
}

export class OrderNumbers {
  private readonly blocks = new Map<string, Block>();

  /** `sequences` runs outside any transaction (autocommit), so a block is never rolled back. */
  constructor(
    private readonly sequences: Conn,
    private readonly size = ORDER_NUMBER_BLOCK,
  ) {}

  async next(environmentId: string): Promise<number> {
    let block = this.blocks.get(environmentId);
    if (block === undefined) {
      block = { next: 1, end: 0, refill: null };
      this.blocks.set(environmentId, block);
    }
    for (;;) {
      if (block.next <= block.end) return block.next++;
      // One reservation at a time per environment; everyone else waits for it.
      block.refill ??= this.reserve(environmentId, block).finally(() => {
        block.refill = null;
      });
      await block.refill;
    }
  }

  private async reserve(environmentId: string, block: Block): Promise<void> {
    const r = await this.sequences.one<{ last_value: number }>(
      `INSERT INTO order_number_sequences AS s (environment_id, last_value) VALUES ($1, $2)
       ON CONFLICT (environment_id) DO UPDATE SET last_value = s.last_value + $2
       RETURNING last_value`,
      [environmentId, this.size],
    );
    if (!r) throw new Error('order number sequence returned no row');
    block.next = r.last_value - this.size + 1;
    block.end = r.last_value;
  }
}
