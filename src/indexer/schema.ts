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
import { CharmsError } from '../errors.js';
import type { Logger } from '../infra/log.js';
import type { Driver, Engine, Row, TxDriver } from './driver.js';

export type { Engine } from './driver.js';

const TYPES: Record<Engine, Record<string, string>> = {
  sqlite: { BLOB: 'BLOB', AMOUNT: 'TEXT', SUM: 'TEXT', BIGINT: 'INTEGER', NOROWID: 'WITHOUT ROWID', SERIAL: 'INTEGER PRIMARY KEY' },
  postgres: { BLOB: 'bytea', AMOUNT: 'NUMERIC(20,0)', SUM: 'NUMERIC', BIGINT: 'BIGINT', NOROWID: '', SERIAL: 'BIGSERIAL PRIMARY KEY' },
};

const ddlFor = (engine: Engine, sql: string): string => sql.replace(/\{([A-Z]+)\}/g, (_, t: string) => TYPES[engine][t]!);

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

/**
 * Version 6: the Charms Cast DEX orders (dex.ts writes them, dex-routes.ts serves them) and the
 * explorer's likes (`--likes`, likes.ts). `dex_orders`: one row per order (`status` open) or
 * activity row of a fulfill or cancel (`status` filled or cancelled, `parent_order_id` its order),
 * with the block and transaction that wrote it; an order's closing (the spend of its output) in
 * `closed_height`/`closed_status`, which a rollback clears (`dex_orders_closed`). Its indexes serve
 * the lists (newest first: all, open ones, per asset, per maker) and the spends' lookup by
 * outpoint. `likes`: one row per charm and user. A database of an older version gets its DEX rows
 * from its spells on the writer's next block (meta `dex_orders` = pending until then).
 */
const V6 = `
CREATE TABLE IF NOT EXISTS dex_orders (
  order_id TEXT PRIMARY KEY, txid {BLOB} NOT NULL, vout INTEGER NOT NULL,
  height INTEGER NOT NULL, tx_index INTEGER NOT NULL,
  maker TEXT NOT NULL, side TEXT NOT NULL, exec_type TEXT NOT NULL,
  price_num {AMOUNT} NOT NULL, price_den {AMOUNT} NOT NULL, amount {AMOUNT} NOT NULL, quantity {AMOUNT} NOT NULL,
  asset_app_id TEXT NOT NULL, parent_order_id TEXT, status TEXT NOT NULL,
  closed_height INTEGER, closed_status TEXT);
CREATE INDEX IF NOT EXISTS dex_orders_order ON dex_orders(height, tx_index, vout);
CREATE INDEX IF NOT EXISTS dex_orders_outpoint ON dex_orders(txid, vout);
CREATE INDEX IF NOT EXISTS dex_orders_closed ON dex_orders(closed_height) WHERE closed_height IS NOT NULL;
CREATE INDEX IF NOT EXISTS dex_orders_open ON dex_orders(height, tx_index, vout) WHERE status = 'open' AND closed_height IS NULL;
CREATE INDEX IF NOT EXISTS dex_orders_asset ON dex_orders(asset_app_id, height, tx_index, vout);
CREATE INDEX IF NOT EXISTS dex_orders_maker ON dex_orders(maker, height, tx_index, vout);
CREATE TABLE IF NOT EXISTS likes (charm_id TEXT NOT NULL, user_id TEXT NOT NULL, at {BIGINT} NOT NULL, PRIMARY KEY (charm_id, user_id));
INSERT INTO meta (key, value) VALUES ('dex_orders', 'pending') ON CONFLICT (key) DO NOTHING;
`;

/**
 * Version 7: Cardano (cardano-follow.ts): a block's slot (`block_slots`, beside `blocks` so that the step
 * stays idempotent as V2-V5: Cardano's intersection points are slot + hash), outputs a spell beams to another chain (recorded with their destination hash, neither
 * held nor burned: `beamed_outputs`), and the token apps learned from verified spells with the
 * height they were learned at (a rollback below it un-learns them: their native assets no longer
 * move as charms). The chain is meta `chain` (written by every writer since V1; `bitcoin` when
 * absent): a database of one chain and network is refused by the other's (prepareSchema).
 */
