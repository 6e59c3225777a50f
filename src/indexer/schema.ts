/**
 * The charms index's one schema, written once for both engines: `{BLOB}`, `{AMOUNT}`, `{SUM}`,
 * `{BIGINT}` and `{NOROWID}` become the engine's types (SQLite: BLOB, TEXT (u64 decimal), TEXT,
 * INTEGER, `WITHOUT ROWID`; PostgreSQL: bytea, NUMERIC(20,0), NUMERIC, BIGINT, nothing).
 *
 * Migrations are versioned: `MIGRATIONS[i]` takes a database from version i to i + 1, and the
 * version lives in `meta.schema_version`. A database from an older version is migrated when the
 * writer opens it; one from a newer version is refused (the operator upgrades charms-ts).
 *
 * Hashes and txids are stored as the bytes of their display hex (so byte order = hex order).
 * Amounts are exact u64 (charms' fungible amounts); history sums may exceed u64 (NUMERIC / TEXT).
 */
export type Engine = 'sqlite' | 'postgres';

const TYPES: Record<Engine, Record<string, string>> = {
  sqlite: { BLOB: 'BLOB', AMOUNT: 'TEXT', SUM: 'TEXT', BIGINT: 'INTEGER', NOROWID: 'WITHOUT ROWID', SERIAL: 'INTEGER PRIMARY KEY' },
  postgres: { BLOB: 'bytea', AMOUNT: 'NUMERIC(20,0)', SUM: 'NUMERIC', BIGINT: 'BIGINT', NOROWID: '', SERIAL: 'BIGSERIAL PRIMARY KEY' },
};

export const ddlFor = (engine: Engine, sql: string): string => sql.replace(/\{([A-Z]+)\}/g, (_, t: string) => TYPES[engine][t]!);

/** Version 1: the whole schema (research note §5.2). */
const V1 = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE blocks (
  height INTEGER PRIMARY KEY, hash {BLOB} NOT NULL UNIQUE, prev_hash {BLOB} NOT NULL,
  time {BIGINT} NOT NULL, spell_txs INTEGER NOT NULL);
CREATE TABLE apps (id {SERIAL}, app TEXT NOT NULL UNIQUE, tag TEXT NOT NULL);
CREATE TABLE scripts (id {SERIAL}, script {BLOB} NOT NULL UNIQUE);
CREATE TABLE spell_txs (
  txid {BLOB} PRIMARY KEY, height INTEGER NOT NULL, tx_index INTEGER NOT NULL,
  version INTEGER NOT NULL, spell {BLOB} NOT NULL);
CREATE INDEX spell_txs_height ON spell_txs(height);
CREATE TABLE charm_outputs (
  txid {BLOB} NOT NULL, vout INTEGER NOT NULL, app_id {BIGINT} NOT NULL REFERENCES apps(id),
  script_id {BIGINT} NOT NULL REFERENCES scripts(id),
  amount {AMOUNT}, data {BLOB}, btc_value {BIGINT} NOT NULL,
  created_height INTEGER NOT NULL, tx_index INTEGER NOT NULL,
  spent_height INTEGER, spent_txid {BLOB}, spent_vin INTEGER,
  PRIMARY KEY (txid, vout, app_id)) {NOROWID};
CREATE INDEX co_unspent_script ON charm_outputs(script_id, app_id) WHERE spent_height IS NULL;
CREATE INDEX co_unspent_app ON charm_outputs(app_id, script_id) WHERE spent_height IS NULL;
CREATE INDEX co_created ON charm_outputs(created_height);
CREATE INDEX co_spent ON charm_outputs(spent_height) WHERE spent_height IS NOT NULL;
CREATE INDEX co_spender ON charm_outputs(spent_txid) WHERE spent_txid IS NOT NULL;
CREATE TABLE script_history (
  script_id {BIGINT} NOT NULL, height INTEGER NOT NULL, tx_index INTEGER NOT NULL, txid {BLOB} NOT NULL,
  app_id {BIGINT} NOT NULL, received {SUM} NOT NULL, sent {SUM} NOT NULL,
  PRIMARY KEY (script_id, height, tx_index, app_id)) {NOROWID};
