/**
 * The Cardano follower: keeps the index equal to the chain Ogmios' cardano-node follows, over the
 * same store (`IndexWriter`: `applyBlocks`, `rollbackTo`, `markUnrecoverable`), the same status
 * (follower.ts `FollowerStatus`, so /v1/status and the metrics read it unchanged) and the same
 * reorg cap as the Bitcoin follower; what only Cardano needs is here and in cardano/charm-moves.ts.
 *
 * - Chain sync is pushed, not polled (sources/ogmios.ts): every roll forward is one block, every
 *   roll backward a point every later block is undone to, in one database transaction
 *   (`rollbackTo`). A point more than `maxReorgDepth` (default k = 2160, the security parameter:
 *   no valid rollback is deeper) below the tip, or one the index never had: nothing is written
 *   any more, the status says so (503) and the log too, until an operator reindexes.
 * - The intersection points offered on every (re)connection are the committed blocks at
 *   `intersectionHeights` (tip, tip-1, tip-2, tip-4, … down to tip - maxReorgDepth), then the start
 *   point: a rollback of any depth the index can undo still intersects.
 * - Each block's transactions: their ids were checked against their bodies (ogmios-protocol.ts);
 *   spells are verified as `tx show-spell --chain cardano` does (verify/index.ts, mock only with
 *   `mock`), and charm moves follow charm-moves.ts: verified spells, and the native assets of
 *   learned token apps in every transaction (virtual moves; NFTs only by spell). Learned apps are
 *   stored with their height (a rollback un-learns them) and read back after every rollback.
 * - While far behind the node's tip, up to `commitBlocks` blocks go into one transaction (all or
 *   none: a crash resumes from a committed block, the node re-sends the rest).
 * - Byron epoch-boundary blocks hold no transactions and share their height with the block before
 *   them: they are not stored; the next block's ancestor is read through them.
 *
 * Trust: the operator's cardano-node chooses the chain. Ogmios sends no block CBOR, so the block
 * body hash is not checked: each transaction is (its id against its body, its spell against its
 * proof).
 */
import { CharmsError } from '../errors.js';
import { silentLogger, type Logger } from '../infra/log.js';
import type { CardanoNetwork } from '../model/network.js';
import { appFromString, appToString } from '../model/primitives.js';
import { encodeSpellCbor, type NormalizedSpell } from '../model/spell.js';
import { cardanoTxMoves, LearnedTokens } from '../cardano/charm-moves.js';
import { parseCardanoTx } from '../cardano/tx.js';
import { intersectionHeights } from '../sources/ogmios.js';
import { parsePoint, type ChainSyncEvent, type PointOrOrigin } from '../sources/ogmios-protocol.js';
import { verifySpells } from '../verify/index.js';
import type { FollowerStatus } from './follower.js';
import type { BlockWrite, IndexWriter, InputWrite, StoredBlock } from './store.js';

/** Cardano's security parameter k on every public network: no valid rollback is deeper. */
export const CARDANO_MAX_REORG_DEPTH = 2160;
const DEFAULT_COMMIT_BLOCKS = 8;
/** A batch of blocks is committed at the latest after this long. */
const BATCH_MS = 2_000;
const GENESIS = '00'.repeat(32);

/**
 * Unix seconds of a slot: Shelley-era slots last 1 s from the Shelley hard fork's first slot on
 * (`zeroSlot` at `zeroTime`), Byron's 20 s before it. From each network's published genesis
 * (`systemStart`: mainnet 2017-09-23T21:44:51Z, preprod 2022-06-01T00:00:00Z, preview
 * 2022-10-25T00:00:00Z) and the epoch Shelley began (mainnet 208, preprod 4, preview 0).
 */
const SLOT_CLOCK: Record<CardanoNetwork['name'], { zeroSlot: number; zeroTime: number }> = {
  mainnet: { zeroSlot: 4_492_800, zeroTime: 1_596_059_091 },
  preprod: { zeroSlot: 86_400, zeroTime: 1_655_769_600 },
  preview: { zeroSlot: 0, zeroTime: 1_666_656_000 },
};

