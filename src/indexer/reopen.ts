/**
 * An `--api-only` SQLite reader that follows its path. A SQLite connection keeps the file it
 * opened: an index deleted and built anew at the same path (a reindex), or a new file moved over
 * it (`mv`), is another file, which the connection never sees. This store checks the path once
 * every `checkMs` (one `stat`, on a timer: nothing on the request path) and compares its device
 * and inode with the file it serves:
 *
 * - the same file: nothing to do (commits are seen at once through `PRAGMA data_version`);
 * - another file: the old connection is dropped at once (closed when its calls in flight finish:
 *   SQLite pairs a database with its `-wal` and `-shm` files by name, so a new database's writer
 *   takes them over and the old connection's reads stop being the old state), and the new file
 *   is opened with the checks of a start (schema, network, mock flag); until it passes (an empty
 *   file an indexer has not initialised yet, an older schema, another network, a `--mock` index
 *   under a reader without `--mock`, or the old index's write-ahead log still beside it, which
 *   SQLite would read as the new file's), every call fails with a 503 saying why, and the
 *   check is tried again every `checkMs`;
 * - no file: every call fails with a 503 (the operator removed the index: serving what it held
 *   would serve a state they meant to drop) until a file is back.
 *
 * The data version (answer-cache.ts) of a new file counts on from above every version reported
 * before, so no answer kept for the old file is ever served for the new one; while nothing is
 * served it is undefined (nothing is kept). When the data version moves (a commit, once per
 * block, not per request) the path is checked at once too: a new database taking over the side
 * files moves it, so no answer the cache may keep, nor the tip (`/v1/status`), is read from that
 * mix (tip() reads the version first). A request whose calls straddle the switch reads its
 * first calls from the old file and the rest from the new one, as a request straddling a commit
 * does; its answer is kept, if at all, under the old file's state only, which is gone.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { CharmsError } from '../errors.js';
import type { Engine } from './schema.js';
import type { IndexReader } from './store.js';

/** How often the path is checked by default: a replacement is served within this time. */
const DEFAULT_REOPEN_CHECK_MS = 1000;

/** A file's identity: it survives renames, and a path re-created names another one. */
export interface FileId {
  dev: bigint;
  ino: bigint;
}

/** The identity of the file at `path` now, undefined when there is none. */
export function fileIdAt(path: string): FileId | undefined {
  const s = statSync(path, { bigint: true, throwIfNoEntry: false });
  return s && { dev: s.dev, ino: s.ino };
}

export const sameFile = (a: FileId, b: FileId): boolean => a.dev === b.dev && a.ino === b.ino;

/** SQLite's write-ahead log of the database at `path` (paired with it by name only). */
const walOf = (path: string): string => `${path}-wal`;

/**
 * The header of the write-ahead log at `wal` past its magic, version and page size (checkpoint
 * sequence, salts, checksum: a log started anew has new random salts), as hex; undefined when
 * there is no whole header (no log, or one without frames to read). SQLite takes its locks on the
 * database file and `-shm`, none on the log, so closing this descriptor drops none of them.
 */
export function walHeaderAt(wal: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(wal, 'r');
  } catch {
    return undefined;
  }
  try {
    const b = Buffer.alloc(32);
    return readSync(fd, b, 0, 32, 0) === 32 ? b.toString('hex', 12) : undefined;
  } finally {
    closeSync(fd);
  }
}

export interface ReopenOptions {
  /** Opens the file at the path with every check of a start (throws when it cannot be served). */
  open(): Promise<IndexReader>;
  /** Milliseconds between checks of the path (default DEFAULT_REOPEN_CHECK_MS). */
  checkMs?: number | undefined;
  /** One line per change of what is served (the CLI writes them to stderr). */
  notice?: ((line: string) => void) | undefined;
}

interface Served {
  store: IndexReader;
  id: FileId;
  /** The write-ahead log at `<path>-wal` when this file was opened (its connection keeps it open). */
  wal: FileId | undefined;
  /** The store's data version last reported (the path is checked when it moves). */
  seen: number | undefined;
  /** Added to the store's data versions (see dataVersion). */
  base: number;
  /** Calls in flight. */
  calls: number;
  retired: boolean;
  /** Its close, once retired and idle. */
  closed?: Promise<void>;
}

const closeServed = (s: Served): Promise<void> => (s.closed ??= s.store.close().catch(() => {}));