CREATE INDEX sh_height ON script_history(height);
CREATE TABLE reorgs (
  id {SERIAL}, at {BIGINT} NOT NULL, fork_height INTEGER NOT NULL, depth INTEGER NOT NULL,
  old_tip {BLOB} NOT NULL, new_tip {BLOB} NOT NULL);
`;

/**
 * Version 2: the data version PostgreSQL readers ask (`meta.data_version`, moved by every block
 * transaction and rollback, store.ts): a writer from before it would not move it, so it refuses
 * this schema instead of leaving the answer caches of `--api-only` readers stale.
 */
const V2 = `INSERT INTO meta (key, value) VALUES ('data_version', '0') ON CONFLICT (key) DO NOTHING;`;

/**
 * Version 3: the balances' read (unspent outputs of a script: app, amount, outpoint) from the
 * index alone. SQLite's secondary index of a WITHOUT ROWID table holds the primary key (txid,
 * vout, app_id); with the amount and spent_height (SQLite counts a column of the partial index's
 * WHERE as needed) every column the read asks is in it: no lookup of the table per output (half
 * the read's CPU on a 100 000-output index, bench index-api). It serves every use of
 * co_unspent_script (same leading columns, same WHERE), which it replaces. Building it reads the
 * unspent outputs once (seconds for millions). Idempotent, as V2 (a re-run changes nothing).
 */
const V3 = `
CREATE INDEX IF NOT EXISTS co_unspent_by_script ON charm_outputs(script_id, app_id, amount, spent_height) WHERE spent_height IS NULL;
DROP INDEX IF EXISTS co_unspent_script;
`;

/**
 * Version 4: the txids of the last blocks (`--recent-tx-blocks`, follower.ts; one row per block,
 * its txids sorted), so that the explorer API knows the height of any recent transaction, spell or
 * not, without asking a node that may lack `-txindex`. Written with the block, deleted by a
 * rollback above it, pruned below the window; only blocks near the node's tip are written (initial
 * sync skips the rest). Idempotent, as V2 and V3.
 */
const V4 = `
CREATE TABLE IF NOT EXISTS recent_txs (height INTEGER PRIMARY KEY, txids {BLOB} NOT NULL);
`;

/**
 * Version 5: the asset catalogue of the explorer routes (catalogue.ts writes it, query.ts reads
 * it): one row per app seen in a verified spell (an output's app or one its spell names), with its
 * first block and transaction, its exact supply in unspent outputs (an output without an amount
 * counts 1) and the charm outputs ever created for it; kept by every block write and rollback in
 * their transaction. Its indexes serve the sorts the routes offer (newest/oldest, per type), and
 * those of the charms and transactions lists (newest first): co_order replaces co_created (same
 * leading column, the rollback's range), spell_txs_order the list of spell transactions. A
 * database of an older version gets the rows from its outputs and spells on the writer's next
 * block (meta `assets_catalogue` = pending until then).
 */
const V5 = `
CREATE TABLE IF NOT EXISTS assets (
  app_id {BIGINT} PRIMARY KEY, asset_type TEXT NOT NULL,
  first_height INTEGER NOT NULL, first_tx_index INTEGER NOT NULL, first_txid {BLOB} NOT NULL,
  supply {SUM} NOT NULL, outputs {BIGINT} NOT NULL);
CREATE INDEX IF NOT EXISTS assets_order ON assets(first_height, first_tx_index, app_id);
CREATE INDEX IF NOT EXISTS assets_type_order ON assets(asset_type, first_height, first_tx_index, app_id);
CREATE INDEX IF NOT EXISTS spell_txs_order ON spell_txs(height, tx_index);
CREATE INDEX IF NOT EXISTS co_order ON charm_outputs(created_height, tx_index, vout, app_id);
DROP INDEX IF EXISTS co_created;
INSERT INTO meta (key, value) VALUES ('assets_catalogue', 'pending') ON CONFLICT (key) DO NOTHING;
`;

export const MIGRATIONS: readonly string[] = [V1, V2, V3, V4, V5];
export const SCHEMA_VERSION = MIGRATIONS.length;
