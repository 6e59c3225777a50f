/**
 * The SQLite engine of the index store (better-sqlite3, WAL): one writer connection, one read-only
 * connection for the API (WAL readers see the last committed block, never a block half-written),
 * one more for the answers read on one snapshot (`read`: BEGIN … COMMIT, one at a time: the
 * connection is synchronous and shared, so two answers must not interleave in one transaction),
 * and an exclusive lock held on `<db>.lock` for the writer's lifetime.
 *
 * Another connection holding the write lock (a backup, an `sqlite3` shell) never blocks the event
 * loop: the writer's `busy_timeout` is 0, and a BEGIN that finds the lock taken is tried again on
 * timers (`writeWait` says why meanwhile), until WRITE_WAIT_MS have passed; then the transaction
 * fails (the follower tries again at its next poll). Readers wait at most READ_BUSY_MS (a WAL
 * reader is blocked only by a connection in exclusive locking mode). The lock is SQLite's own
 * (an OS file lock), so it dies with the process: after `kill -9` the next indexer starts at once,
 * while a second indexer on a live one is refused.
 */
import { createRequire } from 'node:module';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { CharmsError } from '../errors.js';
import { TxQueue, type Driver, type ReadTx, type Row, type TxDriver, type WriteWait } from './driver.js';

type Database = BetterSqlite3.Database;
type Statement = BetterSqlite3.Statement;

const require = createRequire(import.meta.url);

/**
 * better-sqlite3 13 (Node-API) on Node 22 and later, 12 on Node 20: 12's statements derive from
 * the raw `node::ObjectWrap`, whose destructor aborts Node 24 (`RemoveEnvironmentCleanupHook:
 * (env) != nullptr`) when a statement is collected, at exit or at any GC; 13 crashes Node 20. Both
 * are dependencies (13 under the alias `better-sqlite3-napi`), with the same JavaScript API.
 */
export const betterSqliteModule = (nodeVersion = process.versions.node): string =>
  Number(nodeVersion.split('.')[0]) >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3';

function loadBetterSqlite(): typeof BetterSqlite3 {
  try {
    return require(betterSqliteModule()) as typeof BetterSqlite3;
  } catch (e) {
    throw new CharmsError(
      'CONFIG',
      'the SQLite engine (better-sqlite3) cannot be loaded: reinstall charms-ts (it builds a native module), or use a postgres:// --db',
      { cause: e },
    );
  }
}

/**
 * `charms_sum(text)`: the exact sum of decimal-text amounts, as text (SQLite's own SUM reads text
 * as a 64-bit integer or a double; a supply can pass u64). NULL for no rows, as SUM.
 */
function addExactSum(db: Database): void {
  db.aggregate('charms_sum', {
    start: () => undefined as bigint | undefined,
    step: (total: bigint | undefined, v: unknown) => (v === null ? total : (total ?? 0n) + BigInt(v as string)),
    result: (total: bigint | undefined) => (total === undefined ? null : total.toString()),
  });
}

class Prepared {
  private readonly cache = new Map<string, Statement>();
  constructor(readonly db: Database) {
    addExactSum(db);
  }
  /** The statement of `sql`, prepared once; `raw`: answering rows as arrays (no object per row: a quarter less CPU on small reads). */
  stmt(sql: string, raw = false): Statement {
    const key = raw ? `raw ${sql}` : sql;
    let s = this.cache.get(key);
    if (!s) {
      s = raw ? this.db.prepare(sql).raw(true) : this.db.prepare(sql);
      this.cache.set(key, s);
    }
    return s;
  }
}

/**
 * The read connections' page cache and memory map. SQLite's default cache is 2 MB per connection;
 * the API's reads (balances: a few pages of the unspent-by-script index per request) are served
 * from this cache instead of the OS's with 64 MB (a bound: SQLite allocates it as pages are read).
 * The map lets reads take pages straight from the OS page cache (no copy into the connection's
 * cache); it is address space, not memory: the OS keeps what it has room for, and it is shared
 * with the writer's file pages. Read-only connections only (a write through a map is unsafe on
 * some file systems).
 */
const READ_CACHE_KIB = 65536;
const READ_MMAP_BYTES = 1 << 30;

