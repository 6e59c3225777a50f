/**
 * The index store engines for tests: every store test runs on SQLite (a temporary file) and on a
 * real PostgreSQL (one server per test file, a fresh database per store; skipped through
 * skipOrFail when PostgreSQL is not installed).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openIndexStore } from '../indexer/open.js';
import { betterSqliteModule } from '../indexer/sqlite-driver.js';
import type { OpenOptions } from '../indexer/schema.js';
import type { IndexReader, IndexWriter } from '../indexer/store.js';
import { skipOrFail } from './require.js';
import { startPostgres, type TestPostgres } from './postgres.js';

export interface TestEngine {
  name: 'sqlite' | 'postgres';
  /** A fresh database URL/path (each call a new, empty one). */
  newDb(): Promise<string>;
  /** The writer (the default), or a reader with `mode: 'reader'`. */
  open(db: string, o: Partial<Omit<OpenOptions, 'label'>> & { mode: 'reader' }): Promise<IndexReader>;
  open(db: string, o?: Partial<Omit<OpenOptions, 'label'>> & { mode?: 'writer' }): Promise<IndexWriter>;
  open(db: string, o?: Partial<Omit<OpenOptions, 'label'>>): Promise<IndexReader>;
}

type Open = (db: string, o?: Partial<Omit<OpenOptions, 'label'>>) => Promise<IndexReader>;

const defaults = { mode: 'writer' as const, network: 'regtest', mock: false, startHeight: 1 };

let seq = 0;

export class TestEngines {
  private pg: TestPostgres | undefined;
  private pgTried = false;
  private dirs: string[] = [];

  async postgres(): Promise<TestPostgres | undefined> {
    if (!this.pgTried) {
      this.pgTried = true;
      this.pg = await startPostgres();
    }
    return this.pg;
  }

  sqlite(): TestEngine {
    return {
      name: 'sqlite',
      newDb: async () => {
        const d = mkdtempSync(join(tmpdir(), 'charms-index-'));
        this.dirs.push(d);
        return join(d, 'index.sqlite');
      },
      open: ((db, o = {}) => openIndexStore(db, { ...defaults, ...o })) as Open as TestEngine['open'],
    };
  }

  /** The engine, or undefined after skipping `t` when PostgreSQL is missing. */
  async engine(name: 'sqlite' | 'postgres', t: { skip: (m?: string) => void }): Promise<TestEngine | undefined> {
    if (name === 'sqlite') return this.sqlite();
    const pg = await this.postgres();
    if (!pg) {
      skipOrFail(t, 'PostgreSQL (/usr/lib/postgresql/<version>/bin) is not installed');
      return undefined;
    }
    return {
      name: 'postgres',
      newDb: () => pg.createDb(`idx_${process.pid}_${++seq}`),
      open: ((db, o = {}) => openIndexStore(db, { ...defaults, ...o })) as Open as TestEngine['open'],
    };
  }

  async close(): Promise<void> {
    await this.pg?.stop();
    for (const d of this.dirs) rmSync(d, { recursive: true, force: true });
  }
}

export const ENGINES = ['sqlite', 'postgres'] as const;

/** Runs SQL on the database `db` of `e` directly, past the store: one statement with `$n` parameters (its rows), or a script without. */
export async function sqlOn(e: TestEngine, db: string, text: string, params: string[] = []): Promise<Record<string, unknown>[]> {
  if (e.name === 'sqlite') {
    const Database = createRequire(import.meta.url)(betterSqliteModule()) as typeof import('better-sqlite3');
    const d = new Database(db);
    try {
      if (params.length === 0 && text.includes(';')) {
        d.exec(text);
        return [];
      }
      const st = d.prepare(text.replace(/\$\d/g, '?'));
      return st.reader ? (st.all(...params) as Record<string, unknown>[]) : (st.run(...params), []);
    } finally {
      d.close();
    }
  }
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: db });
  await c.connect();
  try {
    return (await c.query(text, params)).rows as Record<string, unknown>[];
  } finally {
    await c.end();
  }
}
