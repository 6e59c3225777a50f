/**
 * Opens the index named by `--db` / INDEX_DB_URL: a `postgres://` (or `postgresql://`) URL is
 * PostgreSQL, anything else a SQLite file path. The writer takes the engine's one-writer lock and
 * migrates; a reader (`--api-only`) only checks. Either refuses a database of another network or
 * another mock mode. A SQLite reader follows its path (reopen.ts): a file deleted and built anew,
 * or moved over the old one, is served once it passes the same checks.
 */
import { redactUrl } from '../util/redact.js';
import { PgDriver } from './pg-driver.js';
import { ReopeningStore, type ReopenOptions } from './reopen.js';
import type { Driver } from './driver.js';
import { prepareSchema, type OpenOptions } from './schema.js';
import { SqliteDriver } from './sqlite-driver.js';
import { SqlStore, type IndexReader, type IndexWriter } from './store.js';

const isPostgresUrl = (db: string): boolean => /^postgres(ql)?:\/\//i.test(db);

/** How a SQLite reader follows its path (reopen.ts). */
export type FollowOptions = Omit<ReopenOptions, 'open'>;

type Opening = Omit<OpenOptions, 'label'>;

/** The writer (`mode: 'writer'`, the follower's) or a reader (`--api-only`: reads only). */
export function openIndexStore(db: string, o: Opening & { mode: 'writer' }, follow?: FollowOptions): Promise<IndexWriter>;
export function openIndexStore(db: string, o: Opening, follow?: FollowOptions): Promise<IndexReader>;
export async function openIndexStore(db: string, o: Opening, follow: FollowOptions = {}): Promise<IndexReader> {
  if (!isPostgresUrl(db) && o.mode === 'reader') return ReopeningStore.open(db, { ...follow, open: () => openOnce(db, o) });
  return openOnce(db, o);
}

async function openOnce(db: string, o: Opening): Promise<SqlStore> {
  const pg = isPostgresUrl(db);
  const label = pg ? redactUrl(db) : db;
  const d: Driver = pg ? await PgDriver.open(db, o.mode, o.log) : SqliteDriver.open(db, o.mode);
  try {
    return new SqlStore(d, await prepareSchema(d, { ...o, label }));
  } catch (e) {
    await d.close();
    throw e;
  }
}