export function slotTime(network: CardanoNetwork, slot: number): number {
  const c = SLOT_CLOCK[network.name];
  return slot >= c.zeroSlot ? c.zeroTime + (slot - c.zeroSlot) : c.zeroTime - (c.zeroSlot - slot) * 20;
}

/**
 * The start point `--start-point <slot>.<block hash>` or `--start-slot 0` (the origin; only 0:
 * Ogmios intersects on a slot and its block's hash) ask for, if any.
 */
export function askedStartPoint(o: { startPoint?: string | undefined; startSlot?: string | undefined }): PointOrOrigin | undefined {
  if (o.startPoint !== undefined && o.startSlot !== undefined) throw new CharmsError('INVALID_INPUT', '--start-point and --start-slot: give one of them');
  if (o.startSlot !== undefined && o.startSlot.trim() !== '0')
    throw new CharmsError(
      'INVALID_INPUT',
      `--start-slot ${JSON.stringify(o.startSlot.slice(0, 40))}: only 0 (the origin); Ogmios needs a block hash too: use --start-point <slot>.<block hash>`,
    );
  return o.startSlot !== undefined ? 'origin' : o.startPoint === undefined ? undefined : parsePoint(o.startPoint);
}

/**
 * The start point of a Cardano index: the one it was first started with (`stored`, meta
 * `start_point`: the asked one, else the network's default, start-height.ts
 * CARDANO_DEFAULT_START_POINTS), which an `asked` one must equal.
 */
export function cardanoStartPoint(asked: PointOrOrigin | undefined, stored: string, label: string): PointOrOrigin {
  const s = parsePoint(stored);
  if (asked !== undefined && pointText(asked) !== pointText(s))
    throw new CharmsError(
      'CONFIG',
      `start point ${pointText(asked)}, but the index at ${label} starts after ${pointText(s)}: drop --start-point/--start-slot to keep it, or index into a new --db`,
    );
  return s;
}

/** What the follower reads events from: an `OgmiosFollower` (reconnects itself), or a test's. */
export interface ChainSync {
  next(): Promise<ChainSyncEvent>;
  close(): void;
  status?(): { connected: boolean; lastEventAt: number | undefined; lastError: string | undefined };
}

export interface CardanoFollowerOptions {
  network: CardanoNetwork;
  /** The point the index starts after (`origin`: the genesis). */
  startPoint: PointOrOrigin;
  maxReorgDepth?: number | undefined;
  /** Blocks per database transaction while far behind the node (default 8; 1 = one per block). */
  commitBlocks?: number | undefined;
  /** Mock spells count (`--mock`). */
  mock: boolean;
  /** Spells of a block's transactions, verified; default: the library on this thread (verifySpells). */
  verify?: ((raws: Uint8Array[]) => (NormalizedSpell | undefined)[]) | undefined;
  log?: Logger | undefined;
  progress?: ((line: string) => void) | undefined;
  now?: (() => number) | undefined;
}

/** The Bitcoin follower's status, with the slots of the node's tip and of the index. */
export interface CardanoFollowerStatus extends FollowerStatus {
  nodeSlot: number | undefined;
  indexSlot: number | undefined;
}

/** `<slot>.<hash>` or `origin`, as `--start-point` takes it. */
export const pointText = (p: PointOrOrigin): string => (p === 'origin' ? 'origin' : `${p.slot}.${p.id}`);

export class CardanoFollower {
  private readonly st: CardanoFollowerStatus = {
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
    nodeSlot: undefined,
    indexSlot: undefined,
  };
  private readonly maxDepth: number;
  private readonly commitBlocks: number;
  private readonly now: () => number;
  private readonly verify: (raws: Uint8Array[]) => (NormalizedSpell | undefined)[];
  private sync: ChainSync | undefined;
  private learned = new LearnedTokens();
  /** The tip as written or waiting in the batch. */
  private tip: StoredBlock | undefined;
  private batch: BlockWrite[] = [];
  private batchSince = 0;
  /** The last epoch-boundary block seen: its id and the block before it. */
  private ebb: { id: string; ancestor: string } | undefined;
  private stopped = false;
  private running: Promise<void> | undefined;
  private applied: number[] = [];
  private lastProgress = 0;