/** How long a read waits for a lock (synchronously: on the event loop), in milliseconds. */
const READ_BUSY_MS = 100;
/** How long a write transaction's BEGIN is tried again while another connection holds the write lock. */
const WRITE_WAIT_MS = 5000;
/** The first and the longest pause between two tries of a BEGIN. */
const WRITE_RETRY_FIRST_MS = 10;
const WRITE_RETRY_MAX_MS = 250;

const isBusy = (e: unknown): boolean => /^SQLITE_BUSY/.test(String((e as { code?: unknown }).code));

function tuneReader(r: Database): void {
  r.pragma(`busy_timeout = ${READ_BUSY_MS}`);
  r.pragma(`cache_size = -${READ_CACHE_KIB}`);
  r.pragma(`mmap_size = ${READ_MMAP_BYTES}`);
}

export class SqliteDriver implements Driver {
  readonly engine = 'sqlite' as const;
  /** A connection keeps its file: a database re-created at the path is another file. */
  readonly idsStable = true;
  private readonly txs: TxQueue | undefined;
  /** The snapshot reads, one at a time on `snap`. */
  private readonly snaps: TxQueue;
  private readonly version: Statement;
  /** Since when, and why, the writer's BEGIN waits (undefined: it does not). */
  private waiting: WriteWait | undefined;
  /** Commits of our writer: the data version while we hold the writer's lock (no one else writes). */
  private commits = 0;

  private constructor(
    private readonly writer: Prepared | undefined,
    private readonly reader: Prepared,
    private readonly snap: Prepared,
    private readonly lock: Database | undefined,
  ) {
    // PRAGMA data_version moves when another connection commits (the writer of an --api-only reader)
    this.version = reader.db.prepare('PRAGMA data_version').pluck();
    const w = writer?.db;
    this.txs =
      w &&
      new TxQueue({
        begin: () => this.beginWrite(w),
        commit: async () => {
          w.exec('COMMIT');
          this.commits++;
        },
        rollback: async () => void (w.inTransaction && w.exec('ROLLBACK')),
      });
    const sd = snap.db;
    this.snaps = new TxQueue({
      begin: async () => void sd.exec('BEGIN'),
      commit: async () => void sd.exec('COMMIT'),
      rollback: async () => void (sd.inTransaction && sd.exec('ROLLBACK')),
    });
  }

  /**
   * BEGIN IMMEDIATE on the writer; while another connection holds the write lock, tried again on
   * timers (the event loop runs meanwhile) with growing pauses, for WRITE_WAIT_MS at most.
   */
  private async beginWrite(w: Database): Promise<void> {
    let pause = WRITE_RETRY_FIRST_MS;
    for (;;) {
      try {
        w.exec('BEGIN IMMEDIATE');
        this.waiting = undefined;
        return;
      } catch (e) {
        if (!isBusy(e)) throw e;
        const since = (this.waiting ??= {
          reason: "another connection holds the SQLite file's write lock (a backup, an sqlite3 shell?); writes wait until it is released",
          since: Date.now(),
        }).since;
        if (Date.now() - since >= WRITE_WAIT_MS && pause > WRITE_RETRY_FIRST_MS)
          throw new CharmsError(
            'UPSTREAM_UNAVAILABLE',
            `${this.waiting.reason} (waited ${Math.round((Date.now() - since) / 1000)} s; tried again at the next poll)`,
            {
              cause: e,
            },
          );
        await new Promise((r) => setTimeout(r, pause));
        pause = Math.min(pause * 2, WRITE_RETRY_MAX_MS);
      }
    }
  }

  writeWait(): WriteWait | undefined {
    return this.waiting;
  }