const V7 = `
CREATE TABLE IF NOT EXISTS block_slots (height INTEGER PRIMARY KEY, slot {BIGINT} NOT NULL);
CREATE TABLE IF NOT EXISTS beamed_outputs (
  txid {BLOB} NOT NULL, vout INTEGER NOT NULL, app TEXT NOT NULL, amount {AMOUNT}, data {BLOB},
  script {BLOB} NOT NULL, value {BIGINT} NOT NULL, dest {BLOB} NOT NULL,
  created_height INTEGER NOT NULL, tx_index INTEGER NOT NULL,
  PRIMARY KEY (txid, vout, app)) {NOROWID};
CREATE INDEX IF NOT EXISTS beamed_created ON beamed_outputs(created_height);
CREATE INDEX IF NOT EXISTS beamed_dest ON beamed_outputs(dest);
CREATE TABLE IF NOT EXISTS learned_tokens (app TEXT PRIMARY KEY, height INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS learned_height ON learned_tokens(height);
`;

/**
 * Version 8: charm outputs by app, spent ones too (`co_app`): an app's reference-NFT data
 * (query.ts `nftDataOf`, read per catalogue item by the explorer's asset and charm pages) was a scan
 * of every charm output (~60 ms per item at 1M outputs); now a search of that app's outputs.
 */
const V8 = `
CREATE INDEX IF NOT EXISTS co_app ON charm_outputs(app_id, created_height);
`;

export const MIGRATIONS: readonly string[] = [V1, V2, V3, V4, V5, V6, V7, V8];
export const SCHEMA_VERSION = MIGRATIONS.length;

export interface IndexMeta {
  schemaVersion: number;
  chain: string;
  network: string;
  mock: boolean;
  startHeight: number;
  /** A Cardano index's start point (`<slot>.<block hash>` or `origin`), as first started; absent on Bitcoin. */
  startPoint: string | undefined;
}

// ------------------------------------------------------------------------------ preparation

export interface OpenOptions {
  /** Writer (the follower: migrates, records meta) or a read-only API instance. */
  mode: 'writer' | 'reader';
  /** The chain followed (default bitcoin): a database of the other chain is refused. */
  chain?: 'bitcoin' | 'cardano' | undefined;
  network: string;
  mock: boolean;
  startHeight: number;
  /** A new Cardano index's start point (`<slot>.<block hash>` or `origin`), kept in meta `start_point`. */
  startPoint?: string | undefined;
  /** For messages: how the user names this database. */
  label: string;
  /** Where the engine logs its connections lost and back (PostgreSQL); absent: nowhere. */
  log?: Logger | undefined;
}

/**
 * Brings the database to SCHEMA_VERSION (writer) or checks it is there (reader), and checks the
 * meta: network and mock flag must match what the command was started with.
 */
export async function prepareSchema(d: Driver, o: OpenOptions): Promise<IndexMeta> {
  try {
    return await prepared(d, o);
  } catch (e) {
    throw isPrivilegeError(e) ? await privilegeError(d, o, e) : e;
  }
}

/** The tables of the index (every one a reader reads). */
const INDEX_TABLES = [
  'meta',
  'blocks',
  'apps',
  'scripts',
  'spell_txs',
  'charm_outputs',
  'script_history',
  'reorgs',
  'recent_txs',
  'assets',
  'dex_orders',
  'likes',
  'block_slots',
  'beamed_outputs',
  'learned_tokens',
] as const;

/** PostgreSQL's error of SQLSTATE 42501, insufficient_privilege ("permission denied for table meta"), itself or as the driver's cause. */
const privilegeCause = (e: unknown): Error | undefined => {
  const c = e as { code?: unknown; cause?: { code?: unknown } } | undefined;
  return c?.code === '42501' ? (e as Error) : c?.cause?.code === '42501' ? (c.cause as Error) : undefined;
};
const isPrivilegeError = (e: unknown): boolean => privilegeCause(e) !== undefined;