  constructor(
    private readonly store: IndexWriter,
    private readonly connect: (points: () => Promise<PointOrOrigin[]>) => ChainSync,
    private readonly o: CardanoFollowerOptions,
  ) {
    this.maxDepth = Math.max(1, o.maxReorgDepth ?? CARDANO_MAX_REORG_DEPTH);
    this.commitBlocks = Math.max(1, o.commitBlocks ?? DEFAULT_COMMIT_BLOCKS);
    this.now = o.now ?? Date.now;
    this.verify =
      o.verify ??
      ((raws) =>
        verifySpells(
          raws.map((cardano) => ({ cardano })),
          o.mock,
        ).map((v) => (v.ok ? v.spell : undefined)));
  }

  private get log(): Logger {
    return this.o.log ?? silentLogger;
  }

  /** The status, with the connection's (a silent or dead Ogmios shows as the last error). */
  get status(): CardanoFollowerStatus {
    const c = this.sync?.status?.();
    if (c?.lastError && !this.st.error) return { ...this.st, error: { code: 'UPSTREAM_UNAVAILABLE', message: c.lastError, at: this.now() } };
    return this.st;
  }

  /** The points to intersect with, newest first: committed blocks, exponentially spaced, then the start point. */
  async points(): Promise<PointOrOrigin[]> {
    const tip = await this.store.tip();
    const out: PointOrOrigin[] = [];
    if (tip)
      for (const h of intersectionHeights(tip.height, Math.max(0, tip.height - this.maxDepth))) {
        const b = h === tip.height ? tip : await this.store.blockAt(h);
        if (b?.slot !== undefined) out.push({ slot: b.slot, id: b.hash });
      }
    out.push(this.o.startPoint);
    return out;
  }

  /** Follows until `stop()` or an error that needs the operator (status.error, logged). */
  start(): void {
    this.running ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.sync?.close();
    await this.running;
  }

  private async run(): Promise<void> {
    try {
      if (await this.recordedUnrecoverable()) return;
      this.tip = await this.store.tip();
      this.st.indexHeight = this.tip?.height;
      this.st.indexSlot = this.tip?.slot;
      await this.reloadLearned();
      this.sync = this.connect(() => this.points());
      while (!this.stopped) {
        const ev = await this.sync.next();
        this.st.lastPollAt = this.now();
        this.st.nodeAnsweredAt = this.now();
        if (ev.tip !== 'origin') {
          this.st.node = { height: ev.tip.height, hash: ev.tip.id };
          this.st.nodeSlot = ev.tip.slot;
        }
        if (ev.direction === 'forward') await this.forward(ev);
        else await this.backward(ev);
        this.st.error = undefined;
      }
    } catch (e) {
      if (this.stopped) return;
      const c = e instanceof CharmsError ? e : new CharmsError('INTERNAL', e instanceof Error ? e.message : String(e), { cause: e });
      this.st.error = { code: c.code, message: c.fullMessage, at: this.now() };
      this.log.error('the Cardano index stopped', { event: 'cardano_follow_stopped', error: c.fullMessage, code: c.code });
    } finally {
      await this.flush().catch((e) => this.log.error('the Cardano index could not commit its last blocks', { error: (e as Error).message }));
      this.sync?.close();
    }
  }

  /** An over-cap rollback recorded before a restart still stops the index, until it is rebuilt. */
  private async recordedUnrecoverable(): Promise<boolean> {
    const u = await this.store.unrecoverable();
    if (!u) return false;
    this.st.unrecoverable = u;
    this.st.error = { code: 'UPSTREAM_FAILED', message: overCap(this.maxDepth), at: this.now() };
    return true;
  }

