/**
 * The PostgreSQL engine of the index store (pg 8): reads through a pool (any number of `--api-only`
 * instances can serve one database), writes through one dedicated connection that holds a
 * session advisory lock for its lifetime, so a second indexer on the same database is refused.
 * The lock is released by PostgreSQL when the connection dies (a killed indexer does not block
 * the next one). A writer whose connection dies (PostgreSQL restarted, the backend terminated)
 * connects again before its next transaction and takes the lock again; if another indexer took
 * it meanwhile, every write fails saying so (nothing is written without the lock).
 */
import { createRequire } from 'node:module';
import type * as PgTypes from 'pg';
import { CharmsError } from '../errors.js';
import { silentLogger, type Logger } from '../infra/log.js';
import { redactUrl } from '../util/redact.js';
import { TxQueue, type Driver, type ReadTx, type Row, type TxDriver } from './driver.js';

const require = createRequire(import.meta.url);
/** The advisory lock's key: ('char', 0) — one index per database. */
const LOCK_KEY = [0x63686172, 0] as const;

/** `?` placeholders to `$1…` (our SQL texts have no `?` in literals). */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

const unavailable = (url: string, e: unknown): CharmsError =>
  new CharmsError('UPSTREAM_UNAVAILABLE', `PostgreSQL at ${redactUrl(url)}: ${(e as Error).message}`, { cause: e });

/**
 * A query's error as it leaves the driver: a missing grant (SQLSTATE 42501, a grant revoked while
 * the index runs) is the database unavailable to this role — 503 with what to do, not a 500 — its
 * cause keeping the SQLSTATE (schema.ts names the role and grants at start); others unchanged.
 */
const queryError = (url: string, e: unknown): unknown =>
  (e as { code?: string }).code === '42501'
    ? new CharmsError(
        'UPSTREAM_UNAVAILABLE',
        `PostgreSQL at ${redactUrl(url)}: ${(e as Error).message}: this role lacks a grant the index needs (docs/index.md "PostgreSQL roles")`,
        { cause: e },
      )
    : e;

/**
 * A first connection that failed: for want of the CONNECT privilege (SQLSTATE 42501) a CONFIG
 * error naming the role and the grants its mode needs (docs/index.md "PostgreSQL roles"), else
 * the server is unavailable.
 */
function connectFailure(url: string, e: unknown, mode: 'writer' | 'reader'): CharmsError {
  if ((e as { code?: string }).code !== '42501') return unavailable(url, e);
  const u = new URL(url);
  const role = decodeURIComponent(u.username) || '(the default)';
  const rest =
    mode === 'reader'
      ? 'and the read grants of docs/index.md "PostgreSQL roles"'
      : 'and GRANT CREATE, USAGE ON SCHEMA public TO it (the indexer owns the tables it creates; docs/index.md "PostgreSQL roles")';
  return new CharmsError(
    'CONFIG',
    `PostgreSQL at ${redactUrl(url)}: role ${role} may not connect (${(e as Error).message}); GRANT CONNECT ON DATABASE ${decodeURIComponent(u.pathname.slice(1)) || '<database>'} TO ${role}, ${rest}`,
    { cause: e },
  );
}

export class PgDriver implements Driver {
  readonly engine = 'postgres' as const;
  /** The writer's database cannot be rebuilt under it (it holds the lock); a reader's can. */
  readonly idsStable: boolean;
  private readonly txs: TxQueue | undefined;
  /** The writer's connection (holding the lock); replaced when it died (see writerNow). */
  private writer: PgTypes.Client | undefined;
  /** The writer's connection died: connect and lock again before the next transaction. */
  private writerLost = false;
  private closing = false;
  /** The writer's commits: no other process writes this database (the advisory lock). */
  private commits = 0;
  /** A reader's read of `meta.data_version` in flight, and the one queued behind it. */
  private versionRead: Promise<number | undefined> | undefined;
  private versionNext: Promise<number | undefined> | undefined;
  /** The `meta` table's oid the last version was read with, and what this reader adds to its versions. */
  private metaOid: string | undefined;
  private versionBase = 0;
  private lastVersion = -1;
  /** Since when the writer's connection, and the readers' (the pool), have been lost (logged once each way). */
  private writerDownAt: number | undefined;
  private readerDownAt: number | undefined;
  /** How many times the writer took the lock (see writerLock); 1 from open on. */
  private lockEpoch = 1;
  /** Another indexer held the lock when this one tried to take it back (logged once per loss). */
  private heldElsewhere = false;

