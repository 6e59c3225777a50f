/**
 * The charms index's store: two interfaces by role (`IndexReader` for the API, `IndexWriter` for
 * the follower), one schema (schema.ts), one SQL text, two engines behind a tiny `Driver`
 * (driver.ts; SQLite through better-sqlite3, PostgreSQL through pg: sqlite-driver.ts,
 * pg-driver.ts). Nothing here is Bitcoin-specific beyond "outputs are spent by inputs": a Cardano
 * follower writes the same `BlockWrite`s.
 *
 * Every answer reads one snapshot: a read method of several queries opens one, and `read(fn)`
 * makes one of all the reads `fn` does (driver.ts).
 *
 * Writes come in whole blocks (`applyBlock`) and whole rollbacks (`rollbackTo`), each one database
 * transaction: the index tip is `MAX(blocks.height)`, so a crash leaves the last committed block
 * and nothing half-written.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { CharmsError } from '../errors.js';
import type { Driver, Engine, ReadTx, Row, SnapshotReads, TxDriver, WriteWait } from './driver.js';
import { setMeta, type IndexMeta } from './schema.js';
import { catalogueBlock, catalogueRollback } from './catalogue.js';
import { dexBlock, dexRollback } from './dex.js';

// ---------------------------------------------------------------------------------------- types

/** One charm of one output: an app and its amount (fungible) or data (CBOR, anything else). */
export interface CharmOutputWrite {
  txid: string;
  txIndex: number;
  vout: number;
  app: string;
  /** Fungible amount (tag `t` with an integer value), u64. */
  amount: bigint | null;
  /** CBOR of the charm value when not a fungible amount. */
  data: Uint8Array | null;
  script: Uint8Array;
  sats: bigint;
}

/** An input of any transaction of the block: it spends `prevTxid:prevVout`. */
export interface InputWrite {
  txid: string;
  txIndex: number;
  vin: number;
  prevTxid: string;
  prevVout: number;
}

/**
 * The inputs of a block read in place (a Bitcoin block has thousands, nearly none spending a
 * charm output): how many, each one's `outpointDigest`, and each one in full on demand.
 */
export interface BlockInputs {
  readonly length: number;
  /** `outpointDigest(prevTxid, prevVout)` of input `i`. */
  digest(i: number): number;
  at(i: number): InputWrite;
}

/** A 30-bit digest of the number `head` (a txid's first 8 hex digits) and a vout. */
export const outpointDigestOf = (head: number, vout: number): number => (head ^ Math.imul(vout, 0x9e3779b1)) & 0x3fffffff;

/** The digest of an outpoint: a quick "may be one of them" test before the full `txid:vout` key. */
const outpointDigest = (txid: string, vout: number): number => outpointDigestOf(Number.parseInt(txid.slice(0, 8), 16), vout);

/** The unspent charm outpoints (`txid:vout`), with a count per digest for a quick miss. */
class OutpointSet {
  private readonly keys = new Set<string>();
  private readonly digests = new Map<number, number>();
  add(txid: string, vout: number): void {
    const key = `${txid}:${vout}`;
    if (this.keys.has(key)) return;
    this.keys.add(key);
    const d = outpointDigest(txid, vout);
    this.digests.set(d, (this.digests.get(d) ?? 0) + 1);
  }
  has(txid: string, vout: number): boolean {
    return this.keys.has(`${txid}:${vout}`);
  }
  /** False when no unspent outpoint has this digest. */
  mayHave(digest: number): boolean {
    return this.digests.has(digest);
  }
  /** Removes the outpoint; false when it was not there. */
  take(txid: string, vout: number): boolean {
    if (!this.keys.delete(`${txid}:${vout}`)) return false;
    const d = outpointDigest(txid, vout);
    const c = this.digests.get(d)!;
    if (c > 1) this.digests.set(d, c - 1);
    else this.digests.delete(d);
    return true;
  }
}

const listInputs = (list: InputWrite[]): BlockInputs => ({
  length: list.length,
  digest: (i) => outpointDigest(list[i]!.prevTxid, list[i]!.prevVout),
  at: (i) => list[i]!,
});

interface SpellTxWrite {
  txid: string;
  txIndex: number;
  version: number;
  /** The normalized spell's CBOR. */
  spell: Uint8Array;
}

export interface BlockWrite {
  height: number;
  hash: string;
  prevHash: string;
  time: number;
  spellTxs: SpellTxWrite[];
  outputs: CharmOutputWrite[];
  /** Every input of every transaction (those that spend no charm output are ignored). */
  inputs: InputWrite[] | BlockInputs;
  /**
   * The txids of all the block's transactions (32 bytes each, in the stored byte order: that of
   * their display hex) for `recent_txs`, when the block is within the window the follower keeps;
   * absent: not kept.
   */
  txids?: Uint8Array | undefined;
  /** `recent_txs` rows of blocks below this height are dropped in the block's transaction (absent: none). */
  recentFrom?: number | undefined;
  /** Cardano: the block's slot (its intersection point is slot + hash). */
  slot?: number | undefined;
  /** Outputs a spell beams to another chain: recorded with their destination, not held (Cardano). */
  beamed?: BeamedOutputWrite[] | undefined;
  /** Token apps first learned from this block's verified spells (Cardano virtual moves). */
  learned?: string[] | undefined;
}

/** A charm output beamed to another chain: `dest` is the destination hash (hex) there. */
interface BeamedOutputWrite extends CharmOutputWrite {
  beamedTo: string;
}

export interface BeamedOutputRow extends BeamedOutputWrite {
  createdHeight: number;
}

export interface StoredBlock {
  height: number;
  hash: string;
  prevHash: string;
  time: number;
  /** Cardano blocks' slot (undefined on Bitcoin). */
  slot?: number | undefined;
}

export interface CharmOutputRow {
  txid: string;
  vout: number;
  app: string;
  amount: bigint | null;
  data: Uint8Array | null;
  script: Uint8Array;
  sats: bigint;
  createdHeight: number;
  txIndex: number;
  spent: { txid: string; vin: number; height: number } | null;
}

/** An unspent charm output (one app of it) as the explorer-compatible API shows it. */
export interface WalletOutputRow {
  txid: string;
  vout: number;
  app: string;
  amount: bigint | null;
  sats: bigint;
  createdHeight: number;
}

