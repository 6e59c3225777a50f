/**
 * The index's spell verification threads: a bounded pool of worker threads (verify-worker.ts)
 * that run the library's batch verifier, so that the event loop stays free for the API while the
 * index syncs. Node only (the browser-safe verifier in verify/ knows nothing of it).
 *
 * - A check is split into one chunk per thread (at least `minChunk` transactions each, so that a
 *   chunk still shares its pairing work), verified in parallel, and answered in input order with
 *   the verdicts the in-thread check gives: the spell travels back as a structured clone, its
 *   `Data` values revived into ValueMap and Tagged (cheaper than encoding and decoding CBOR).
 * - A thread that crashes, exits or overruns `timeoutMs` is replaced (runner/pool.ts) and its
 *   chunk is tried once more on a fresh thread; a second failure fails the whole check with a
 *   clear INTERNAL error. Never a verdict that a thread did not give.
 * - At most `maxQueued` chunks wait or run at once; a check beyond that fails with SERVER_BUSY
 *   (the follower retries at its next poll).
 */
import { availableParallelism } from 'node:os';
import { CharmsError } from '../errors.js';
import type { NormalizedSpell } from '../model/spell.js';
import { Tagged, ValueMap, type Value } from '../codec/value.js';
import { WorkerPool, type PoolOutcome } from '../runner/pool.js';
import { rememberSpellCbor, type SpellCheck } from './block-write.js';
import type { VerifyReply, VerifyTask } from './verify-task.js';

export interface SpellVerifyPoolOptions {
  /** Threads (default: the available cores). */
  size?: number;
  /** Also accept mock spells (as `--mock`). */
  mock: boolean;
  /** Chunks waiting or running at most (default 8 per thread). */
  maxQueued?: number;
  /** Wall-clock limit of one chunk on a thread (default 120 s). */
  timeoutMs?: number;
  /** Fewest transactions per chunk when a check is split across threads (default 16). */
  minChunk?: number;
  /** The worker script (tests substitute a faulty one). */
  workerUrl?: URL;
}

export class SpellVerifyPool {
  readonly size: number;
  private readonly pool: WorkerPool<Omit<VerifyTask, 'id'>, VerifyReply>;
  private readonly maxQueued: number;
  private readonly timeoutMs: number;
  private readonly minChunk: number;
  private queued = 0;
  private closed = false;
  /** Transactions whose verdicts came from the threads so far. */
  verified = 0;

  constructor(private readonly o: SpellVerifyPoolOptions) {
    this.size = o.size ?? availableParallelism();
    if (!Number.isSafeInteger(this.size) || this.size < 1)
      throw new CharmsError('CONFIG', `a spell verification pool needs at least one thread, not ${this.size}`);
    this.maxQueued = o.maxQueued ?? 8 * this.size;
    this.timeoutMs = o.timeoutMs ?? 120_000;
    this.minChunk = Math.max(1, o.minChunk ?? 16);
    this.pool = new WorkerPool({
      size: this.size,
      heapMb: 512,
      url: o.workerUrl ?? new URL('./verify-worker.js', import.meta.url),
      name: 'spell verification thread',
    });
  }

  /** The SpellCheck of this pool: the same verdicts as `librarySpellCheck(mock)`, off the event loop. */
  readonly check: SpellCheck = async (raws) => {
    if (this.closed) throw new CharmsError('INTERNAL', 'the spell verification threads were shut down');
    if (raws.length === 0) return [];
    const n = Math.min(this.size, Math.ceil(raws.length / this.minChunk));
    const per = Math.ceil(raws.length / n);
    const chunks: Uint8Array[][] = [];
    for (let i = 0; i < raws.length; i += per) chunks.push(raws.slice(i, i + per));
    if (this.queued + chunks.length > this.maxQueued)
      throw new CharmsError('SERVER_BUSY', `spell verification is busy (${this.queued} batches queued, at most ${this.maxQueued}); try again shortly`);
    this.queued += chunks.length;
    try {
      const answers = await Promise.all(chunks.map((c) => this.verifyChunk(c)));
      return answers.flat();
    } finally {
      this.queued -= chunks.length;
    }
  };

  /** Starts the threads now (each loads its pairing backend) instead of on the first check. */
  warm(): void {
    this.pool.warm();
  }

  /** Stops the threads for good; running and queued checks fail. */
  close(): Promise<void> {
    this.closed = true;
    return this.pool.close();
  }

  private async verifyChunk(raws: Uint8Array[]): Promise<(NormalizedSpell | undefined)[]> {
    const what = `verifying ${raws.length} spell transaction(s)`;
    let outcome: PoolOutcome<VerifyReply> = await this.pool.submit({ raws, mock: this.o.mock }, this.timeoutMs, what);
    if (!outcome.ok && !this.closed) outcome = await this.pool.submit({ raws, mock: this.o.mock }, this.timeoutMs, what); // once more, on a fresh thread
    if (!outcome.ok)
      throw new CharmsError(
        'INTERNAL',
        this.closed
          ? `${what} stopped: ${outcome.error}`
          : `${what} failed twice on a worker thread (${outcome.error}); no verdict was taken, nothing is written`,
      );
    const r = outcome.reply;
    if ('failure' in r) throw new CharmsError('INTERNAL', `${what} failed unexpectedly: ${r.failure}`);
    if (r.spells.length !== raws.length) throw new CharmsError('INTERNAL', `${what}: the thread answered ${r.spells.length} verdicts`);
    this.verified += raws.length;
    return r.spells.map((c) => {
      if (!c) return undefined;
      const spell = revivedSpell(c.spell);
      rememberSpellCbor(spell, c.cbor);
      return spell;
    });
  }
}

/**
 * A spell that crossed a thread boundary, with its `Data` values (app public inputs, output
 * charms, Cardano output contents) made ValueMap and Tagged again: a structured clone keeps
 * Maps, Sets, bigints and byte arrays but not classes.
 */
export function revivedSpell(s: NormalizedSpell): NormalizedSpell {
  for (const pair of s.app_public_inputs) pair[1] = revivedValue(pair[1]);
  for (const charms of s.tx.outs) for (const [k, v] of charms) charms.set(k, revivedValue(v));
  for (const c of s.tx.coins ?? []) if ('content' in c) c.content = revivedValue(c.content);
  return s;
}

function revivedValue(v: Value): Value {
  if (v === null || typeof v !== 'object' || v instanceof Uint8Array) return v;
  if (Array.isArray(v)) return v.map(revivedValue);
  const o = v as unknown as { entries?: [Value, Value][]; indefiniteKeys?: Set<number>; tag?: bigint; value?: Value };
  if (Array.isArray(o.entries)) {
    const m = new ValueMap(o.entries.map(([k, x]) => [revivedValue(k), revivedValue(x)]));
    if (o.indefiniteKeys) m.indefiniteKeys = o.indefiniteKeys;
    return m;
  }
  if (typeof o.tag === 'bigint') return new Tagged(o.tag, revivedValue(o.value));
  throw new CharmsError('INTERNAL', 'a spell from a verification thread holds a value of no known kind');
}
