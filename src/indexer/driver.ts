/**
 * What the store asks of a database engine, below the store and both engines (sqlite-driver.ts,
 * pg-driver.ts): reads, the one-snapshot read, write transactions and their queue.
 *
 * The read contract every API answer is built on: one answer, one snapshot.
 * `IndexReader.read(fn)` runs `fn` inside one read transaction (SQLite: BEGIN … COMMIT on a
 * connection of its own, one snapshot at a time; PostgreSQL: REPEATABLE READ READ ONLY on one
 * pooled client), so all the queries `fn` makes through its `ReadTx` see the same committed index
 * state, even while a writer commits blocks or rolls back a reorg. Query functions of the API
 * (supply and holders, a transaction and its outputs, a page and its total) take a `ReadTx` and
 * never open their own.
 */

export type Engine = 'sqlite' | 'postgres';

export type Row = Record<string, unknown>;

/** The queries one snapshot answers. SQL uses `?` placeholders (PostgreSQL: rewritten to $n). */
export interface ReadTx {
  readonly engine: Engine;
  /** Rows as objects keyed by column name. */
  all(sql: string, params?: unknown[]): Promise<Row[]>;
  /** Rows as arrays of the selected columns in order (cheaper for hot small reads). */
  rows(sql: string, params?: unknown[]): Promise<unknown[][]>;
}

/** Runs a whole answer on one snapshot. */
export interface SnapshotReads {
  read<T>(fn: (tx: ReadTx) => Promise<T>): Promise<T>;
}

/** Why the writer's transactions wait (another connection holds the database's write lock). */
export interface WriteWait {
  reason: string;
  /** Since when (ms since the epoch). */
  since: number;
}

/** What the SQL store needs from an engine. */
export interface Driver extends SnapshotReads {
  readonly engine: Engine;
  /** Rows of one read, on a reader connection (sees committed data only). */
  all(sql: string, params?: unknown[]): Promise<Row[]>;
  /**
   * Whether a row id read once names the same row for this driver's life: false for a PostgreSQL
   * reader, whose database may be dropped and rebuilt under its URL while it runs (new ids); a
   * PostgreSQL writer's hold within one epoch of its lock only (writerLock).
   */
  readonly idsStable: boolean;
  /** As `all`, each row an array of the selected columns in order (cheaper for hot small reads). */
  rows(sql: string, params?: unknown[]): Promise<unknown[][]>;
  /**
   * The engine reads synchronously (better-sqlite3): `sql` prepared once, as a function answering
   * `rows`' arrays at once, for hot reads that then need no promise (absent: PostgreSQL).
   */
  readNow?(sql: string): (...params: unknown[]) => unknown[][];
  /** Runs `fn` in one write transaction on the writer connection; rolled back when it throws. */
  transaction<T>(fn: (tx: TxDriver) => Promise<T>): Promise<T>;
  /** See IndexReader.dataVersion (absent: the engine cannot tell). */
  dataVersion?(): number | Promise<number | undefined> | undefined;
  /**
   * The writer's hold on the database (absent: an engine whose writer holds it for its whole life,
   * SQLite): `epoch` moves each time the lock is taken again after it was lost (what the store
   * keeps in memory was read under an older epoch: stale, another writer may have written), and
   * `held` is false from the moment the connection holding it is known lost until it is taken again.
   */
  writerLock?(): { epoch: number; held: boolean } | undefined;
  /** See IndexWriter.writeWait (absent: the engine's writes never wait on another connection). */
  writeWait?(): WriteWait | undefined;
  close(): Promise<void>;
}

export interface TxDriver {
  all(sql: string, params?: unknown[]): Promise<Row[]>;
  run(sql: string, params?: unknown[]): Promise<void>;
  /** A multi-statement script without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

/**
 * Transactions on one connection, one at a time in call order: BEGIN, `fn`, COMMIT; ROLLBACK when
 * `fn` throws. Both drivers' `transaction` and SQLite's snapshot reads (the engines differ in the
 * three verbs).
 */
export class TxQueue {
  private queue: Promise<unknown> = Promise.resolve();
  constructor(private readonly verbs: { begin(): Promise<void>; commit(): Promise<void>; rollback(): Promise<void> }) {}

  run<T>(fn: () => Promise<T>): Promise<T> {
    const once = async (): Promise<T> => {
      await this.verbs.begin();
      try {
        const out = await fn();
        await this.verbs.commit();
        return out;
      } catch (e) {
        await this.verbs.rollback();
        throw e;
      }
    };
    const p = this.queue.then(once, once);
    this.queue = p.catch(() => undefined);
    return p;
  }

  /** Resolves when no transaction is running. */
  idle(): Promise<unknown> {
    return this.queue;
  }
}