/**
 * What the grants are for a role to read the index (`--api-only`), as docs/index.md lists them:
 * the tables of a later migration are readable through the default privileges the writer's role
 * grants (run by that role).
 */
const readerGrants = (role: string, database: string, schema: string, writer: string): string[] => [
  `GRANT CONNECT ON DATABASE ${database} TO ${role};`,
  `GRANT USAGE ON SCHEMA ${schema} TO ${role};`,
  `GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${role};`,
  `ALTER DEFAULT PRIVILEGES FOR ROLE ${writer} IN SCHEMA ${schema} GRANT SELECT ON TABLES TO ${role};`,
];

/** PostgreSQL refused a read or a write for want of a grant: which role, and the grants it needs. */
async function privilegeError(d: Driver, o: OpenOptions, e: unknown): Promise<CharmsError> {
  const who = await d
    .all(
      'SELECT current_user AS role, current_database() AS db, current_schema() AS schema, (SELECT tableowner FROM pg_tables WHERE tablename = ? AND schemaname = current_schema()) AS owner',
      ['meta'],
    )
    .catch(() => []);
  const q = (v: unknown, fallback: string): string =>
    typeof v === 'string' && v !== '' ? (/^[a-z_][a-z0-9_]*$/.test(v) ? v : `"${v.replaceAll('"', '""')}"`) : fallback;
  const role = q(who[0]?.role, '<role>');
  const schema = q(who[0]?.schema, 'public');
  const db = q(who[0]?.db, '<database>');
  const why = (privilegeCause(e) ?? (e as Error)).message;
  if (o.mode === 'reader')
    return new CharmsError(
      'CONFIG',
      `${o.label}: PostgreSQL role ${role} may not read the index (${why}); as the index's owner, grant it: ${readerGrants(role, db, schema, q(who[0]?.owner, '<indexer role>')).join(' ')} (docs/index.md)`,
      { cause: e },
    );
  return new CharmsError(
    'CONFIG',
    `${o.label}: PostgreSQL role ${role} may not build the index (${why}); the indexer's role owns the index's tables: GRANT CREATE, USAGE ON SCHEMA ${schema} TO ${role}; on an empty database, or index into a database ${role} owns (docs/index.md)`,
    { cause: e },
  );
}