export class ReopeningStore implements IndexReader {
  readonly engine: Engine;
  private served: Served | undefined;
  /** Why nothing is served (when `served` is undefined). */
  private down: CharmsError | undefined;
  private lastVersion = -1;
  /** The last reason told through `notice`. */
  private notified: string | undefined;
  private checking: Promise<void> | undefined;
  /**
   * The header of the log the file served last left at `<path>-wal`, until another file is
   * served: a new database at the path would be read through it. Told by the file's identity
   * while the old connection holds it (so its inode number cannot have been reused), then by its
   * header (a new database's writer deletes or restarts the log: new salts).
   */
  private staleWal: string | undefined;
  private closed = false;
  private readonly timer: NodeJS.Timeout;
  private readonly checkMs: number;

  private constructor(
    private readonly path: string,
    private readonly o: ReopenOptions,
    store: IndexReader,
    id: FileId,
  ) {
    this.engine = store.engine;
    this.served = { store, id, wal: fileIdAt(walOf(path)), seen: undefined, base: 0, calls: 0, retired: false };
    this.checkMs = o.checkMs ?? DEFAULT_REOPEN_CHECK_MS;
    this.timer = setInterval(() => void this.check(), this.checkMs);
    this.timer.unref();
  }

  /** Opens the file at `path` as a start does (throws when it cannot be served), then follows the path. */
  static async open(path: string, o: ReopenOptions): Promise<ReopeningStore> {
    // the identity is read before the open: a file replaced in between is seen by the first check
    const id = fileIdAt(path);
    const store = await o.open();
    if (!id) {
      await store.close();
      throw new CharmsError('CONFIG', `${path}: the index file went away while it was opened; start again`);
    }
    return new ReopeningStore(path, o, store, id);
  }

  /** Compares the path with the file served, and opens a new one (the timer's work; tests call it). */
  check(): Promise<void> {
    this.checking ??= this.checkNow().finally(() => {
      this.checking = undefined;
    });
    return this.checking;
  }

  private async checkNow(): Promise<void> {
    if (this.closed) return;
    const id = fileIdAt(this.path);
    const s = this.served;
    if (s) {
      if (id && sameFile(id, s.id)) return;
      this.drop(s, id);
      // closed before the new file is opened: both would open the same side files by name, and
      // closing one of a process's descriptors of a file drops all its POSIX locks on that file
      await s.closed;
    }
    if (!id) return this.setDown(this.gone());
    if (this.staleWal !== undefined && walHeaderAt(walOf(this.path)) === this.staleWal)
      return this.setDown(
        this.replacedBy(
          `cannot be read yet: ${walOf(this.path)} beside it is the old index's write-ahead log, which SQLite would read as the new file's (so would an indexer started on it); stop the old file's indexer and delete ${walOf(this.path)} and ${this.path}-shm`,
        ),
      );
    let store: IndexReader;
    try {
      store = await this.o.open();
    } catch (e) {
      return this.setDown(this.replacedBy(`cannot be served: ${e instanceof CharmsError ? e.message : (e as Error).message}`, e));
    }
    if (this.closed) return void (await store.close().catch(() => {}));
    this.served = { store, id, wal: fileIdAt(walOf(this.path)), seen: undefined, base: this.lastVersion + 1, calls: 0, retired: false };
    this.staleWal = undefined;
    this.down = undefined;
    this.notified = undefined;
    this.o.notice?.(`${this.path}: a new index file is at the path; serving it`);
  }

  private gone(): CharmsError {
    return new CharmsError(
      'UPSTREAM_UNAVAILABLE',
      `${this.path}: the index file is gone (deleted or moved away); this --api-only reader serves nothing until an index is back at the path`,
    );
  }

  private replacedBy(what: string, cause?: unknown): CharmsError {
    return new CharmsError(
      'UPSTREAM_UNAVAILABLE',
      `${this.path}: the index file was replaced by another one, which ${what}; checked again every ${this.checkMs} ms`,
      cause === undefined ? undefined : { cause },
    );
  }

  /** Nothing is served, because of `e` (told once per reason). */
  private setDown(e: CharmsError): void {
    this.down = e;
    if (e.message !== this.notified) this.o.notice?.(e.message);
    this.notified = e.message;
  }

