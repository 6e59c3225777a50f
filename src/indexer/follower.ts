/**
 * The follower: keeps the index equal to the source's best chain, one committed block at a time.
 *
 * - Every block is checked before it is written: the source checks its hash and merkle root
 *   (parseBlock), we check it links to the index tip. A block that does not link while the source
 *   still names our tip as best is a faulty source: an error, nothing written.
 * - Reorgs are found two ways: the next block's previous hash differs from our tip, or the source
 *   names another block at our tip's height (a same-height replacement, with no new block). We walk
 *   back to the highest block we share with the source and roll back above it in one transaction.
 *   Deeper than `maxReorgDepth`: we stop writing and report it until an operator reindexes.
 * - A source that fails leaves the status with its error; the next poll tries again.
 * - Initial sync is pipelined: the next `fetchAhead` blocks are fetched, and their spells verified,
 *   while one is written (a fetched block is only a guess until it links: one that does not is fetched
 *   again before anything is concluded), and while more than `commitBlocks` blocks behind the
 *   node up to `commitBlocks` blocks go into one database transaction (all or none, so a crash
 *   still resumes from a committed block). Near the tip every block is its own transaction.
 *   Memory: at most `fetchAhead + commitBlocks` blocks held, whatever the chain's length.
 */
import { CharmsError } from '../errors.js';
import type { BlockSource, ChainTip } from '../sources/block-source.js';
import type { Block } from '../bitcoin/block.js';
import { blockWrite, displayTxids, type SpellCheck } from './block-write.js';
import type { BlockWrite, IndexWriter, StoredBlock } from './store.js';
import { silentLogger, type Logger } from '../infra/log.js';

export const DEFAULT_MAX_REORG_DEPTH = 100;
const DEFAULT_POLL_MS = 5_000;
export const DEFAULT_FETCH_AHEAD = 4;
export const DEFAULT_COMMIT_BLOCKS = 8;
/** Blocks whose txids the index keeps (`recent_txs`): a day of Bitcoin blocks. */
export const DEFAULT_RECENT_TX_BLOCKS = 144;
/**
 * At most a week of blocks: a lookup keeps the window's sorted txids in memory (~100 kB a full
 * block, store.ts recentTxHeight), so the bound on the window is the bound on that memory.
 */
export const MAX_RECENT_TX_BLOCKS = 1_008;
/** A batch of blocks is committed at the latest after this long (the status stays fresh). */
const BATCH_MS = 2_000;

interface Fetched {
  hash: string | undefined;
  block?: Block;
  /** The block's spells, verified as soon as it arrived (a guess like the block until it links). */
  write?: Promise<BlockWrite>;
}

export interface FollowerOptions {
  startHeight: number;
  maxReorgDepth?: number | undefined;
  pollMs?: number | undefined;
  /** Blocks fetched ahead while one is verified and written (default 4; 1 = one at a time). */
  fetchAhead?: number | undefined;
  /** Blocks per database transaction while far behind the node (default 8; 1 = one per block). */
  commitBlocks?: number | undefined;
  /**
   * The last blocks whose txids are kept with their height (`recent_txs`: confirmations of
   * transactions without charms, explorer-api.ts); default DEFAULT_RECENT_TX_BLOCKS, 0: none. Only
   * blocks within this many of the node's tip are written, so an initial sync skips the rest.
   */
  recentTxBlocks?: number | undefined;
  /** Verifies spells (batched; the mempool's verdict cache in front). */
  check: SpellCheck;
  /** Called as each batch of blocks is committed (the mempool overlay drops what they confirm). */
  afterCommit?: ((blocks: BlockWrite[]) => void) | undefined;
  /** Called after each poll (the mempool overlay refreshes here). */
  afterSync?: ((tip: StoredBlock | undefined) => Promise<void>) | undefined;
  /** Progress lines while syncing (stderr). */
  progress?: ((line: string) => void) | undefined;
  /** Where the follower says what happens (node behind, waiting for the start height, reorgs). */
  log?: Logger | undefined;
  now?: () => number;
}