export interface HistoryEntry {
  txid: string;
  height: number;
  txIndex: number;
  /** Per app: what the script received and sent in this transaction (amounts; NFTs: output counts). */
  changes: { app: string; received: bigint; sent: bigint }[];
}

/** The unspent charm outputs of the committed index as of `writes` block writes and rollbacks. */
export interface CharmOutpoints {
  writes: number;
  has(txid: string, vout: number): boolean;
  /** Whether the committed index is still the state `has` answers for (no write since, none running). */
  current(): boolean;
}

export interface AppHolders {
  supply: bigint;
  holders: number;
  page: { script: Uint8Array; amount: bigint; utxos: number }[];
}

/** A reorg deeper than `--max-reorg-depth`: the index stopped writing at it. */
export interface UnrecoverableReorg {
  forkHeight: number;
  depth: number;
  at: number;
}

export interface ReorgRow {
  at: number;
  forkHeight: number;
  depth: number;
  oldTip: string;
  newTip: string;
}

export interface SpellTxRow {
  txid: string;
  height: number;
  txIndex: number;
  version: number;
  spell: Uint8Array;
}

/** Position in a paged list: exclusive, opaque to clients (see api.ts). */
export interface HistoryCursor {
  height: number;
  txIndex: number;
}

/** An unspent charm output's app and amount (null: not fungible), and its outpoint when asked ('' and -1 when not). */
export interface AmountRow {
  txid: string;
  vout: number;
  app: string;
  amount: bigint | null;
}

/**
 * The reads of the index: what an API instance needs (an `--api-only` reader holds only these).
 * Each read method is one snapshot; `read(fn)` makes several one: every read method called inside
 * `fn` (and every query of its `ReadTx`) sees the same committed state (driver.ts).
 */
export interface IndexReader extends SnapshotReads {
  readonly engine: Engine;
  meta(): Promise<IndexMeta>;
  /** The last committed block. */
  tip(): Promise<StoredBlock | undefined>;
  blockAt(height: number): Promise<StoredBlock | undefined>;
  lastReorg(): Promise<ReorgRow | undefined>;
  /** The over-cap reorg that stopped the index, if one did (readers see it too). */
  unrecoverable(): Promise<UnrecoverableReorg | undefined>;
  /** Unspent charm outputs paying `script`, by txid, vout, app. */
  unspentByScript(script: Uint8Array): Promise<CharmOutputRow[]>;
  /**
   * The explorer-compatible API's read of the unspent charm outputs paying `script`: the rows of
   * `unspentByScript` in the same order, with only the columns a wallet's balance shows.
   */
  unspentForWallet(script: Uint8Array): Promise<WalletOutputRow[]>;
  /**
   * Per unspent charm output paying `script` and app: the amount (null: not fungible), and with
   * `outpoints` (the default) its txid and vout (without: '' and -1, a cheaper read); any order.
   */
  unspentAmounts(script: Uint8Array, outpoints?: boolean): Promise<AmountRow[]>;
  /**
   * `unspentAmounts` read synchronously, where the engine can (SQLite): the same rows, or
   * undefined when it cannot (then ask `unspentAmounts`).
   */
  unspentAmountsNow?(script: Uint8Array, outpoints?: boolean): AmountRow[] | undefined;
  /** The charm rows of one output, spent or not (empty: it never held charms). */
  output(txid: string, vout: number): Promise<CharmOutputRow[]>;
  /** Charm rows created by a transaction. */
  outputsOf(txid: string): Promise<CharmOutputRow[]>;
  /** Charm rows a transaction spent. */
  spentBy(txid: string): Promise<CharmOutputRow[]>;
  spellTx(txid: string): Promise<SpellTxRow | undefined>;
  /** The outputs of a transaction its spell beamed to another chain (Cardano), by vout and app. */
  beamedOf(txid: string): Promise<BeamedOutputRow[]>;
  /** The token apps learned from verified spells (Cardano), with the height each was learned at. */
  learnedTokens(): Promise<{ app: string; height: number }[]>;
  /**
   * The height of a transaction of the recent blocks the index keeps (`recent_txs`: any
   * transaction, spell or not); undefined when none of them holds it.
   */
  recentTxHeight(txid: string): Promise<number | undefined>;
  /** History of a script, newest first, `limit` transactions after `cursor`. */
  history(script: Uint8Array, limit: number, cursor?: HistoryCursor): Promise<HistoryEntry[]>;
  /**
   * An app's supply (unspent amounts, an output without one counting 1), its holder count, and
   * `limit` holders (scripts) after `after` in byte order, each with its amount and outputs:
   * summed by the engine, so memory grows with the page, not with the app.
   */
  appHolders(app: string, after: Uint8Array | undefined, limit: number): Promise<AppHolders>;
  /** The first height an app appeared at, undefined when it never did. */
  appFirstHeight(app: string): Promise<number | undefined>;
  /**
   * A number that changes whenever a commit (of any connection or process) may have changed what
   * the reads answer, as of this call: the SQLite engine's and a writer's are at hand; a PostgreSQL
   * reader (`--api-only`, another process writes) reads `meta.data_version` (a promise); undefined
   * when it cannot be told. Answers cached under one version are stale once it moves (answer-cache.ts).
   */
  dataVersion(): number | Promise<number | undefined> | undefined;
  close(): Promise<void>;

  // ---- for the explorer-compatible API (explorer-api.ts)
  /**
   * The current data of the NFT `n/<identity>/<vk>` (any vk when `vk` is absent): the unspent
   * output holding it, else the last one that did (CHIP-0420 reference NFTs carry token metadata).
   */
  nftData(identity: string, vk?: string): Promise<{ app: string; data: Uint8Array; txid: string; vout: number; height: number } | undefined>;
}