async function prepared(d: Driver, o: OpenOptions): Promise<IndexMeta> {
  const version = await schemaVersion(d, o.label);
  if (version > SCHEMA_VERSION)
    throw new CharmsError(
      'CONFIG',
      `${o.label}: the index was built by a newer charms-ts (schema ${version}, this one knows ${SCHEMA_VERSION}); upgrade charms-ts or index into a new database`,
    );
  if (version < SCHEMA_VERSION) {
    if (o.mode === 'reader' && version === 0) throw new CharmsError('CONFIG', `${o.label}: the index is empty; start the indexer first`);
    if (o.mode === 'reader')
      throw new CharmsError(
        'CONFIG',
        `${o.label}: the index has schema ${version}, this charms-ts needs ${SCHEMA_VERSION}; start the indexer (not --api-only) once to migrate it`,
      );
    for (let v = version; v < SCHEMA_VERSION; v++)
      await d.transaction(async (tx) => {
        await tx.exec(ddlFor(d.engine, MIGRATIONS[v]!));
        await setMeta(tx, 'schema_version', String(v + 1));
      });
  }
  // a reader reads every table: a missing grant is told at start, not by the first answer
  if (o.mode === 'reader' && d.engine === 'postgres') for (const t of INDEX_TABLES) await d.all(`SELECT 1 FROM ${t} LIMIT 0`);
  const m = new Map((await d.all('SELECT key, value FROM meta')).map((r) => [r.key as string, r.value as string]));
  const chain = o.chain ?? 'bitcoin';
  if (!m.has('network')) {
    if (o.mode === 'reader') throw new CharmsError('CONFIG', `${o.label}: the index is empty; start the indexer first`);
    await d.transaction(async (tx) => {
      await setMeta(tx, 'chain', chain);
      await setMeta(tx, 'network', o.network);
      await setMeta(tx, 'mock', o.mock ? '1' : '0');
      await setMeta(tx, 'start_height', String(o.startHeight));
      if (o.startPoint !== undefined) await setMeta(tx, 'start_point', o.startPoint);
    });
    return { schemaVersion: SCHEMA_VERSION, chain, network: o.network, mock: o.mock, startHeight: o.startHeight, startPoint: o.startPoint };
  }
  const meta: IndexMeta = {
    schemaVersion: SCHEMA_VERSION,
    chain: m.get('chain') ?? 'bitcoin',
    network: m.get('network')!,
    mock: m.get('mock') === '1',
    startHeight: Number(m.get('start_height') ?? 0),
    startPoint: m.get('start_point'),
  };
  if (meta.chain !== chain)
    throw new CharmsError(
      'CONFIG',
      `${o.label}: the index is of ${meta.chain}:${meta.network}, not ${chain}:${o.network}; one chain and network per database: give this index another --db (or start it with --chain ${meta.chain} --network ${meta.network})`,
    );
  if (meta.network !== o.network) throw new CharmsError('CONFIG', `${o.label}: the index is of network ${meta.network}, not ${o.network}; use another --db`);
  if (meta.mock && !o.mock)
    throw new CharmsError('CONFIG', `${o.label}: the index was built with --mock (it holds mock charms); start with --mock, or index into a new database`);
  if (!meta.mock && o.mock)
    throw new CharmsError('CONFIG', `${o.label}: the index was built without --mock; start without --mock, or index into a new database`);
  // a Cardano index created without its start point (by the library) gets the one asked now
  if (meta.startPoint === undefined && o.startPoint !== undefined && o.mode === 'writer') {
    await d.transaction((tx) => setMeta(tx, 'start_point', o.startPoint!));
    meta.startPoint = o.startPoint;
  }
  return meta;
}

/** The tables of the database (SQLite file, or PostgreSQL's current schema). */
async function tableNames(d: Driver): Promise<string[]> {
  const rows =
    d.engine === 'sqlite'
      ? await d.all("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
      : await d.all('SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename');
  return rows.map((r) => String(r.name));
}

/**
 * The index's schema version: 0 for an empty database. A database that holds other tables (another
 * program's, such as the Charms explorer's own PostgreSQL) or an unreadable version is refused:
 * migrating it would mix our tables into it or fail half-way on a name clash.
 */
async function schemaVersion(d: Driver, label: string): Promise<number> {
  let rows: Row[] | undefined;
  try {
    rows = await d.all("SELECT value FROM meta WHERE key = 'schema_version'");
  } catch (e) {
    if (isPrivilegeError(e)) throw e; // a meta table this role may not read (prepareSchema says so)
    rows = undefined; // no meta table
  }
  if (rows && rows.length > 0) {
    const raw = String(rows[0]!.value);
    if (!/^\d{1,6}$/.test(raw))
      throw new CharmsError('CONFIG', `${label}: meta.schema_version is ${JSON.stringify(raw.slice(0, 40))}, not a charms index's; use another --db`);
    return Number(raw);
  }
  const tables = (await tableNames(d)).filter((t) => t !== 'meta');
  if (tables.length > 0)
    throw new CharmsError(
      'CONFIG',
      `${label}: the database holds tables that are not a charms index (${tables.slice(0, 5).join(', ')}${tables.length > 5 ? ', …' : ''}); index into an empty database (another --db)`,
    );
  return 0;
}

export async function setMeta(tx: TxDriver, key: string, value: string): Promise<void> {
  await tx.run('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [key, value]);
}
