/**
 * The PostgreSQL engine of the index store (pg 8): reads through a pool (any number of `--api-only`
 * instances can serve one database), writes through one dedicated connection that holds a
 * session advisory lock for its lifetime, so a second indexer on the same database is refused.
 * The lock is released by PostgreSQL when the connection dies (a killed indexer does not block
 * the next one).
 */
import { createRequire } from 'node:module';
import type * as PgTypes from 'pg';
import { CharmsError } from '../errors.js';
import { redactUrl } from '../util/redact.js';
import { TxQueue, type Driver, type Row, type TxDriver } from './store.js';

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

export class PgDriver implements Driver {
  readonly engine = 'postgres' as const;
  /** The writer's database cannot be rebuilt under it (it holds the lock); a reader's can. */
  readonly idsStable: boolean;
  private readonly txs: TxQueue | undefined;
  /** The writer's commits: no other process writes this database (the advisory lock). */
  private commits = 0;
  /** A reader's read of `meta.data_version` in flight, and the one queued behind it. */
  private versionRead: Promise<number | undefined> | undefined;
  private versionNext: Promise<number | undefined> | undefined;
  /** The `meta` table's oid the last version was read with, and what this reader adds to its versions. */
  private metaOid: string | undefined;
  private versionBase = 0;
  private lastVersion = -1;

  private constructor(
    private readonly url: string,
    private readonly pool: PgTypes.Pool,
    private readonly writer: PgTypes.Client | undefined,
  ) {
    const w = writer;
    this.idsStable = writer !== undefined;
    this.txs =
      w &&
      new TxQueue({
        begin: async () => void (await w.query('BEGIN')),
        commit: async () => {
          await w.query('COMMIT');
          this.commits++;
        },
        rollback: async () => void (await w.query('ROLLBACK').catch(() => {})),
      });
  }

  static async open(url: string, mode: 'writer' | 'reader'): Promise<PgDriver> {
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
        throw unavailable(url, e);
      }
      return new PgDriver(url, pool, undefined);
    }
    const writer = new pg.Client({ connectionString: url });
    writer.on('error', () => {});
    try {
      await writer.connect();
      const r = await writer.query('SELECT pg_try_advisory_lock($1, $2) AS ok', [...LOCK_KEY]);
      if (r.rows[0]?.ok !== true)
        throw new CharmsError(
          'CONFIG',
          `PostgreSQL at ${redactUrl(url)}: another indexer is writing this index (it holds the advisory lock); run one indexer per database, and --api-only for more API instances`,
        );
    } catch (e) {
      await writer.end().catch(() => {});
      await pool.end();
      throw e instanceof CharmsError ? e : unavailable(url, e);
    }
    return new PgDriver(url, pool, writer);
  }

  async all(sql: string, params: unknown[] = []): Promise<Row[]> {
    return (await this.read({ text: numbered(sql), values: params })) as Row[];
  }

  async rows(sql: string, params: unknown[] = []): Promise<unknown[][]> {
    return (await this.read({ text: numbered(sql), values: params, rowMode: 'array' })) as unknown[][];
  }

  /** A read through the pool; a failure without a PostgreSQL error code is the database being away. */
  private async read(q: PgTypes.QueryConfig & { rowMode?: 'array' }): Promise<unknown[]> {
    try {
      return (await this.pool.query(q)).rows as unknown[];
    } catch (e) {
      throw (e as { code?: string }).code === undefined ? unavailable(this.url, e) : e;
    }
  }

  /**
   * The writer: its own commit count (no round trip; the answer cache's state). A reader: the
   * writer's `meta.data_version` (store.ts moves it in every block transaction) read by a query
   * sent after this call, so a commit that a fresh query would see is never missed; concurrent
   * callers share it (one read in flight, callers arriving meanwhile share the next one).
   * Undefined when the row is missing or the read fails (nothing is cached then).
   */
  dataVersion(): number | Promise<number | undefined> {
    if (this.writer) return this.commits;
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
    const w = this.writer;
    if (!w) return Promise.reject(new CharmsError('INTERNAL', 'the index is open read-only'));
    const tx: TxDriver = {
      all: async (sql, params = []) => (await w.query(numbered(sql), params)).rows as Row[],
      run: async (sql, params = []) => {
        await w.query(numbered(sql), params);
      },
      exec: async (sql) => {
        await w.query(sql);
      },
    };
    return this.txs!.run(() => fn(tx));
  }

  async close(): Promise<void> {
    await this.txs?.idle();
    await this.writer?.end().catch(() => {});
    await this.pool.end();
  }
}