/** The index's writer (the follower): the reads, and whole blocks and rollbacks written. */
export interface IndexWriter extends IndexReader {
  /** Writes a block on top of the tip (its prevHash must be the tip's hash), in one transaction. */
  applyBlock(b: BlockWrite): Promise<void>;
  /** Writes consecutive blocks on top of the tip in one transaction (all or none). */
  applyBlocks(bs: BlockWrite[]): Promise<void>;
  /** Undoes every block above `forkHeight` in one transaction and records the reorg. */
  rollbackTo(forkHeight: number, reorg: Omit<ReorgRow, 'forkHeight'>): Promise<void>;
  /** Records that a reorg deeper than the cap stopped the index (kept until the index is rebuilt). */
  markUnrecoverable(u: UnrecoverableReorg): Promise<void>;
  /**
   * The writer's test of whether `txid:vout` is an unspent charm output of the committed index
   * (exact), or undefined when it cannot tell now (a block being written).
   */
  charmOutpoints?(): Promise<CharmOutpoints | undefined>;
  /**
   * Why the writes wait, while they do: another connection (a backup, an `sqlite3` shell) holds
   * the SQLite file's write lock; the write is tried again off the event loop (sqlite-driver.ts).
   */
  writeWait?(): WriteWait | undefined;
  /**
   * Records (`on`) or removes `user`'s like of the charm `charmId` (`--likes`, explorer-routes.ts)
   * in a transaction of its own, which moves the data version (answers with like counts are kept
   * per version); the charm's like count after it.
   */
  setLike?(charmId: string, user: string, on: boolean, at: number): Promise<number>;
}

/** The store as its writer, when it was opened as one (undefined: a reader, `--api-only`). */
export const writerOf = (s: IndexReader): IndexWriter | undefined => ('applyBlocks' in s ? (s as IndexWriter) : undefined);

const hexOf = (b: unknown): string => Buffer.from(b as Uint8Array).toString('hex');
const bytes = (hex: string): Buffer => Buffer.from(hex, 'hex');
const big = (v: unknown): bigint => BigInt(v as string | number | bigint);
const num = (v: unknown): number => Number(v);

// ------------------------------------------------------------------------------------ the store

const OUTPUT_COLS = `co.txid, co.vout, a.app, co.amount, co.data, s.script, co.btc_value, co.created_height, co.tx_index,
  co.spent_height, co.spent_txid, co.spent_vin`;
const OUTPUT_FROM = 'charm_outputs co JOIN apps a ON a.id = co.app_id JOIN scripts s ON s.id = co.script_id';
/**
 * Apps sort by their UTF-8 bytes on both engines: SQLite's BINARY, PostgreSQL's "C" (the
 * database's own collation, e.g. en_US, weighs case and punctuation less: the same chain would
 * answer other bytes than on SQLite).
 */
const appOrder = (engine: Engine): string => (engine === 'postgres' ? 'a.app COLLATE "C"' : 'a.app');
const outputOrder = (engine: Engine): string => `ORDER BY co.txid, co.vout, ${appOrder(engine)}`;

function outputRow(r: Row): CharmOutputRow {
  return {
    txid: hexOf(r.txid),
    vout: num(r.vout),
    app: r.app as string,
    amount: r.amount === null ? null : big(r.amount),
    data: r.data === null ? null : new Uint8Array(r.data as Uint8Array),
    script: new Uint8Array(r.script as Uint8Array),
    sats: big(r.btc_value),
    createdHeight: num(r.created_height),
    txIndex: num(r.tx_index),
    spent: r.spent_height === null ? null : { txid: hexOf(r.spent_txid), vin: num(r.spent_vin), height: num(r.spent_height) },
  };
}