  private constructor(
    private readonly url: string,
    private readonly pool: PgTypes.Pool,
    writer: PgTypes.Client | undefined,
    private readonly pg: typeof PgTypes,
    private readonly log: Logger,
  ) {
    this.idsStable = writer !== undefined;
    if (writer) this.watch(writer);
    this.writer = writer;
    this.txs =
      writer &&
      new TxQueue({
        begin: async () => {
          // a connection that died without its 'end' seen yet fails BEGIN: nothing is done in the
          // transaction then, so it is connected (and locked) again and BEGIN tried once more
          for (let attempt = 0; ; attempt++) {
            const w = await this.writerNow();
            try {
              await w.query('BEGIN');
              return;
            } catch (e) {
              if (!connectionGone(e)) throw e;
              this.markWriterLost(e);
              if (attempt > 0) throw e;
            }
          }
        },
        commit: async () => {
          await this.writer!.query('COMMIT');
          this.commits++;
        },
        rollback: async () => void (await this.writer!.query('ROLLBACK').catch(() => {})),
      });
  }

  /** Marks the writer lost when its connection ends other than by close(). */
  private watch(c: PgTypes.Client): void {
    c.on('end', () => {
      if (!this.closing && this.writer === c) this.markWriterLost();
    });
  }

  /** The writer's connection died: connected again before the next transaction (logged once). */
  private markWriterLost(e?: unknown): void {
    this.writerLost = true;
    if (this.writerDownAt !== undefined) return;
    this.writerDownAt = Date.now();
    this.log.warn(
      'index: PostgreSQL writer connection lost, advisory lock lost: answers come from the database alone (nothing kept in memory) until it is retaken before the next write',
      {
        event: 'lock_lost',
        db: redactUrl(this.url),
        ...(e === undefined ? {} : { error: (e as Error).message }),
      },
    );
  }

  /**
   * The writer's connection, connected and locked again first when it died. The lock's epoch
   * moves (the store drops and reloads what it keeps: another indexer may have written while the
   * lock was free), and so does the kept answers' state.
   */
  private async writerNow(): Promise<PgTypes.Client> {
    if (!this.writerLost) return this.writer!;
    // the old connection ended (were it alive after all, its lock would refuse the new one)
    await this.writer!.end().catch(() => {});
    let c: PgTypes.Client;
    try {
      c = await lockedWriter(this.pg, this.url, "the lock was free while this indexer's connection was lost, and another indexer took it: stop this one");
    } catch (e) {
      if (e instanceof CharmsError && e.code === 'CONFIG' && !this.heldElsewhere) {
        this.heldElsewhere = true;
        this.log.warn('index: another indexer holds the advisory lock; this one writes nothing until it can take it', {
          event: 'lock_held_elsewhere',
          db: redactUrl(this.url),
        });
      }
      throw e;
    }
    this.watch(c);
    this.writer = c;
    this.writerLost = false;
    this.heldElsewhere = false;
    this.lockEpoch++;
    this.commits++;
    const down = this.writerDownAt;
    this.writerDownAt = undefined;
    this.log.info('index: PostgreSQL writer connection back, advisory lock retaken', {
      event: 'lock_retaken',
      db: redactUrl(this.url),
      down_ms: down === undefined ? null : Date.now() - down,
    });
    return c;
  }

  writerLock(): { epoch: number; held: boolean } | undefined {
    return this.writer ? { epoch: this.lockEpoch, held: !this.writerLost } : undefined;
  }
  static async open(url: string, mode: 'writer' | 'reader', log: Logger = silentLogger): Promise<PgDriver> {
    let pg: typeof PgTypes;
    try {
      pg = require('pg') as typeof PgTypes;
    } catch (e) {
      throw new CharmsError('CONFIG', 'the PostgreSQL client (pg) cannot be loaded: reinstall charms-ts', { cause: e });
    }
    const pool = new pg.Pool({ connectionString: url, max: 8 });
    pool.on('error', () => {}); // an idle client's error: the next query reports it
    if (mode === 'reader') {
      try {
        await pool.query('SELECT 1');
      } catch (e) {
        await pool.end();
        throw connectFailure(url, e, 'reader');
      }
      return new PgDriver(url, pool, undefined, pg, log);
    }
    let writer: PgTypes.Client;
    try {
      writer = await lockedWriter(pg, url, 'run one indexer per database, and --api-only for more API instances');
    } catch (e) {
      await pool.end();
      // at start, a missing CONNECT grant is said as such (a reconnect later keeps it "unavailable")
      throw e instanceof CharmsError && e.code === 'UPSTREAM_UNAVAILABLE' ? connectFailure(url, e.cause, 'writer') : e;
    }
    return new PgDriver(url, pool, writer, pg, log);
  }