export interface FollowerStatus {
  node: ChainTip | undefined;
  /** When the node last answered with its tip (a node gone silent leaves `node` as it was). */
  nodeAnsweredAt: number | undefined;
  /** The last error of the source or the store, cleared by the next successful poll. */
  error: { code: string; message: string; at: number } | undefined;
  /** Set when a reorg deeper than the cap was seen: nothing is written any more. */
  unrecoverable: { forkHeight: number; depth: number; at: number } | undefined;
  /** Blocks per second over the last minute of syncing, and the estimated seconds left. */
  rate: number;
  etaSeconds: number | undefined;
  lastPollAt: number | undefined;
  /** The last height this follower committed or found committed (metrics; `/v1/status` reads the store). */
  indexHeight: number | undefined;
  /** Reorgs rolled back since start. */
  reorgs: number;
  /**
   * The node's best chain is a prefix of ours (a shorter chain, nothing replaced: a reindexing or
   * restored node): nothing is rolled back, the index waits until the node catches up.
   */
  nodeBehind: { nodeHeight: number; indexHeight: number; since: number } | undefined;
  /** The node's tip is below the start height: nothing to index yet. */
  waitingForStart: { startHeight: number; nodeHeight: number } | undefined;
  /** Cardano (cardano-follow.ts): the slot of the node's tip. */
  nodeSlot?: number | undefined;
}

const unrecoverableMessage = (maxDepth: number, height: number): string =>
  `reorg deeper than --max-reorg-depth ${maxDepth} below block ${height}: the index stopped; reindex (delete the database or use a new --db)`;

export class Follower {
  readonly status: FollowerStatus = {
    node: undefined,
    nodeAnsweredAt: undefined,
    error: undefined,
    unrecoverable: undefined,
    rate: 0,
    etaSeconds: undefined,
    lastPollAt: undefined,
    indexHeight: undefined,
    reorgs: 0,
    nodeBehind: undefined,
    waitingForStart: undefined,
  };
  private readonly maxDepth: number;
  private readonly pollMs: number;
  private readonly fetchAhead: number;
  private readonly commitBlocks: number;
  private readonly recentTxBlocks: number;
  private readonly now: () => number;
  /** Blocks being fetched ahead, by height (guesses until they link). */
  private readonly ahead = new Map<number, Promise<Fetched>>();
  /** Checked, linked blocks not committed yet (one transaction when flushed). */
  private batch: BlockWrite[] = [];
  private batchSince = 0;
  private applied: number[] = [];
  private lastProgress = 0;
  /** The height the last progress line named (a sync that printed one ends with a final line). */
  private printedHeight: number | undefined;
  /** Since when the node does not answer (logged once when it goes, once when it is back). */
  private nodeDownAt: number | undefined;
  /** "synced at height N" is said once each time the index reaches the tip after falling behind. */
  private syncedSaid = false;
  private stopped = false;
  private wake: (() => void) | undefined;
  /** A notification arrived while a poll ran: poll again at once. */
  private notified = false;
  private running: Promise<void> | undefined;
  /** The store was asked once for an over-cap reorg recorded before this process. */
  private recordedChecked = false;

  constructor(
    private readonly store: IndexWriter,
    private readonly source: BlockSource,
    private readonly o: FollowerOptions,
  ) {
    this.maxDepth = o.maxReorgDepth ?? DEFAULT_MAX_REORG_DEPTH;
    this.pollMs = o.pollMs ?? DEFAULT_POLL_MS;
    this.fetchAhead = Math.max(1, o.fetchAhead ?? DEFAULT_FETCH_AHEAD);
    this.commitBlocks = Math.max(1, o.commitBlocks ?? DEFAULT_COMMIT_BLOCKS);
    this.recentTxBlocks = Math.max(0, o.recentTxBlocks ?? DEFAULT_RECENT_TX_BLOCKS);
    this.now = o.now ?? Date.now;
  }