  private async reloadLearned(): Promise<void> {
    const l = new LearnedTokens();
    for (const t of await this.store.learnedTokens()) l.add(appFromString(t.app));
    this.learned = l;
  }

  private async forward(ev: Extract<ChainSyncEvent, { direction: 'forward' }>): Promise<void> {
    const b = ev.block;
    if (b.type === 'ebb') {
      // no transactions, the height of the block before it: read through, not stored
      this.ebb = { id: b.id, ancestor: this.ebb?.id === b.ancestor ? this.ebb.ancestor : b.ancestor };
      return;
    }
    const ancestor = b.ancestor === 'genesis' ? GENESIS : this.ebb?.id === b.ancestor ? this.ebb.ancestor : b.ancestor;
    const tip = this.tip;
    if (tip && (b.height !== tip.height + 1 || ancestor !== tip.hash))
      throw new CharmsError(
        'UPSTREAM_FAILED',
        `Ogmios sent block ${b.height} ${b.id} (ancestor ${b.ancestor}), which does not extend the index tip ${tip.height} ${tip.hash}`,
      );
    if (!tip) {
      const start = this.o.startPoint;
      const expected = start === 'origin' ? GENESIS : start.id;
      if (ancestor !== expected)
        throw new CharmsError(
          'UPSTREAM_FAILED',
          `Ogmios sent block ${b.height} ${b.id} as the first after the start point ${pointText(start)}, but its ancestor is ${b.ancestor}`,
        );
    }
    const w = this.blockWrite(b, ancestor);
    if (this.batch.length === 0) this.batchSince = this.now();
    this.batch.push(w);
    this.tip = { height: w.height, hash: w.hash, prevHash: w.prevHash, time: w.time, slot: w.slot };
    const far = ev.tip.height - b.height >= this.commitBlocks;
    if (!far || this.batch.length >= this.commitBlocks || this.now() - this.batchSince >= BATCH_MS) await this.flush();
  }

  /** What a block changes: its verified spells and the charm moves of each transaction. */
  private blockWrite(b: Extract<ChainSyncEvent, { direction: 'forward' }>['block'], prevHash: string): BlockWrite {
    const w: BlockWrite = {
      height: b.height,
      hash: b.id,
      prevHash,
      time: slotTime(this.o.network, b.slot ?? 0),
      slot: b.slot,
      spellTxs: [],
      outputs: [],
      inputs: [],
      beamed: [],
      learned: [],
    };
    // Byron blocks: no native assets, no spells, nothing a charm output could be spent by
    if (b.type !== 'praos' || b.transactions.length === 0) return w;
    const spells = this.verify(b.transactions.map((t) => t.cbor));
    const inputs: InputWrite[] = [];
    b.transactions.forEach((t, i) => {
      let parsed: ReturnType<typeof parseCardanoTx>;
      try {
        parsed = parseCardanoTx(t.cbor);
      } catch (e) {
        // a transaction the node accepted and our decoder cannot read: said, and skipped
        this.log.warn('a Cardano transaction could not be read; its charm moves are skipped', { txid: t.id, height: b.height, error: (e as Error).message });
        return;
      }
      const spell = spells[i];
      const m = cardanoTxMoves(parsed, t.id, i, spell, this.learned);
      if (spell !== undefined && !m.virtual) w.spellTxs.push({ txid: t.id, txIndex: i, version: spell.version, spell: encodeSpellCbor(spell) });
      w.outputs.push(...m.outputs);
      w.beamed!.push(...m.beamed);
      w.learned!.push(...m.learned.map(appToString));
      inputs.push(...m.inputs);
    });
    w.inputs = inputs;
    return w;
  }