  /** Stops serving `s`, whose file is no longer at the path (`now`: what is, if anything). */
  private drop(s: Served, now: FileId | undefined): void {
    this.served = undefined;
    const wal = fileIdAt(walOf(this.path));
    if (wal && s.wal && sameFile(wal, s.wal)) this.staleWal = walHeaderAt(walOf(this.path));
    s.retired = true;
    if (s.calls === 0) closeServed(s);
    this.down = now ? this.replacedBy('is being opened') : this.gone();
  }

  /** `f` on the store served now; a 503 saying why when none is. */
  private async use<T>(f: (s: IndexReader) => Promise<T>): Promise<T> {
    const s = this.served;
    if (!s) throw this.down ?? this.gone();
    s.calls++;
    try {
      return await f(s.store);
    } finally {
      if (--s.calls === 0 && s.retired) closeServed(s);
    }
  }

  /**
   * The served store's data version plus its base: a new file's versions start above every one
   * reported before (it counts from SQLite's first value again); undefined while nothing is served.
   */
  dataVersion(): number | Promise<number | undefined> | undefined {
    const s = this.served;
    if (!s) return undefined;
    const v = s.store.dataVersion();
    const of = (n: number | undefined): number | undefined => {
      if (n === undefined) return undefined;
      if (n !== s.seen) {
        // a commit, or a new database at the path writing through the side files: which one?
        const id = fileIdAt(this.path);
        if (!id || !sameFile(id, s.id)) {
          if (this.served === s) this.drop(s, id);
          void this.check();
          return undefined;
        }
        s.seen = n;
      }
      const out = s.base + n;
      if (out > this.lastVersion) this.lastVersion = out;
      return out;
    };
    return typeof v === 'object' ? v.then(of) : of(v);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.checking;
    const s = this.served;
    this.served = undefined;
    if (s) {
      s.retired = true;
      if (s.calls === 0) await closeServed(s);
    }
  }

  /** One snapshot of the file served (a file replaced meanwhile is served from the next answer on). */
  read: IndexReader['read'] = (fn) => this.use((s) => s.read(fn));
  meta: IndexReader['meta'] = () => this.use((s) => s.meta());
  tip: IndexReader['tip'] = () => {
    // `/v1/status` and the confirmations read it, outside the answer cache: its check first
    this.dataVersion();
    return this.use((s) => s.tip());
  };
  blockAt: IndexReader['blockAt'] = (height) => this.use((s) => s.blockAt(height));
  lastReorg: IndexReader['lastReorg'] = () => this.use((s) => s.lastReorg());
  unrecoverable: IndexReader['unrecoverable'] = () => this.use((s) => s.unrecoverable());
  unspentByScript: IndexReader['unspentByScript'] = (script) => this.use((s) => s.unspentByScript(script));
  unspentForWallet: IndexReader['unspentForWallet'] = (script) => this.use((s) => s.unspentForWallet(script));
  unspentAmounts: IndexReader['unspentAmounts'] = (script, outpoints) => this.use((s) => s.unspentAmounts(script, outpoints));
  /** The served store's read at once (a call that ends before it returns: nothing in flight); undefined while nothing is served (the awaited read says why). */
  unspentAmountsNow: NonNullable<IndexReader['unspentAmountsNow']> = (script, outpoints) => this.served?.store.unspentAmountsNow?.(script, outpoints);
  output: IndexReader['output'] = (txid, vout) => this.use((s) => s.output(txid, vout));
  outputsOf: IndexReader['outputsOf'] = (txid) => this.use((s) => s.outputsOf(txid));
  spentBy: IndexReader['spentBy'] = (txid) => this.use((s) => s.spentBy(txid));
  spellTx: IndexReader['spellTx'] = (txid) => this.use((s) => s.spellTx(txid));
  beamedOf: IndexReader['beamedOf'] = (txid) => this.use((s) => s.beamedOf(txid));
  learnedTokens: IndexReader['learnedTokens'] = () => this.use((s) => s.learnedTokens());
  recentTxHeight: IndexReader['recentTxHeight'] = (txid) => this.use((s) => s.recentTxHeight(txid));
  history: IndexReader['history'] = (script, limit, cursor) => this.use((s) => s.history(script, limit, cursor));
  appHolders: IndexReader['appHolders'] = (app, after, limit) => this.use((s) => s.appHolders(app, after, limit));
  appFirstHeight: IndexReader['appFirstHeight'] = (app) => this.use((s) => s.appFirstHeight(app));
  nftData: IndexReader['nftData'] = (identity, vk) => this.use((s) => s.nftData(identity, vk));
}
