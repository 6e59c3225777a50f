/**
 * What the store asks of a database engine, below the store and both engines. The read contract
 * every API answer is built on: one answer, one snapshot.
 *
 * `IndexReader.read(fn)` runs `fn` inside one read transaction (SQLite: BEGIN … COMMIT on the
 * reader connection; PostgreSQL: REPEATABLE READ READ ONLY on one pooled client), so all the
 * queries `fn` makes through its `ReadTx` see the same committed index state, even while a writer
 * commits blocks or rolls back a reorg. Query functions of the API (supply and holders, a
 * transaction and its outputs, a page and its total) take a `ReadTx` and never open their own.
 */
import type { Engine } from './schema.js';

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