  /** Brings the index to the source's tip (or as far as it can); never throws, see `status.error`. */
  async syncOnce(): Promise<void> {
    if (this.status.unrecoverable) return;
    // an over-cap reorg recorded before a restart still stops the index, until it is rebuilt
    const recorded = this.recordedChecked ? undefined : await this.store.unrecoverable().catch(() => undefined);
    this.recordedChecked = true;
    if (recorded) {
      this.status.unrecoverable = recorded;
      this.status.error = { code: 'UPSTREAM_FAILED', message: unrecoverableMessage(this.maxDepth, recorded.forkHeight + recorded.depth), at: this.now() };
      return;
    }
    try {
      await this.sync();
      this.status.error = undefined;
    } catch (e) {
      const c = e instanceof CharmsError ? e : new CharmsError('INTERNAL', e instanceof Error ? e.message : String(e), { cause: e });
      this.status.error = { code: c.code, message: c.message, at: this.now() };
    }
    this.status.lastPollAt = this.now();
    try {
      await this.o.afterSync?.(await this.store.tip());
    } catch (e) {
      this.status.error ??= { code: e instanceof CharmsError ? e.code : 'INTERNAL', message: (e as Error).message, at: this.now() };
    }
  }

  private async sync(): Promise<void> {
    try {
      await this.follow();
    } catch (e) {
      // blocks already checked and linked are kept; the error is what the status reports
      await this.flush().catch(() => undefined);
      throw e;
    } finally {
      this.ahead.clear(); // fetches in flight finish unobserved (their errors are handled)
    }
  }

  private answered(node: ChainTip): void {
    this.status.node = node;
    this.status.nodeAnsweredAt = this.now();
  }

  private async follow(): Promise<void> {
    let node = await this.nodeTip();
    let tip = await this.store.tip();
    // more than a block to catch up: "synced at height N" is said again when the tip is reached
    if (!tip || node.height - tip.height > 1) this.syncedSaid = false;
    if (tip && node.height < tip.height) {
      // a shorter node chain is a reorg only if it holds another block at a height we have
      const ours = await this.store.blockAt(node.height);
      if (ours && ours.hash === node.hash) return this.behind(node, tip.height);
    }
    this.caughtUp(node);
    // a same-height replacement (or any reorg the node settled on while we slept)
    if (tip && (await this.source.hashAt(tip.height)) !== tip.hash) tip = await this.reorg(tip);
    if (!tip && node.height < this.o.startHeight) {
      if (!this.status.waitingForStart)
        this.log.warn(`waiting for the node to reach the start height ${this.o.startHeight} (node at ${node.height})`, {
          event: 'waiting_for_start',
          start_height: this.o.startHeight,
          node_height: node.height,
        });
      this.status.waitingForStart = { startHeight: this.o.startHeight, nodeHeight: node.height };
      return;
    }
    this.status.waitingForStart = undefined;
    while (!this.stopped) {
      const next = tip ? tip.height + 1 : this.o.startHeight;
      if (next > node.height) {
        await this.flush();
        node = await this.nodeTip();
        if (next > node.height) break;
      }
      const early = this.ahead.has(next);
      let { hash, block, write: fetchedWrite } = await this.fetched(next, node.height);
      if (hash === undefined) break; // the node's chain shrank: the next poll sees the reorg
      if (tip && early && block!.header.prevHash !== tip.hash) {
        // a block fetched ahead may be from before a reorg: fetch it again before concluding
        this.ahead.clear();
        await this.flush();
        ({ hash, block, write: fetchedWrite } = await this.fetch(next));
        if (hash === undefined) break;
      }
      if (tip && block!.header.prevHash !== tip.hash) {
        // the blocks waiting in the batch link to the stored tip: commit them, so that the walk
        // below finds the fork among stored blocks (it reads the store) and rolls them back too
        await this.flush();
        if ((await this.source.hashAt(tip.height)) === tip.hash)
          throw new CharmsError(
            'UPSTREAM_FAILED',
            `${this.source.name}: block ${next} ${hash} does not link to block ${tip.height} ${tip.hash} that it names as best`,
          );
        tip = await this.reorg(tip);
        continue;
      }
      const b = block!;
      if (this.batch.length === 0) this.batchSince = this.now();
      // a verification that failed ahead of its turn (e.g. the threads were busy) is tried once more now
      const w = await fetchedWrite!.catch(() => blockWrite(b, next, this.o.check));
      // every txid of the last recentTxBlocks blocks below the node's tip, with its height
      if (next > node.height - this.recentTxBlocks) w.txids = displayTxids(b);
      w.recentFrom = next - this.recentTxBlocks + 1;
      this.batch.push(w);
      tip = { height: next, hash: b.header.hash, prevHash: b.header.prevHash, time: b.header.time };
      // far behind: more blocks join this transaction; near the tip each block is committed alone
      const far = node.height - next >= this.commitBlocks;
      if (!far || this.batch.length >= this.commitBlocks || this.now() - this.batchSince >= BATCH_MS) await this.flush(node.height);
    }
    await this.flush();
    this.progress(tip?.height ?? this.o.startHeight - 1, node.height, true);
    if (tip && !this.stopped && tip.height >= node.height && !this.syncedSaid) {
      this.syncedSaid = true;
      this.log.info(`synced at height ${tip.height}`, { event: 'synced', height: tip.height, hash: tip.hash });
    }
  }