  /** Opens `path`; as the writer, takes the lock first (CONFIG error when another indexer holds it). */
  static open(path: string, mode: 'writer' | 'reader'): SqliteDriver {
    const Db = loadBetterSqlite();
    if (mode === 'reader') {
      let r: Database;
      try {
        r = new Db(path, { readonly: true, fileMustExist: true });
      } catch (e) {
        throw new CharmsError('CONFIG', `${path}: cannot open the index read-only (${(e as Error).message}); start the indexer first`, { cause: e });
      }
      tuneReader(r);
      let snap: Database;
      try {
        snap = new Db(path, { readonly: true, fileMustExist: true });
      } catch (e) {
        r.close();
        throw new CharmsError('CONFIG', `${path}: cannot open the index read-only (${(e as Error).message}); start the indexer first`, { cause: e });
      }
      tuneReader(snap);
      return new SqliteDriver(undefined, new Prepared(r), new Prepared(snap), undefined);
    }
    const unusable = (e: unknown) =>
      new CharmsError('CONFIG', `${path}: cannot be used as the index's SQLite file (${(e as Error).message}); name a new or existing index file with --db`, {
        cause: e,
      });
    let lock: Database;
    try {
      mkdirSync(dirname(path), { recursive: true });
      lock = new Db(`${path}.lock`);
    } catch (e) {
      throw unusable(e);
    }
    try {
      lock.pragma('busy_timeout = 0');
      lock.pragma('locking_mode = EXCLUSIVE');
      lock.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER)');
      lock.exec('BEGIN EXCLUSIVE');
      lock.exec(`DELETE FROM holder; INSERT INTO holder VALUES (${process.pid})`);
    } catch (e) {
      lock.close();
      throw new CharmsError(
        'CONFIG',
        `${path}: another indexer is writing this index (it holds ${path}.lock); run one indexer per database, and --api-only for more API instances`,
        { cause: e },
      );
    }
    let w: Database | undefined;
    try {
      w = new Db(path);
      w.pragma('journal_mode = WAL');
      w.pragma('synchronous = NORMAL');
      // never wait on the event loop for another connection's lock (see beginWrite)
      w.pragma('busy_timeout = 0');
      w.pragma('cache_size = -65536');
      const r = new Db(path, { readonly: true });
      tuneReader(r);
      const snap = new Db(path, { readonly: true });
      tuneReader(snap);
      return new SqliteDriver(new Prepared(w), new Prepared(r), new Prepared(snap), lock);
    } catch (e) {
      // not a database (a text file, a directory, a Bitcoin block file): said so, lock released
      w?.close();
      lock.close();
      throw unusable(e);
    }
  }

  async all(sql: string, params: unknown[] = []): Promise<Row[]> {
    return this.reader.stmt(sql).all(...params) as Row[];
  }

  async rows(sql: string, params: unknown[] = []): Promise<unknown[][]> {
    return this.reader.stmt(sql, true).all(...params) as unknown[][];
  }

  read<T>(fn: (tx: ReadTx) => Promise<T>): Promise<T> {
    const p = this.snap;
    let open = true;
    const live = (): Prepared => {
      if (!open) throw new CharmsError('INTERNAL', 'a read of a snapshot that has ended');
      return p;
    };
    const tx: ReadTx = {
      engine: 'sqlite',
      all: async (sql, params = []) =>
        live()
          .stmt(sql)
          .all(...params) as Row[],
      rows: async (sql, params = []) =>
        live()
          .stmt(sql, true)
          .all(...params) as unknown[][],
    };
    return this.snaps.run(async () => {
      try {
        return await fn(tx);
      } finally {
        open = false;
      }
    });
  }

  readNow(sql: string): (...params: unknown[]) => unknown[][] {
    let on = this.reader;
    let s = on.stmt(sql, true);
    return (...params) => {
      // the statement of the reader connection in use (should it ever be another one)
      if (on !== this.reader) s = (on = this.reader).stmt(sql, true);
      return s.all(...params) as unknown[][];
    };
  }

  dataVersion(): number {
    // a reader (--api-only) asks SQLite, which counts the commits of the other connections
    return this.writer ? this.commits : (this.version.get() as number);
  }

  transaction<T>(fn: (tx: TxDriver) => Promise<T>): Promise<T> {
    const w = this.writer;
    if (!w) return Promise.reject(new CharmsError('INTERNAL', 'the index is open read-only'));
    const tx: TxDriver = {
      all: async (sql, params = []) => w.stmt(sql).all(...params) as Row[],
      run: async (sql, params = []) => {
        w.stmt(sql).run(...params);
      },
      exec: async (sql) => {
        w.db.exec(sql);
      },
    };
    return this.txs!.run(() => fn(tx));
  }

  async close(): Promise<void> {
    await this.txs?.idle();
    await this.snaps.idle();
    this.reader.db.close();
    this.snap.db.close();
    this.writer?.db.close();
    this.lock?.close();
  }
}
