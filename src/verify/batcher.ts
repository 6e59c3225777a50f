/**
 * Micro-batching for servers: verification requests that arrive close together (in the same turn
 * of the event loop, up to `maxBatch`) are verified with one verifySpells call (or the caller's
 * batch verifier, e.g. worker threads), so concurrent queries share one random-linear-combination
 * pairing check. Browser-safe (setTimeout only).
 */
import { verifySpells, type SpellVerdict, type TaggedTx } from './index.js';

interface Waiting {
  tx: TaggedTx;
  resolve: (v: SpellVerdict) => void;
  reject: (e: unknown) => void;
}

/** Verdicts for a batch, in input order (default: verifySpells on this thread). */
export type BatchVerify = (txs: TaggedTx[]) => SpellVerdict[] | Promise<SpellVerdict[]>;

export class SpellBatcher {
  private queue: Waiting[] = [];
  private scheduled = false;
  private readonly verifyBatch: BatchVerify;

  constructor(
    mock: boolean,
    private readonly maxBatch = 64,
    verify?: BatchVerify,
  ) {
    this.verifyBatch = verify ?? ((txs) => verifySpells(txs, mock));
  }

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
    const fail = (e: unknown) => {
      for (const w of batch) w.reject(e);
    };
    try {
      const verdicts = this.verifyBatch(batch.map((w) => w.tx));
      const answer = (vs: SpellVerdict[]) => vs.forEach((v, i) => batch[i]!.resolve(v));
      if (Array.isArray(verdicts)) answer(verdicts);
      else verdicts.then(answer, fail);
    } catch (e) {
      fail(e);
    }
  }
}