/** Whether the sorted 32-byte txids `ids` hold `want` (binary search). */
function sortedTxidsHave(ids: Buffer, want: Buffer): boolean {
  let lo = 0;
  let hi = ids.length / 32 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const c = ids.compare(want, 0, 32, mid * 32, mid * 32 + 32);
    if (c === 0) return true;
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

const BLOCK_COLS = 'SELECT b.height, b.hash, b.prev_hash, b.time, s.slot FROM blocks b LEFT JOIN block_slots s ON s.height = b.height';
const blockRow = (r: Row): StoredBlock => ({
  height: num(r.height),
  hash: hexOf(r.hash),
  prevHash: hexOf(r.prev_hash),
  time: num(r.time),
  ...(r.slot === null || r.slot === undefined ? {} : { slot: num(r.slot) }),
});

const APP_BY_ID = 'SELECT app FROM apps WHERE id = ?';

/**
 * unspentAmounts' read (one range of the covering index co_unspent_by_script): app ids where they
 * are stable (`kept`: the app's text from memory), else the apps joined; the outpoints when asked.
 */
function amountsSql(engine: Engine, kept: boolean, outpoints: boolean): string {
  const txidHex = engine === 'sqlite' ? 'lower(hex(co.txid))' : "encode(co.txid, 'hex')";
  const cols = `${kept ? 'co.app_id' : 'a.app'}, co.amount${outpoints ? `, ${txidHex}, co.vout` : ''}`;
  return `SELECT ${cols} FROM charm_outputs co ${kept ? '' : 'JOIN apps a ON a.id = co.app_id '}WHERE co.script_id = (SELECT id FROM scripts WHERE script = ?) AND co.spent_height IS NULL`;
}

const SCRIPT_ID = 'SELECT id FROM scripts WHERE script = ?';
/** unspentAmountsNow's read by the script's id (SQLite: app ids, the txid's hex by the engine). */
const amountsByIdSql = (outpoints: boolean): string =>
  `SELECT co.app_id, co.amount${outpoints ? ', lower(hex(co.txid)), co.vout' : ''} FROM charm_outputs co WHERE co.script_id = ? AND co.spent_height IS NULL`;
/** At most this many scripts' ids are kept by the reads (some 150 bytes each). */
const MAX_SCRIPT_IDS_READ = 50_000;

/** At most this many apps' texts are kept in memory (some 200 bytes each). */
const MAX_APP_TEXTS = 100_000;

/** The SQL store over a Driver. `meta` is what prepareSchema returned. */
export class SqlStore implements IndexWriter {
  readonly engine: Engine;
  /** Unspent charm outpoints, loaded on the first write; reset after a failure or rollback. */
  private unspent: OutpointSet | undefined;
  /** Block writes and rollbacks in progress (the unspent set may hold uncommitted changes), and done. */
  private writing = 0;
  private writes = 0;
  private appIds = new Map<string, number>();
  private scriptIds = new Map<string, number>();
  /** Sorted txids of recent blocks by height, with the block hash they were read with (recentTxHeight). */
  private readonly recentTxids = new Map<number, { hash: string; txids: Buffer }>();
  /** App id → app, of committed rows (see appText). */
  private readonly appTexts = new Map<number, string>();
  /** The synchronous reads (Driver.readNow), prepared on first use. */
  private amountsWith: ((...params: unknown[]) => unknown[][]) | undefined;
  private amountsBare: ((...params: unknown[]) => unknown[][]) | undefined;
  private appById: ((...params: unknown[]) => unknown[][]) | undefined;
  private scriptIdOf: ((...params: unknown[]) => unknown[][]) | undefined;
  /** Script (latin1) → id, as the reads found them (unspentAmountsNow). */
  private readonly scriptIdsRead = new Map<string, number>();
  /** The epoch of the writer's lock (Driver.writerLock) what is kept in memory was read under. */
  private lockEpoch: number | undefined;

  constructor(
    private readonly d: Driver,
    private readonly m: IndexMeta,
  ) {
    this.engine = d.engine;
  }

  /** The snapshot the read methods called inside `read(fn)` use (driver.ts). */
  private readonly snapshot = new AsyncLocalStorage<ReadTx>();

  /** The queries of a read: the open snapshot's, else the driver's (one query, one snapshot). */
  private get q(): ReadTx {
    return this.snapshot.getStore() ?? this.d;
  }

  /**
   * `fn` on one snapshot, and every read method of this store that `fn` calls (through the
   * async context: the methods need no transaction argument); inside an open one, that one.
   */
  read<T>(fn: (tx: ReadTx) => Promise<T>): Promise<T> {
    const open = this.snapshot.getStore();
    if (open) return fn(open);
    return this.d.read((tx) => this.snapshot.run(tx, () => fn(tx)));
  }

  /** Whether a read method runs inside `read` (else a method of several queries opens one). */
  private get inSnapshot(): boolean {
    return this.snapshot.getStore() !== undefined;
  }

  async meta(): Promise<IndexMeta> {
    return this.m;
  }

  async tip(): Promise<StoredBlock | undefined> {
    const r = await this.q.all(`${BLOCK_COLS} ORDER BY b.height DESC LIMIT 1`);
    return r[0] && blockRow(r[0]);
  }

  async blockAt(height: number): Promise<StoredBlock | undefined> {
    const r = await this.q.all(`${BLOCK_COLS} WHERE b.height = ?`, [height]);
    return r[0] && blockRow(r[0]);
  }

  /**
   * Whether what this store keeps in memory, read from the database (the unspent set, app and
   * script ids, apps' texts, recent txids), may be used: not while a PostgreSQL writer has lost
   * its lock (another indexer may be writing: every answer then comes from the database alone);
   * all of it dropped (read again when next needed) when the lock was taken again since it was read.
   */
  private memoryUsable(): boolean {
    const lock = this.d.writerLock?.();
    if (!lock) return true;
    if (lock.epoch !== this.lockEpoch) {
      if (this.lockEpoch !== undefined) this.dropMemory();
      this.lockEpoch = lock.epoch;
    }
    return lock.held;
  }

  /** Forgets everything kept from the database (a kept CharmOutpoints is no longer current). */
  private dropMemory(): void {
    this.unspent = undefined;
    this.writes++;
    this.appIds.clear();
    this.scriptIds.clear();
    this.appTexts.clear();
    this.scriptIdsRead.clear();
    this.recentTxids.clear();
  }

  /** The unspent set, loaded through `q` when not kept (in a write transaction: its own reads). */
  private async loadUnspent(q: { all(sql: string): Promise<Row[]> } = this.d): Promise<OutpointSet> {
    if (!this.unspent) {
      const rows = await q.all('SELECT DISTINCT txid, vout FROM charm_outputs WHERE spent_height IS NULL');
      const set = new OutpointSet();
      for (const r of rows) set.add(hexOf(r.txid), num(r.vout));
      this.unspent = set;
    }
    return this.unspent;
  }

  private async idOf(kind: 'app' | 'script', key: string, insert: () => Promise<void>, select: () => Promise<Row[]>): Promise<number> {
    const cache = kind === 'app' ? this.appIds : this.scriptIds;
    const hit = cache.get(key);
    if (hit !== undefined) return hit;
    let r = await select();
    if (r.length === 0) {
      await insert();
      r = await select();
    }
    const id = num(r[0]!.id);
    cache.set(key, id);
    return id;
  }

  applyBlock(b: BlockWrite): Promise<void> {
    return this.applyBlocks([b]);
  }

  async applyBlocks(bs: BlockWrite[]): Promise<void> {
    if (bs.length === 0) return;
    this.writing++;
    try {
      await this.applyBlocksNow(bs);
    } finally {
      this.writing--;
      this.writes++;
    }
  }

  async charmOutpoints(): Promise<CharmOutpoints | undefined> {
    if (this.writing > 0 || !this.memoryUsable()) return undefined;
    const writes = this.writes;
    const set = await this.loadUnspent();
    const current = () => this.writing === 0 && this.writes === writes && this.memoryUsable();
    return current() ? { writes, has: (txid, vout) => set.has(txid, vout), current } : undefined;
  }

  private async applyBlocksNow(bs: BlockWrite[]): Promise<void> {
    try {
      await this.d.transaction(async (tx) => {
        // the lock is held now (taken again, if it was lost, before this transaction began): what
        // was kept under an older hold is dropped and the unspent set read in this transaction
        this.memoryUsable();
        const unspent = await this.loadUnspent(tx);
        const top = await tx.all('SELECT height, hash FROM blocks ORDER BY height DESC LIMIT 1');
        let tip = top[0] ? { height: num(top[0].height), hash: hexOf(top[0].hash) } : undefined;
        for (const b of bs) {
          if (tip && (tip.height !== b.height - 1 || tip.hash !== b.prevHash))
            throw new CharmsError('INTERNAL', `block ${b.height} ${b.hash} does not extend the index tip ${tip.height} ${tip.hash}`);
          await this.writeBlock(tx, b, unspent);
          tip = { height: b.height, hash: b.hash };
        }
        await this.moveDataVersion(tx);
      });
    } catch (e) {
      // the transaction rolled back: forget what these blocks changed in memory
      this.unspent = undefined;
      this.appIds.clear();
      this.scriptIds.clear();
      throw e;
    }
  }

  /** One block's rows, inside the caller's transaction. */
  private async writeBlock(tx: TxDriver, b: BlockWrite, unspent: OutpointSet): Promise<void> {
    await tx.run('INSERT INTO blocks (height, hash, prev_hash, time, spell_txs) VALUES (?, ?, ?, ?, ?)', [
      b.height,
      bytes(b.hash),
      bytes(b.prevHash),
      b.time,
      b.spellTxs.length,
    ]);
    await this.writeCardano(tx, b);
    for (const s of b.spellTxs)
      await tx.run('INSERT INTO spell_txs (txid, height, tx_index, version, spell) VALUES (?, ?, ?, ?, ?)', [
        bytes(s.txid),
        b.height,
        s.txIndex,
        s.version,
        Buffer.from(s.spell),
      ]);
    // history: (script id, tx index, app id) → received, sent
    const hist = new Map<string, { scriptId: number; txIndex: number; txid: string; appId: number; received: bigint; sent: bigint }>();
    const note = (scriptId: number, txIndex: number, txid: string, appId: number, received: bigint, sent: bigint) => {
      const k = `${scriptId}:${txIndex}:${appId}`;
      const h = hist.get(k) ?? { scriptId, txIndex, txid, appId, received: 0n, sent: 0n };
      h.received += received;
      h.sent += sent;
      hist.set(k, h);
    };
    for (const o of b.outputs) {
      const tag = o.app.split('/')[0]!;
      const appId = await this.idOf(
        'app',
        o.app,
        () => tx.run('INSERT INTO apps (app, tag) VALUES (?, ?) ON CONFLICT (app) DO NOTHING', [o.app, tag]),
        () => tx.all('SELECT id FROM apps WHERE app = ?', [o.app]),
      );
      const sk = Buffer.from(o.script).toString('hex');
      const scriptId = await this.idOf(
        'script',
        sk,
        () => tx.run('INSERT INTO scripts (script) VALUES (?) ON CONFLICT (script) DO NOTHING', [Buffer.from(o.script)]),
        () => tx.all('SELECT id FROM scripts WHERE script = ?', [Buffer.from(o.script)]),
      );
      await tx.run(
        'INSERT INTO charm_outputs (txid, vout, app_id, script_id, amount, data, btc_value, created_height, tx_index) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [
          bytes(o.txid),
          o.vout,
          appId,
          scriptId,
          o.amount === null ? null : o.amount.toString(),
          o.data === null ? null : Buffer.from(o.data),
          o.sats.toString(),
          b.height,
          o.txIndex,
        ],
      );
      unspent.add(o.txid, o.vout);
      note(scriptId, o.txIndex, o.txid, appId, o.amount ?? 1n, 0n);
    }
    const inputs = Array.isArray(b.inputs) ? listInputs(b.inputs) : b.inputs;
    for (let k = 0; k < inputs.length; k++) {
      if (!unspent.mayHave(inputs.digest(k))) continue;
      const i = inputs.at(k);
      if (!unspent.take(i.prevTxid, i.prevVout)) continue;
      const spent = await tx.all(
        'UPDATE charm_outputs SET spent_height = ?, spent_txid = ?, spent_vin = ? WHERE txid = ? AND vout = ? AND spent_height IS NULL RETURNING script_id, app_id, amount',
        [b.height, bytes(i.txid), i.vin, bytes(i.prevTxid), i.prevVout],
      );
      for (const r of spent) note(num(r.script_id), i.txIndex, i.txid, num(r.app_id), 0n, r.amount === null ? 1n : big(r.amount));
    }
    await this.writeRecentTxs(tx, b);
    await catalogueBlock(tx, b);
    await dexBlock(tx, b);
    for (const h of [...hist.values()].sort((x, y) => x.scriptId - y.scriptId || x.txIndex - y.txIndex || x.appId - y.appId))
      await tx.run('INSERT INTO script_history (script_id, height, tx_index, txid, app_id, received, sent) VALUES (?, ?, ?, ?, ?, ?, ?)', [
        h.scriptId,
        b.height,
        h.txIndex,
        bytes(h.txid),
        h.appId,
        h.received.toString(),
        h.sent.toString(),
      ]);
  }

  /** The block's beamed outputs and learned token apps (Cardano). */
  private async writeCardano(tx: TxDriver, b: BlockWrite): Promise<void> {
    if (b.slot !== undefined) await tx.run('INSERT INTO block_slots (height, slot) VALUES (?, ?)', [b.height, b.slot]);
    for (const o of b.beamed ?? [])
      await tx.run(
        'INSERT INTO beamed_outputs (txid, vout, app, amount, data, script, value, dest, created_height, tx_index) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [
          bytes(o.txid),
          o.vout,
          o.app,
          o.amount === null ? null : o.amount.toString(),
          o.data === null ? null : Buffer.from(o.data),
          Buffer.from(o.script),
          o.sats.toString(),
          bytes(o.beamedTo),
          b.height,
          o.txIndex,
        ],
      );
    for (const app of b.learned ?? []) await tx.run('INSERT INTO learned_tokens (app, height) VALUES (?, ?) ON CONFLICT (app) DO NOTHING', [app, b.height]);
  }

  /**
   * The block's txids into `recent_txs` (when it carries them) as one row, sorted (a search halves
   * it), and rows below its window out. One row per block, not per transaction: thousands of rows
   * keyed by random txids would dirty a page of the table's B-tree each (tens of MB of WAL per
   * block once the window is full, 150-200 ms a block measured), one row appends.
   */
  private async writeRecentTxs(tx: TxDriver, b: BlockWrite): Promise<void> {
    if (b.recentFrom !== undefined) await tx.run('DELETE FROM recent_txs WHERE height < ?', [b.recentFrom]);
    const ids = b.txids;
    if (!ids || ids.length === 0) return;
    if (ids.length % 32 !== 0) throw new CharmsError('INTERNAL', `block ${b.height}: txids of ${ids.length} bytes, not 32 each`);
    // hex order is byte order; strings sort fast
    const hex = Buffer.from(ids.buffer, ids.byteOffset, ids.length).toString('hex');
    const each = Array.from({ length: ids.length / 32 }, (_, i) => hex.slice(64 * i, 64 * i + 64)).sort();
    await tx.run('INSERT INTO recent_txs (height, txids) VALUES (?, ?)', [b.height, Buffer.from(each.join(''), 'hex')]);
  }

  async rollbackTo(forkHeight: number, reorg: Omit<ReorgRow, 'forkHeight'>): Promise<void> {
    this.writing++;
    try {
      await this.d.transaction(async (tx) => {
        this.memoryUsable();
        await catalogueRollback(tx, forkHeight);
        await dexRollback(tx, forkHeight);
        await tx.run('DELETE FROM charm_outputs WHERE created_height > ?', [forkHeight]);
        await tx.run('UPDATE charm_outputs SET spent_height = NULL, spent_txid = NULL, spent_vin = NULL WHERE spent_height > ?', [forkHeight]);
        await tx.run('DELETE FROM script_history WHERE height > ?', [forkHeight]);
        await tx.run('DELETE FROM spell_txs WHERE height > ?', [forkHeight]);
        await tx.run('DELETE FROM recent_txs WHERE height > ?', [forkHeight]);
        await tx.run('DELETE FROM beamed_outputs WHERE created_height > ?', [forkHeight]);
        await tx.run('DELETE FROM learned_tokens WHERE height > ?', [forkHeight]);
        await tx.run('DELETE FROM block_slots WHERE height > ?', [forkHeight]);
        await tx.run('DELETE FROM blocks WHERE height > ?', [forkHeight]);
        await tx.run('INSERT INTO reorgs (at, fork_height, depth, old_tip, new_tip) VALUES (?, ?, ?, ?, ?)', [
          reorg.at,
          forkHeight,
          reorg.depth,
          bytes(reorg.oldTip),
          bytes(reorg.newTip),
        ]);
        await this.moveDataVersion(tx);
      });
    } finally {
      this.writing--;
      this.writes++;
      this.unspent = undefined;
      this.appIds.clear();
      this.scriptIds.clear();
    }
  }

  async lastReorg(): Promise<ReorgRow | undefined> {
    const r = await this.q.all('SELECT at, fork_height, depth, old_tip, new_tip FROM reorgs ORDER BY id DESC LIMIT 1');
    return r[0] && { at: num(r[0].at), forkHeight: num(r[0].fork_height), depth: num(r[0].depth), oldTip: hexOf(r[0].old_tip), newTip: hexOf(r[0].new_tip) };
  }

  async markUnrecoverable(u: UnrecoverableReorg): Promise<void> {
    await this.d.transaction((tx) => setMeta(tx, 'unrecoverable', JSON.stringify({ forkHeight: u.forkHeight, depth: u.depth, at: u.at })));
  }

  async unrecoverable(): Promise<UnrecoverableReorg | undefined> {
    const r = await this.q.all("SELECT value FROM meta WHERE key = 'unrecoverable'");
    if (!r[0]) return undefined;
    try {
      const u = JSON.parse(String(r[0].value)) as UnrecoverableReorg;
      return { forkHeight: num(u.forkHeight), depth: num(u.depth), at: num(u.at) };
    } catch {
      return { forkHeight: -1, depth: -1, at: 0 }; // unreadable, but recorded: still stopped
    }
  }

  async unspentByScript(script: Uint8Array): Promise<CharmOutputRow[]> {
    const r = await this.q.all(
      `SELECT ${OUTPUT_COLS} FROM ${OUTPUT_FROM} WHERE co.script_id = (SELECT id FROM scripts WHERE script = ?) AND co.spent_height IS NULL ${outputOrder(this.engine)}`,
      [Buffer.from(script)],
    );
    return r.map(outputRow);
  }

  async unspentForWallet(script: Uint8Array): Promise<WalletOutputRow[]> {
    // unspentByScript's rows and order without its script join and its data, script and spend
    // columns, rows as arrays, the txid's hex written by the engine. SQLite: no apps join either
    // (appText), and sorted here in its order (txid bytes: the hex's order; vout; apps by BINARY
    // collation: UTF-8 bytes), sparing its temporary B-tree; PostgreSQL joins the apps and sorts
    // itself (apps by "C": bytewise too, appOrder).
    const sqlite = this.engine === 'sqlite';
    const txidHex = sqlite ? 'lower(hex(co.txid))' : "encode(co.txid, 'hex')";
    const r = await this.q.rows(
      `SELECT ${sqlite ? 'co.app_id' : 'a.app'}, co.amount, ${txidHex}, co.vout, co.btc_value, co.created_height FROM charm_outputs co${sqlite ? '' : ' JOIN apps a ON a.id = co.app_id'}
       WHERE co.script_id = (SELECT id FROM scripts WHERE script = ?) AND co.spent_height IS NULL${sqlite ? '' : ` ${outputOrder(this.engine)}`}`,
      [Buffer.from(script)],
    );
    const out: WalletOutputRow[] = new Array(r.length);
    for (let i = 0; i < r.length; i++) {
      const x = r[i]!;
      const app = sqlite ? (this.appTexts.get(num(x[0])) ?? (await this.appText(num(x[0])))) : (x[0] as string);
      out[i] = { txid: x[2] as string, vout: num(x[3]), app, amount: x[1] === null ? null : big(x[1]), sats: big(x[4]), createdHeight: num(x[5]) };
    }
    if (sqlite) out.sort((p, q) => (p.txid < q.txid ? -1 : p.txid > q.txid ? 1 : p.vout - q.vout || Buffer.compare(Buffer.from(p.app), Buffer.from(q.app))));
    return out;
  }

  async unspentAmounts(script: Uint8Array, outpoints = true): Promise<AmountRow[]> {
    // the balances' hot read: no script join, no sort, no apps join (appText), rows as arrays; the
    // outpoints only when asked (the mempool overlay spends some confirmed charm output), the txid's
    // hex written by the engine (a third less CPU in SQLite than a Buffer per row, then hex)
    // the apps' texts from the map where ids are stable, else (a PostgreSQL reader) by a join
    const kept = this.d.idsStable && this.memoryUsable();
    const r = await this.q.rows(amountsSql(this.engine, kept, outpoints), [Buffer.from(script)]);
    const out: AmountRow[] = new Array(r.length);
    for (let i = 0; i < r.length; i++) {
      const x = r[i]!;
      const app = kept ? (this.appTexts.get(num(x[0])) ?? (await this.appText(num(x[0])))) : (x[0] as string);
      out[i] = { txid: outpoints ? (x[2] as string) : '', vout: outpoints ? num(x[3]) : -1, app, amount: x[1] === null ? null : big(x[1]) };
    }
    return out;
  }

  /** `unspentAmounts` without a promise (SQLite: the statements prepared once, read at once). */
  unspentAmountsNow(script: Uint8Array, outpoints = true): AmountRow[] | undefined {
    const d = this.d;
    if (!d.readNow || !d.idsStable) return undefined;
    // a view of the script's bytes (better-sqlite3 binds a Buffer as a blob), no copy
    const bytes = Buffer.from(script.buffer, script.byteOffset, script.byteLength);
    // the script's id, kept once read (a committed scripts row is never deleted or changed)
    const key = bytes.toString('latin1');
    let scriptId = this.scriptIdsRead.get(key);
    if (scriptId === undefined) {
      const found = (this.scriptIdOf ??= d.readNow(SCRIPT_ID))(bytes)[0];
      if (found === undefined) return []; // no output ever paid it
      scriptId = num(found[0]);
      if (this.scriptIdsRead.size >= MAX_SCRIPT_IDS_READ) this.scriptIdsRead.clear();
      this.scriptIdsRead.set(key, scriptId);
    }
    const read = outpoints ? (this.amountsWith ??= d.readNow(amountsByIdSql(true))) : (this.amountsBare ??= d.readNow(amountsByIdSql(false)));
    const r = read(scriptId);
    const out: AmountRow[] = new Array(r.length);
    for (let i = 0; i < r.length; i++) {
      const x = r[i]!;
      const id = num(x[0]);
      const app = this.appTexts.get(id) ?? this.appTextNow(id);
      out[i] = { txid: outpoints ? (x[2] as string) : '', vout: outpoints ? num(x[3]) : -1, app, amount: x[1] === null ? null : big(x[1]) };
    }
    return out;
  }

  /** appText read at once (readNow). */
  private appTextNow(id: number): string {
    return this.keepAppText(id, (this.appById ??= this.d.readNow!(APP_BY_ID))(id)[0]?.[0] as string | undefined);
  }

  /**
   * The app of an id, read once (`appTexts` keeps it): an id names one app for good (apps rows are
   * never updated or deleted, a reader sees committed ids only, and the driver's ids are stable:
   * not a PostgreSQL reader's). Bounded: emptied when full.
   */
  private async appText(id: number): Promise<string> {
    return this.keepAppText(id, (await this.q.rows(APP_BY_ID, [id]))[0]?.[0] as string | undefined);
  }

  private keepAppText(id: number, app: string | undefined): string {
    if (app === undefined) throw new CharmsError('INTERNAL', `charm output of app id ${id} without its apps row`);
    if (this.appTexts.size >= MAX_APP_TEXTS) this.appTexts.clear();
    this.appTexts.set(id, app);
    return app;
  }

  async output(txid: string, vout: number): Promise<CharmOutputRow[]> {
    return (
      await this.q.all(`SELECT ${OUTPUT_COLS} FROM ${OUTPUT_FROM} WHERE co.txid = ? AND co.vout = ? ${outputOrder(this.engine)}`, [bytes(txid), vout])
    ).map(outputRow);
  }

  async outputsOf(txid: string): Promise<CharmOutputRow[]> {
    return (await this.q.all(`SELECT ${OUTPUT_COLS} FROM ${OUTPUT_FROM} WHERE co.txid = ? ${outputOrder(this.engine)}`, [bytes(txid)])).map(outputRow);
  }

  async spentBy(txid: string): Promise<CharmOutputRow[]> {
    return (await this.q.all(`SELECT ${OUTPUT_COLS} FROM ${OUTPUT_FROM} WHERE co.spent_txid = ? ${outputOrder(this.engine)}`, [bytes(txid)])).map(outputRow);
  }

  async spellTx(txid: string): Promise<SpellTxRow | undefined> {
    const r = await this.q.all('SELECT txid, height, tx_index, version, spell FROM spell_txs WHERE txid = ?', [bytes(txid)]);
    return r[0] && { txid, height: num(r[0].height), txIndex: num(r[0].tx_index), version: num(r[0].version), spell: new Uint8Array(r[0].spell as Uint8Array) };
  }

  async beamedOf(txid: string): Promise<BeamedOutputRow[]> {
    const r = await this.q.all(
      `SELECT txid, vout, app, amount, data, script, value, dest, created_height, tx_index FROM beamed_outputs WHERE txid = ? ORDER BY vout, ${this.engine === 'postgres' ? 'app COLLATE "C"' : 'app'}`,
      [bytes(txid)],
    );
    return r.map((x) => ({
      txid: hexOf(x.txid),
      vout: num(x.vout),
      app: x.app as string,
      amount: x.amount === null ? null : big(x.amount),
      data: x.data === null ? null : new Uint8Array(x.data as Uint8Array),
      script: new Uint8Array(x.script as Uint8Array),
      sats: big(x.value),
      beamedTo: hexOf(x.dest),
      createdHeight: num(x.created_height),
      txIndex: num(x.tx_index),
    }));
  }

  async learnedTokens(): Promise<{ app: string; height: number }[]> {
    const r = await this.q.all(`SELECT app, height FROM learned_tokens ORDER BY height, ${this.engine === 'postgres' ? 'app COLLATE "C"' : 'app'}`);
    return r.map((x) => ({ app: x.app as string, height: num(x.height) }));
  }

  /**
   * The lowest recent block holding `txid` (a txid twice, as BIP30 allows once the first is spent:
   * the first). Each block's sorted txids are read once and kept with the block hash they were read
   * with (a reorg's replacement at a height is another hash); the heights and hashes are read per
   * call, so nothing rolled back is answered.
   */
  async recentTxHeight(txid: string): Promise<number | undefined> {
    if (!this.inSnapshot) return this.read(() => this.recentTxHeight(txid));
    const want = bytes(txid);
    if (want.length !== 32) return undefined;
    const rows = await this.q.all('SELECT r.height, b.hash FROM recent_txs r JOIN blocks b ON b.height = r.height ORDER BY r.height');
    const now = new Map(rows.map((r) => [num(r.height), hexOf(r.hash)]));
    for (const h of this.recentTxids.keys()) if (!now.has(h)) this.recentTxids.delete(h);
    for (const [height, hash] of now) {
      let kept = this.recentTxids.get(height);
      if (kept?.hash !== hash) {
        const r = await this.q.all('SELECT r.txids, b.hash FROM recent_txs r JOIN blocks b ON b.height = r.height WHERE r.height = ?', [height]);
        if (!r[0]) continue; // rolled back meanwhile
        kept = { hash: hexOf(r[0].hash), txids: Buffer.from(r[0].txids as Uint8Array) };
        this.recentTxids.set(height, kept);
      }
      if (sortedTxidsHave(kept.txids, want)) return height;
    }
    return undefined;
  }

  async history(script: Uint8Array, limit: number, cursor?: HistoryCursor): Promise<HistoryEntry[]> {
    if (!this.inSnapshot) return this.read(() => this.history(script, limit, cursor));
    const after = cursor ? 'AND (h.height < ? OR (h.height = ? AND h.tx_index < ?))' : '';
    const params: unknown[] = [Buffer.from(script), ...(cursor ? [cursor.height, cursor.height, cursor.txIndex] : [])];
    const txs = await this.q.all(
      `SELECT DISTINCT h.height, h.tx_index FROM script_history h WHERE h.script_id = (SELECT id FROM scripts WHERE script = ?) ${after} ORDER BY h.height DESC, h.tx_index DESC LIMIT ${Math.trunc(limit)}`,
      params,
    );
    if (txs.length === 0) return [];
    const last = txs[txs.length - 1]!;
    const rows = await this.q.all(
      `SELECT h.height, h.tx_index, h.txid, a.app, h.received, h.sent FROM script_history h JOIN apps a ON a.id = h.app_id
       WHERE h.script_id = (SELECT id FROM scripts WHERE script = ?) AND (h.height > ? OR (h.height = ? AND h.tx_index >= ?)) ${after}
       ORDER BY h.height DESC, h.tx_index DESC, ${appOrder(this.engine)}`,
      [Buffer.from(script), num(last.height), num(last.height), num(last.tx_index), ...params.slice(1)],
    );
    const out: HistoryEntry[] = [];
    for (const r of rows) {
      const height = num(r.height);
      const txIndex = num(r.tx_index);
      let e = out[out.length - 1];
      if (!e || e.height !== height || e.txIndex !== txIndex) out.push((e = { txid: hexOf(r.txid), height, txIndex, changes: [] }));
      e.changes.push({ app: r.app as string, received: big(r.received), sent: big(r.sent) });
    }
    return out;
  }

  async appHolders(app: string, after: Uint8Array | undefined, limit: number): Promise<AppHolders> {
    // the supply and the page of holders it sums: one snapshot (their sums agree under reorgs)
    if (!this.inSnapshot) return this.read(() => this.appHolders(app, after, limit));
    // exact sums: NUMERIC on PostgreSQL, charms_sum (sqlite-driver.ts) over SQLite's text amounts
    const sum = this.engine === 'sqlite' ? "charms_sum(COALESCE(co.amount, '1'))" : 'SUM(COALESCE(co.amount, 1))::text';
    const unspent = 'co.app_id = (SELECT id FROM apps WHERE app = ?) AND co.spent_height IS NULL';
    const totals = await this.q.all(`SELECT COUNT(DISTINCT co.script_id) AS holders, ${sum} AS supply FROM charm_outputs co WHERE ${unspent}`, [app]);
    const rows = await this.q.all(
      `SELECT s.script, ${sum} AS amount, COUNT(*) AS utxos FROM charm_outputs co JOIN scripts s ON s.id = co.script_id WHERE ${unspent}${after ? ' AND s.script > ?' : ''} GROUP BY s.script ORDER BY s.script LIMIT ?`,
      after ? [app, Buffer.from(after), limit] : [app, limit],
    );
    const t = totals[0];
    return {
      supply: t?.supply === null || t?.supply === undefined ? 0n : big(t.supply),
      holders: t ? num(t.holders) : 0,
      page: rows.map((r) => ({ script: new Uint8Array(r.script as Uint8Array), amount: big(r.amount), utxos: num(r.utxos) })),
    };
  }

  async appFirstHeight(app: string): Promise<number | undefined> {
    const r = await this.q.all('SELECT MIN(co.created_height) AS h FROM charm_outputs co WHERE co.app_id = (SELECT id FROM apps WHERE app = ?)', [app]);
    return r[0]?.h === null || r[0]?.h === undefined ? undefined : num(r[0].h);
  }

  /**
   * PostgreSQL readers of another process learn of a commit from `meta.data_version`, moved in the
   * same transaction: a reader that can see the new rows sees the new version. SQLite counts
   * commits itself (PRAGMA data_version).
   */
  private async moveDataVersion(tx: TxDriver): Promise<void> {
    if (this.d.engine === 'postgres') await tx.run("UPDATE meta SET value = (value::bigint + 1)::text WHERE key = 'data_version'");
  }

  dataVersion(): number | Promise<number | undefined> | undefined {
    return this.d.dataVersion?.();
  }

  setLike(charmId: string, user: string, on: boolean, at: number): Promise<number> {
    return this.d.transaction(async (tx) => {
      if (on) await tx.run('INSERT INTO likes (charm_id, user_id, at) VALUES (?, ?, ?) ON CONFLICT (charm_id, user_id) DO NOTHING', [charmId, user, at]);
      else await tx.run('DELETE FROM likes WHERE charm_id = ? AND user_id = ?', [charmId, user]);
      await this.moveDataVersion(tx);
      const r = await tx.all('SELECT COUNT(*) AS n FROM likes WHERE charm_id = ?', [charmId]);
      return num(r[0]?.n ?? 0);
    });
  }

  writeWait(): WriteWait | undefined {
    return this.d.writeWait?.();
  }

  close(): Promise<void> {
    return this.d.close();
  }

  // ---- for the explorer-compatible API (explorer-api.ts)
  async nftData(identity: string, vk?: string): Promise<{ app: string; data: Uint8Array; txid: string; vout: number; height: number } | undefined> {
    if (!/^[0-9a-f]{64}$/.test(identity) || (vk !== undefined && !/^[0-9a-f]{64}$/.test(vk))) return undefined;
    const apps = vk !== undefined ? 'a.app = ?' : 'a.app LIKE ?';
    const r = await this.q.all(
      `SELECT a.app, co.data, co.txid, co.vout, co.created_height FROM charm_outputs co JOIN apps a ON a.id = co.app_id
       WHERE ${apps} AND co.data IS NOT NULL
       ORDER BY CASE WHEN co.spent_height IS NULL THEN 0 ELSE 1 END, co.created_height DESC, co.tx_index DESC, co.vout, ${appOrder(this.engine)} LIMIT 1`,
      [vk !== undefined ? `n/${identity}/${vk}` : `n/${identity}/%`],
    );
    const x = r[0];
    return x && { app: x.app as string, data: new Uint8Array(x.data as Uint8Array), txid: hexOf(x.txid), vout: num(x.vout), height: num(x.created_height) };
  }
}