  /** The node's tip; a node that stops answering, and its return, are logged once each. */
  private async nodeTip(): Promise<ChainTip> {
    let node: ChainTip;
    try {
      node = await this.source.tip();
    } catch (e) {
      if (this.nodeDownAt === undefined) {
        this.nodeDownAt = this.now();
        this.log.warn(`node unreachable: ${this.source.name}: ${(e as Error).message}; retrying at each poll`, {
          event: 'node_unreachable',
          source: this.source.name,
          error: (e as Error).message,
          ...(e instanceof CharmsError ? { code: e.code } : {}),
        });
      }
      throw e;
    }
    if (this.nodeDownAt !== undefined) {
      this.log.info(`node back: ${this.source.name} answers again, at height ${node.height}`, {
        event: 'node_back',
        source: this.source.name,
        node_height: node.height,
        down_ms: this.now() - this.nodeDownAt,
      });
      this.nodeDownAt = undefined;
    }
    this.answered(node);
    return node;
  }

  private get log(): Logger {
    return this.o.log ?? silentLogger;
  }

  /** The node is behind our tip on the same chain: wait (status and one log line), write nothing. */
  private behind(node: ChainTip, indexHeight: number): void {
    if (!this.status.nodeBehind)
      this.log.warn(`node behind: the node is at ${node.height}, the index at ${indexHeight} on the same chain; waiting for it to catch up`, {
        event: 'node_behind',
        node_height: node.height,
        index_height: indexHeight,
      });
    this.status.nodeBehind = { nodeHeight: node.height, indexHeight, since: this.status.nodeBehind?.since ?? this.now() };
  }

  private caughtUp(node: ChainTip): void {
    if (!this.status.nodeBehind) return;
    this.log.info(`node caught up: the node is at ${node.height}; following again`, { event: 'node_caught_up', node_height: node.height });
    this.status.nodeBehind = undefined;
  }

  /** Commits the blocks waiting in the batch, in one transaction. */
  private async flush(nodeHeight = this.status.node?.height ?? 0): Promise<void> {
    if (this.batch.length === 0) return;
    const bs = this.batch;
    this.batch = [];
    if (bs.length === 1) await this.store.applyBlock(bs[0]!);
    else await this.store.applyBlocks(bs);
    this.o.afterCommit?.(bs);
    for (const b of bs) this.progress(b.height, nodeHeight);
  }

  private fetch(height: number): Promise<Fetched> {
    return (async () => {
      const hash = await this.source.hashAt(height);
      if (hash === undefined) return { hash };
      const block = await this.source.block(hash);
      // verified at once (on the worker threads) while the blocks before it are verified and
      // written: the pipeline's overlap. Dropped with the block if it does not link.
      const write = blockWrite(block, height, this.o.check);
      write.catch(() => undefined); // observed when its turn comes, or dropped with the window
      return { hash, block, write };
    })();
  }

