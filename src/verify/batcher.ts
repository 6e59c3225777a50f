/**
 * Micro-batching for servers: verification requests that arrive close together (in the same turn
 * of the event loop, up to `maxBatch`) are verified with one verifySpells call, so concurrent
 * queries share one random-linear-combination pairing check. Browser-safe (setTimeout only).
 */
import { verifySpells, type SpellVerdict, type TaggedTx } from './index.js';

interface Waiting {
  tx: TaggedTx;
  resolve: (v: SpellVerdict) => void;
  reject: (e: unknown) => void;
}

export class SpellBatcher {
  private queue: Waiting[] = [];
  private scheduled = false;

  constructor(
    private readonly mock: boolean,
    private readonly maxBatch = 64,
  ) {}

  /** The verdict for one transaction, verified together with the others queued meanwhile. */
  verify(tx: TaggedTx): Promise<SpellVerdict> {
    return new Promise((resolve, reject) => {
      this.queue.push({ tx, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setTimeout(() => this.flush(), 0);
      }
    });
  }

  private flush(): void {
    const batch = this.queue.splice(0, this.maxBatch);
    if (this.queue.length > 0)
      setTimeout(() => this.flush(), 0); // let other work run between batches
    else this.scheduled = false;
    try {
      verifySpells(
        batch.map((w) => w.tx),
        this.mock,
      ).forEach((v, i) => batch[i]!.resolve(v));
    } catch (e) {
      for (const w of batch) w.reject(e);
    }
  }
}