  async all(sql: string, params: unknown[] = []): Promise<Row[]> {
    return (await this.query({ text: numbered(sql), values: params })) as Row[];
  }

  async rows(sql: string, params: unknown[] = []): Promise<unknown[][]> {
    return (await this.query({ text: numbered(sql), values: params, rowMode: 'array' })) as unknown[][];
  }

  /**
   * `fn` on one snapshot: one pooled client in a REPEATABLE READ READ ONLY transaction (every
   * query sees the state committed when its first one ran), committed after `fn`, rolled back when
   * it throws; the client goes back to the pool either way (destroyed when it failed).
   */
  async read<T>(fn: (tx: ReadTx) => Promise<T>): Promise<T> {
    let c: PgTypes.PoolClient;
    try {
      c = await this.pool.connect();
    } catch (e) {
      this.readerLost(e);
      throw unavailable(this.url, e);
    }
    let open = true;
    let broken: unknown;
    const q = async (cfg: PgTypes.QueryConfig & { rowMode?: 'array' }): Promise<unknown[]> => {
      if (!open) throw new CharmsError('INTERNAL', 'a read of a snapshot that has ended');
      try {
        return (await c.query(cfg)).rows as unknown[];
      } catch (e) {
        if ((e as { code?: string }).code === undefined) {
          broken = e;
          this.readerLost(e);
          throw unavailable(this.url, e);
        }
        throw queryError(this.url, e);
      }
    };
    const tx: ReadTx = {
      engine: 'postgres',
      all: async (sql, params = []) => (await q({ text: numbered(sql), values: params })) as Row[],
      rows: async (sql, params = []) => (await q({ text: numbered(sql), values: params, rowMode: 'array' })) as unknown[][],
    };
    try {
      await q({ text: 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' });
      let out: T;
      try {
        out = await fn(tx);
      } catch (e) {
        if (broken === undefined) await c.query('ROLLBACK').catch((r: unknown) => void (broken = r));
        throw e;
      }
      await q({ text: 'COMMIT' });
      this.readerBack();
      return out;
    } finally {
      open = false;
      c.release(broken === undefined ? undefined : (broken as Error));
    }
  }

  /** A read through the pool; a failure without a PostgreSQL error code is the database being away. */
  private async query(q: PgTypes.QueryConfig & { rowMode?: 'array' }): Promise<unknown[]> {
    let rows: unknown[];
    try {
      rows = (await this.pool.query(q)).rows as unknown[];
    } catch (e) {
      if ((e as { code?: string }).code !== undefined) throw queryError(this.url, e);
      this.readerLost(e);
      throw unavailable(this.url, e);
    }
    this.readerBack();
    return rows;
  }

  /** A read found PostgreSQL away (no SQLSTATE: the connection failed): logged once until one succeeds. */
  private readerLost(e: unknown): void {
    if (this.readerDownAt !== undefined) return;
    this.readerDownAt = Date.now();
    this.log.warn('index: PostgreSQL reader connection lost; answers are 503 until it is back', {
      event: 'pg_reader_lost',
      db: redactUrl(this.url),
      error: (e as Error).message,
    });
  }

  private readerBack(): void {
    const down = this.readerDownAt;
    if (down === undefined) return;
    this.readerDownAt = undefined;
    this.log.info('index: PostgreSQL reader connection back', { event: 'pg_reader_back', db: redactUrl(this.url), down_ms: Date.now() - down });
  }

  /**
   * The writer: its own commit count (no round trip; the answer cache's state). A reader: the
   * writer's `meta.data_version` (store.ts moves it in every block transaction) read by a query
   * sent after this call, so a commit that a fresh query would see is never missed; concurrent
   * callers share it (one read in flight, callers arriving meanwhile share the next one).
   * Undefined when the row is missing or the read fails (nothing is cached then).
   */
  dataVersion(): number | Promise<number | undefined> | undefined {
    // a writer without its lock cannot tell: another indexer may be committing (nothing is kept)
    if (this.writer) return this.writerLost ? undefined : this.commits;
    if (!this.versionRead) return this.readVersion();
    this.versionNext ??= this.versionRead.then(() => {
      this.versionNext = undefined;
      return this.readVersion();
    });
    return this.versionNext;
  }

  private readVersion(): Promise<number | undefined> {
    const p: Promise<number | undefined> = this.pool
      .query("SELECT value, 'meta'::regclass::oid::text AS meta FROM meta WHERE key = 'data_version'")
      .then(
        (r) => {
          const row = r.rows[0] as { value: string; meta: string } | undefined;
          return row ? this.versionIn(row.meta, Number(row.value)) : undefined;
        },
        () => undefined,
      )
      .finally(() => {
        if (this.versionRead === p) this.versionRead = undefined;
      });
    this.versionRead = p;
    return p;
  }

  /**
   * `version` as this reader reports it: a database rebuilt under the same URL (its `meta` a new
   * table, so a new oid) starts its data version at 0 again, and could come back to a version this
   * reader kept answers for; from a new `meta` on, versions count on from above every one reported
   * before, so no two databases' states are ever the same number.
   */
  private versionIn(meta: string, version: number): number {
    if (this.metaOid !== undefined && meta !== this.metaOid) this.versionBase = this.lastVersion + 1;
    this.metaOid = meta;
    this.lastVersion = Math.max(this.lastVersion, this.versionBase + version);
    return this.versionBase + version;
  }

  transaction<T>(fn: (tx: TxDriver) => Promise<T>): Promise<T> {
    if (!this.writer) return Promise.reject(new CharmsError('INTERNAL', 'the index is open read-only'));
    // the connection the transaction began on (writerNow replaces a dead one before BEGIN)
    // a connection found gone mid-transaction is marked lost at once (its 'end' may come later)
    const lostOn = (e: unknown): never => {
      if (connectionGone(e)) this.markWriterLost(e);
      throw e;
    };
    const tx: TxDriver = {
      all: async (sql, params = []) => ((await this.writer!.query(numbered(sql), params).catch(lostOn)) as PgTypes.QueryResult).rows as Row[],
      run: async (sql, params = []) => {
        await this.writer!.query(numbered(sql), params).catch(lostOn);
      },
      exec: async (sql) => {
        await this.writer!.query(sql).catch(lostOn);
      },
    };
    return this.txs!.run(() => fn(tx));
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.txs?.idle();
    await this.writer?.end().catch(() => {});
    await this.pool.end();
  }
}

/**
 * A new writer connection holding the advisory lock; `taken` tells the user what to do when
 * another indexer holds it. Connection failures are UPSTREAM_UNAVAILABLE (tried again later).
 */
async function lockedWriter(pg: typeof PgTypes, url: string, taken: string): Promise<PgTypes.Client> {
  // TCP keepalives: a connection that died silently (a network partition, after which PostgreSQL
  // frees the lock) is found lost within a minute even while nothing is written
  const writer = new pg.Client({ connectionString: url, keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
  writer.on('error', () => {}); // a dead connection: its next query (or the 'end' event) tells
  try {
    await writer.connect();
    const r = await writer.query('SELECT pg_try_advisory_lock($1, $2) AS ok', [...LOCK_KEY]);
    if (r.rows[0]?.ok !== true)
      throw new CharmsError('CONFIG', `PostgreSQL at ${redactUrl(url)}: another indexer is writing this index (it holds the advisory lock); ${taken}`);
    return writer;
  } catch (e) {
    await writer.end().catch(() => {});
    throw e instanceof CharmsError ? e : unavailable(url, e);
  }
}

/**
 * The error says the connection itself is gone: no SQLSTATE (the socket ended), class 08
 * (connection exception) or 57P01-57P03 (the backend terminated, PostgreSQL shutting down or
 * restarting).
 */
function connectionGone(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  return code === undefined || (typeof code === 'string' && (code.startsWith('08') || /^57P0[1-3]$/.test(code)));
}