  /** Undoes every block after `ev.point`, in one transaction (or stops, past the cap). */
  private async backward(ev: Extract<ChainSyncEvent, { direction: 'backward' }>): Promise<void> {
    await this.flush();
    this.ebb = undefined;
    const tip = await this.store.tip();
    this.tip = tip;
    if (!tip) return; // nothing indexed yet: nothing to undo
    const p = ev.point;
    if (p !== 'origin' && p.id === tip.hash) return; // the intersection at our tip: the usual answer
    const toStart = p === 'origin' || (this.o.startPoint !== 'origin' && p.id === this.o.startPoint.id);
    let fork: number | undefined;
    for (let h = tip.height - 1; tip.height - h <= this.maxDepth; h--) {
      const ours = h < 0 ? undefined : await this.store.blockAt(h);
      if (!ours) {
        if (toStart) fork = h; // below the first indexed block: everything we have is undone
        break;
      }
      if (!toStart && ours.hash === (p as { id: string }).id) {
        fork = h;
        break;
      }
    }
    if (fork === undefined) {
      const u = { forkHeight: Math.max(-1, tip.height - this.maxDepth - 1), depth: this.maxDepth + 1, at: this.now() };
      this.st.unrecoverable = u;
      this.log.error(`rollback deeper than --max-reorg-depth ${this.maxDepth} (to ${pointText(p)}): the index stopped writing; reindex`, {
        event: 'reorg_over_cap',
        point: pointText(p),
        old_tip: tip.hash,
        max_reorg_depth: this.maxDepth,
      });
      await this.store.markUnrecoverable(u);
      throw new CharmsError('UPSTREAM_FAILED', overCap(this.maxDepth));
    }
    const depth = tip.height - fork;
    const newTip = ev.tip === 'origin' ? GENESIS : ev.tip.id;
    await this.store.rollbackTo(fork, { at: this.now(), depth, oldTip: tip.hash, newTip });
    await this.reloadLearned();
    this.tip = await this.store.tip();
    this.st.indexHeight = this.tip?.height;
    this.st.indexSlot = this.tip?.slot;
    this.st.reorgs++;
    this.log.warn(`rollback: undid ${depth} blocks to ${pointText(p)} (height ${fork}); old tip ${tip.hash}`, {
      event: 'reorg',
      depth,
      fork_height: fork,
      old_tip: tip.hash,
      new_tip: newTip,
    });
  }

  private async flush(): Promise<void> {
    if (this.batch.length === 0) return;
    const bs = this.batch;
    this.batch = [];
    try {
      await this.store.applyBlocks(bs);
    } catch (e) {
      // nothing of the batch was written: what it learned is forgotten too
      this.tip = await this.store.tip().catch(() => undefined);
      await this.reloadLearned().catch(() => undefined);
      throw e;
    }
    const last = bs[bs.length - 1]!;
    this.st.indexHeight = last.height;
    this.st.indexSlot = last.slot;
    this.progress(last.height, bs.length);
  }

  private progress(height: number, blocks: number): void {
    const t = this.now();
    for (let i = 0; i < blocks; i++) this.applied.push(t);
    while (this.applied.length > 0 && this.applied[0]! < t - 60_000) this.applied.shift();
    const span = this.applied.length > 1 ? (t - this.applied[0]!) / 1000 : 0;
    this.st.rate = span > 0 ? (this.applied.length - 1) / span : 0;
    const left = Math.max(0, (this.st.node?.height ?? height) - height);
    this.st.etaSeconds = left === 0 ? 0 : this.st.rate > 0 ? Math.round(left / this.st.rate) : undefined;
    if (this.o.progress && left > 0 && t - this.lastProgress >= 2_000) {
      this.lastProgress = t;
      this.o.progress(`index: Cardano block ${height} of ${this.st.node?.height}, ${this.st.rate.toFixed(1)} blocks/s, ETA ${this.st.etaSeconds ?? '?'} s`);
    }
  }
}

const overCap = (maxDepth: number): string =>
  `rollback deeper than --max-reorg-depth ${maxDepth}: the index stopped; reindex (delete the database or use a new --db)`;