  /** The block at `height`, with the next ones (up to `fetchAhead`, not above `nodeHeight`) requested meanwhile. */
  private fetched(height: number, nodeHeight: number): Promise<Fetched> {
    for (const h of this.ahead.keys()) if (h < height) this.ahead.delete(h);
    const last = Math.min(nodeHeight, height + this.fetchAhead - 1);
    for (let h = height; h <= last; h++)
      if (!this.ahead.has(h)) {
        const p = this.fetch(h);
        p.catch(() => undefined); // observed when its turn comes, or dropped with the window
        this.ahead.set(h, p);
      }
    const p = this.ahead.get(height) ?? this.fetch(height);
    this.ahead.delete(height);
    return p;
  }

  /** Finds the fork below `tip`, rolls back to it (or stops at the cap); returns the new tip. */
  private async reorg(tip: StoredBlock): Promise<StoredBlock | undefined> {
    let h = tip.height - 1;
    for (;;) {
      const depth = tip.height - h;
      if (depth > this.maxDepth) {
        const u = { forkHeight: h, depth, at: this.now() };
        this.status.unrecoverable = u;
        this.log.error(`reorg deeper than --max-reorg-depth ${this.maxDepth}: the index stopped writing; reindex`, {
          event: 'reorg_over_cap',
          depth,
          fork_height: h,
          old_tip: tip.hash,
          max_reorg_depth: this.maxDepth,
        });
        await this.store.markUnrecoverable(u); // so that a restart and the --api-only readers know
        throw new CharmsError('UPSTREAM_FAILED', unrecoverableMessage(this.maxDepth, tip.height));
      }
      const ours = await this.store.blockAt(h);
      if (!ours) break; // below the first indexed block: everything we have is gone
      if ((await this.source.hashAt(h)) === ours.hash) break;
      h--;
    }
    const node = await this.source.tip();
    const newTip = node.hash;
    const depth = tip.height - h;
    await this.store.rollbackTo(h, { at: this.now(), depth, oldTip: tip.hash, newTip });
    this.status.reorgs++;
    this.log.warn(`reorg: rolled back ${depth} blocks to the fork at ${h}; old tip ${tip.hash}, new tip ${newTip} at ${node.height}`, {
      event: 'reorg',
      depth,
      fork_height: h,
      old_tip: tip.hash,
      new_tip: newTip,
      new_tip_height: node.height,
    });
    return this.store.tip();
  }

  private progress(height: number, nodeHeight: number, final = false): void {
    this.status.indexHeight = height;
    const t = this.now();
    if (!final) {
      this.applied.push(t);
      while (this.applied.length > 0 && this.applied[0]! < t - 60_000) this.applied.shift();
    }
    const span = this.applied.length > 1 ? (t - this.applied[0]!) / 1000 : 0;
    this.status.rate = span > 0 ? (this.applied.length - 1) / span : 0;
    const left = Math.max(0, nodeHeight - height);
    this.status.etaSeconds = left === 0 ? 0 : this.status.rate > 0 ? Math.round(left / this.status.rate) : undefined;
    // the last line of a sync that printed any is printed too ("block 10 of 10", not "8 of 10")
    const last = final && this.printedHeight !== undefined && this.printedHeight !== height;
    if (this.o.progress && ((left > 0 && t - this.lastProgress >= 2_000) || last)) {
      this.lastProgress = t;
      this.printedHeight = height;
      this.o.progress(`index: block ${height} of ${nodeHeight}, ${this.status.rate.toFixed(1)} blocks/s, ETA ${this.status.etaSeconds ?? '?'} s`);
    }
    if (final) this.printedHeight = undefined;
  }

  /** Polls until stop(); `notify()` (a ZMQ message) polls at once. */
  start(): void {
    this.running ??= (async () => {
      while (!this.stopped) {
        this.notified = false;
        await this.syncOnce();
        if (this.stopped) break;
        if (this.notified) continue;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.pollMs);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wake = undefined;
      }
    })();
  }

  notify(): void {
    this.notified = true;
    this.wake?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.running;
  }
}
