/**
 * The index's read queries as typed records, each over one `ReadTx` (driver.ts): a route runs all
 * the queries of one answer inside one `store.read(tx => …)`, so the answer is one index state.
 * SQL lives here, HTTP in the routes (explorer-routes.ts). Lists are bounded by their callers'
 * limits and read ranges of the catalogue's indexes (schema V5): no scan of all outputs.
 */
import type { Engine } from './schema.js';
import type { ReadTx, Row } from './driver.js';

const hexOf = (b: unknown): string => Buffer.from(b as Uint8Array).toString('hex');
const big = (v: unknown): bigint => BigInt(v as string | number | bigint);
const num = (v: unknown): number => Number(v);
const bytes = (hex: string): Buffer => Buffer.from(hex, 'hex');
/** Apps in their UTF-8 byte order on both engines (as the store). */
const appOrder = (engine: Engine, col = 'a.app'): string => (engine === 'postgres' ? `${col} COLLATE "C"` : col);
/** The exact sum of the rows' amounts `co.amount`, one without an amount counting 1 (SQLite: text by charms_sum; PostgreSQL: NUMERIC). */
const amountSum = (engine: Engine): string => (engine === 'sqlite' ? "charms_sum(COALESCE(co.amount, '1'))" : 'SUM(COALESCE(co.amount, 1))');

export type AssetType = 'token' | 'nft' | 'dapp';
export type Order = 'newest' | 'oldest';

export interface AssetRecord {
  /** The app's id in this index (the explorer's numeric `id`). */
  id: number;
  app: string;
  assetType: AssetType;
  firstHeight: number;
  firstTxIndex: number;
  firstTxid: string;
  /** The first block's time (unix seconds). */
  firstTime: number;
  /** Sum of unspent confirmed outputs' amounts (an output without one counts 1). */
  supply: bigint;
  /** Charm outputs ever created for it. */
  outputs: number;
}

const ASSET_COLS = 'c.app_id, a.app, c.asset_type, c.first_height, c.first_tx_index, c.first_txid, b.time, c.supply, c.outputs';
const ASSET_FROM = 'assets c JOIN apps a ON a.id = c.app_id JOIN blocks b ON b.height = c.first_height';

const assetRow = (r: Row): AssetRecord => ({
  id: num(r.app_id),
  app: r.app as string,
  assetType: r.asset_type as AssetType,
  firstHeight: num(r.first_height),
  firstTxIndex: num(r.first_tx_index),
  firstTxid: hexOf(r.first_txid),
  firstTime: num(r.time),
  supply: big(r.supply),
  outputs: num(r.outputs),
});

/** A position in the catalogue's order (exclusive): the last item of a page. */
export interface AssetCursor {
  height: number;
  txIndex: number;
  id: number;
}

/** A page of the catalogue, newest (first seen latest) or oldest first; `after` a keyset cursor, else `offset`. */
export async function assetsPage(
  tx: ReadTx,
  o: { type?: AssetType | undefined; order: Order; limit: number; offset?: number; after?: AssetCursor | undefined },
): Promise<AssetRecord[]> {
  const desc = o.order === 'newest';
  const where: string[] = [];
  const params: unknown[] = [];
  if (o.type) {
    where.push('c.asset_type = ?');
    params.push(o.type);
  }
  if (o.after) {
    const cmp = desc ? '<' : '>';
    where.push(`(c.first_height ${cmp} ? OR (c.first_height = ? AND (c.first_tx_index ${cmp} ? OR (c.first_tx_index = ? AND c.app_id ${cmp} ?))))`);
    params.push(o.after.height, o.after.height, o.after.txIndex, o.after.txIndex, o.after.id);
  }
  const dir = desc ? 'DESC' : 'ASC';
  const rows = await tx.all(
    `SELECT ${ASSET_COLS} FROM ${ASSET_FROM} ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
     ORDER BY c.first_height ${dir}, c.first_tx_index ${dir}, c.app_id ${dir} LIMIT ? OFFSET ?`,
    [...params, Math.trunc(o.limit), Math.trunc(o.offset ?? 0)],
  );
  return rows.map(assetRow);
}

/** Assets per type and in all. */
export async function assetCounts(tx: ReadTx): Promise<{ total: number; token: number; nft: number; dapp: number; outputs: Record<AssetType, number> }> {
  const rows = await tx.all('SELECT asset_type, COUNT(*) AS n, SUM(outputs) AS o FROM assets GROUP BY asset_type');
  const out = { total: 0, token: 0, nft: 0, dapp: 0, outputs: { token: 0, nft: 0, dapp: 0 } };
  for (const r of rows) {
    const t = r.asset_type as AssetType;
    if (t !== 'token' && t !== 'nft' && t !== 'dapp') continue;
    out[t] = num(r.n);
    out.outputs[t] = num(r.o ?? 0);
    out.total += num(r.n);
  }
  return out;
}

export async function assetByApp(tx: ReadTx, app: string): Promise<AssetRecord | undefined> {
  const r = await tx.all(`SELECT ${ASSET_COLS} FROM ${ASSET_FROM} WHERE a.app = ?`, [app]);
  return r[0] && assetRow(r[0]);
}

export async function assetById(tx: ReadTx, id: number): Promise<AssetRecord | undefined> {
  const r = await tx.all(`SELECT ${ASSET_COLS} FROM ${ASSET_FROM} WHERE c.app_id = ?`, [id]);
  return r[0] && assetRow(r[0]);
}

export interface HolderRecord {
  script: Uint8Array;
  amount: bigint;
  /** Its unspent outputs of the app. */
  outputs: number;
  /** Lowest and highest creation height of those outputs. */
  firstHeight: number;
  lastHeight: number;
}

/**
 * A page of an app's holders (unspent outputs grouped by script), largest holding first, then by
 * script; and their count. Reads the app's unspent outputs (co_unspent_app), summed by the engine.
 */
/** A position in the holders' order (exclusive): the last holder of a page. */
export interface HolderCursor {
  amount: bigint;
  script: Uint8Array;
}

/** A page of an app's holders, largest amount first (then by script); `after` a keyset cursor, else `offset`. */
export async function holdersPage(
  tx: ReadTx,
  app: string,
  o: { limit: number; offset: number; after?: HolderCursor | undefined },
): Promise<{ holders: number; page: HolderRecord[] }> {
  const unspent = 'co.app_id = (SELECT id FROM apps WHERE app = ?) AND co.spent_height IS NULL';
  const sum = amountSum(tx.engine);
  const count = await tx.all(`SELECT COUNT(DISTINCT co.script_id) AS n FROM charm_outputs co WHERE ${unspent}`, [app]);
  // SQLite's sums are decimal text without leading zeros: longer is larger, then by text
  const byAmount = tx.engine === 'sqlite' ? 'length(amount) DESC, amount DESC' : 'amount DESC';
  // after the cursor in that order: a smaller amount, or the same amount and a later script
  let after = '';
  const afterArgs: unknown[] = [];
  if (o.after) {
    const a = o.after.amount.toString();
    const script = Buffer.from(o.after.script);
    if (tx.engine === 'sqlite') {
      after = 'WHERE (length(x.amount) < ? OR (length(x.amount) = ? AND x.amount < ?) OR (x.amount = ? AND s.script > ?))';
      afterArgs.push(a.length, a.length, a, a, script);
    } else {
      after = 'WHERE (x.amount < ? OR (x.amount = ? AND s.script > ?))';
      afterArgs.push(a, a, script);
    }
  }
  const rows = await tx.all(
    `SELECT s.script, x.amount, x.outputs, x.first_height, x.last_height FROM (
       SELECT co.script_id, ${sum} AS amount, COUNT(*) AS outputs, MIN(co.created_height) AS first_height, MAX(co.created_height) AS last_height
       FROM charm_outputs co WHERE ${unspent} GROUP BY co.script_id) x JOIN scripts s ON s.id = x.script_id
     ${after} ORDER BY ${byAmount.replace(/amount/g, 'x.amount')}, s.script LIMIT ? OFFSET ?`,
    [app, ...afterArgs, Math.trunc(o.limit), o.after ? 0 : Math.trunc(o.offset)],
  );
  return {
    holders: num(count[0]?.n ?? 0),
    page: rows.map((r) => ({
      script: new Uint8Array(r.script as Uint8Array),
      amount: big(r.amount),
      outputs: num(r.outputs),
      firstHeight: num(r.first_height),
      lastHeight: num(r.last_height),
    })),
  };
}

/** One charm: one app's part of a charm output. */
export interface CharmRecord {
  txid: string;
  vout: number;
  app: string;
  amount: bigint | null;
  script: Uint8Array;
  height: number;
  txIndex: number;
  /** The creating block's time (unix seconds). */
  time: number;
  spent: boolean;
}

const CHARM_COLS = 'co.txid, co.vout, a.app, co.amount, s.script, co.created_height, co.tx_index, b.time, co.spent_height';
const CHARM_FROM = 'charm_outputs co JOIN apps a ON a.id = co.app_id JOIN scripts s ON s.id = co.script_id JOIN blocks b ON b.height = co.created_height';

const charmRow = (r: Row): CharmRecord => ({
  txid: hexOf(r.txid),
  vout: num(r.vout),
  app: r.app as string,
  amount: r.amount === null ? null : big(r.amount),
  script: new Uint8Array(r.script as Uint8Array),
  height: num(r.created_height),
  txIndex: num(r.tx_index),
  time: num(r.time),
  spent: r.spent_height !== null,
});

/** A page of all charms (spent ones too), newest first (co_order); of one asset type when `type`. */
export async function charmsPage(tx: ReadTx, o: { type?: AssetType | undefined; limit: number; offset: number }): Promise<CharmRecord[]> {
  const tags = o.type === 'token' ? "a.tag = 't'" : o.type === 'nft' ? "a.tag = 'n'" : o.type === 'dapp' ? "a.tag NOT IN ('t', 'n')" : '';
  const rows = await tx.all(
    `SELECT ${CHARM_COLS} FROM ${CHARM_FROM} ${tags ? `WHERE ${tags}` : ''}
     ORDER BY co.created_height DESC, co.tx_index DESC, co.vout, co.app_id LIMIT ? OFFSET ?`,
    [Math.trunc(o.limit), Math.trunc(o.offset)],
  );
  return rows.map(charmRow);
}

/** The unspent charms paying `script`, newest first. */
export async function charmsOfScript(tx: ReadTx, script: Uint8Array, o: { limit: number; offset: number }): Promise<CharmRecord[]> {
  const rows = await tx.all(
    `SELECT ${CHARM_COLS} FROM ${CHARM_FROM} WHERE co.script_id = (SELECT id FROM scripts WHERE script = ?) AND co.spent_height IS NULL
     ORDER BY co.created_height DESC, co.tx_index DESC, co.vout, ${appOrder(tx.engine)} LIMIT ? OFFSET ?`,
    [Buffer.from(script), Math.trunc(o.limit), Math.trunc(o.offset)],
  );
  return rows.map(charmRow);
}

/** The charms a transaction created, by vout and app. */
export async function charmsOfTx(tx: ReadTx, txid: string): Promise<CharmRecord[]> {
  const rows = await tx.all(`SELECT ${CHARM_COLS} FROM ${CHARM_FROM} WHERE co.txid = ? ORDER BY co.vout, ${appOrder(tx.engine)}`, [bytes(txid)]);
  return rows.map(charmRow);
}

/** An app's first charm (in chain order). */
export async function firstCharmOf(tx: ReadTx, app: string): Promise<CharmRecord | undefined> {
  const rows = await tx.all(
    `SELECT ${CHARM_COLS} FROM ${CHARM_FROM} WHERE co.app_id = (SELECT id FROM apps WHERE app = ?) ORDER BY co.created_height, co.tx_index, co.vout LIMIT 1`,
    [app],
  );
  return rows[0] && charmRow(rows[0]);
}

export interface SpellTxRecord {
  txid: string;
  height: number;
  txIndex: number;
  time: number;
  /** The normalized spell's CBOR. */
  spell: Uint8Array;
}

const spellTxRow = (r: Row): SpellTxRecord => ({
  txid: hexOf(r.txid),
  height: num(r.height),
  txIndex: num(r.tx_index),
  time: num(r.time),
  spell: new Uint8Array(r.spell as Uint8Array),
});

/** A page of the verified spell transactions, newest first (spell_txs_order). */
export async function spellTxsPage(tx: ReadTx, o: { limit: number; offset: number }): Promise<SpellTxRecord[]> {
  const rows = await tx.all(
    'SELECT t.txid, t.height, t.tx_index, b.time, t.spell FROM spell_txs t JOIN blocks b ON b.height = t.height ORDER BY t.height DESC, t.tx_index DESC LIMIT ? OFFSET ?',
    [Math.trunc(o.limit), Math.trunc(o.offset)],
  );
  return rows.map(spellTxRow);
}

export async function spellTxOf(tx: ReadTx, txid: string): Promise<SpellTxRecord | undefined> {
  const r = await tx.all('SELECT t.txid, t.height, t.tx_index, b.time, t.spell FROM spell_txs t JOIN blocks b ON b.height = t.height WHERE t.txid = ?', [
    bytes(txid),
  ]);
  return r[0] && spellTxRow(r[0]);
}

/** The spells of the transactions `txids` (those that carry one), by txid. */
export async function spellsOf(tx: ReadTx, txids: string[]): Promise<Map<string, Uint8Array>> {
  const out = new Map<string, Uint8Array>();
  const unique = [...new Set(txids)];
  for (let i = 0; i < unique.length; i += 500) {
    const part = unique.slice(i, i + 500);
    for (const r of await tx.all(`SELECT txid, spell FROM spell_txs WHERE txid IN (${part.map(() => '?').join(', ')})`, part.map(bytes)))
      out.set(hexOf(r.txid), new Uint8Array(r.spell as Uint8Array));
  }
  return out;
}

export async function spellTxCount(tx: ReadTx): Promise<number> {
  return num((await tx.all('SELECT COUNT(*) AS n FROM spell_txs'))[0]?.n ?? 0);
}

export interface BlockRecord {
  height: number;
  hash: string;
  time: number;
  spellTxs: number;
}

/** The last `n` blocks, newest first. */
export async function recentBlocks(tx: ReadTx, n: number): Promise<BlockRecord[]> {
  const rows = await tx.all('SELECT height, hash, time, spell_txs FROM blocks ORDER BY height DESC LIMIT ?', [Math.trunc(n)]);
  return rows.map((r) => ({ height: num(r.height), hash: hexOf(r.hash), time: num(r.time), spellTxs: num(r.spell_txs) }));
}

export interface NftDataRecord {
  app: string;
  data: Uint8Array;
  txid: string;
  vout: number;
  height: number;
}

/**
 * The current data of the NFT `n/<identity>/<vk>` (any vk when absent): its unspent output, else
 * the last one that held it (CHIP-0420 reference NFTs carry their tokens' metadata).
 */
export async function nftDataOf(tx: ReadTx, identity: string, vk?: string): Promise<NftDataRecord | undefined> {
  if (!/^[0-9a-f]{64}$/.test(identity) || (vk !== undefined && !/^[0-9a-f]{64}$/.test(vk))) return undefined;
  const r = await tx.all(
    // the apps first (a few), then their outputs through co_app (schema V8): never a scan of all outputs
    `SELECT a.app, co.data, co.txid, co.vout, co.created_height FROM charm_outputs co JOIN apps a ON a.id = co.app_id
     WHERE co.app_id IN (SELECT id FROM apps WHERE ${vk !== undefined ? 'app = ?' : 'app LIKE ?'}) AND co.data IS NOT NULL
     ORDER BY CASE WHEN co.spent_height IS NULL THEN 0 ELSE 1 END, co.created_height DESC, co.tx_index DESC, co.vout, ${appOrder(tx.engine)} LIMIT 1`,
    [vk !== undefined ? `n/${identity}/${vk}` : `n/${identity}/%`],
  );
  const x = r[0];
  return x && { app: x.app as string, data: new Uint8Array(x.data as Uint8Array), txid: hexOf(x.txid), vout: num(x.vout), height: num(x.created_height) };
}

/** Charm outputs (one per output and app, spent or not) created at heights `from`..`to`, by height. */
export async function charmOutputsByHeight(tx: ReadTx, from: number, to: number): Promise<Map<number, number>> {
  const rows = await tx.all('SELECT created_height AS h, COUNT(*) AS n FROM charm_outputs WHERE created_height BETWEEN ? AND ? GROUP BY created_height', [
    Math.trunc(from),
    Math.trunc(to),
  ]);
  return new Map(rows.map((r) => [num(r.h), num(r.n)]));
}

export async function tipOf(tx: ReadTx): Promise<BlockRecord | undefined> {
  return (await recentBlocks(tx, 1))[0];
}

// ------------------------------------------------------------------------------ DEX orders (schema V6, dex.ts)

export interface DexOrderRecord {
  orderId: string;
  txid: string;
  vout: number;
  height: number;
  /** The writing block's time (unix seconds). */
  time: number;
  maker: string;
  side: string;
  execType: string;
  priceNum: bigint;
  priceDen: bigint;
  amount: bigint;
  quantity: bigint;
  asset: string;
  parentOrderId: string | null;
  /** open, partial, filled or cancelled (an order's closing, else the row's own). */
  status: string;
}

/** Which orders a list holds: `open` ones only (dex_orders_open), of an asset, a side, a maker, a status. */
export interface DexFilter {
  open?: boolean;
  asset?: string | undefined;
  side?: string | undefined;
  maker?: string | undefined;
  status?: string | undefined;
}

const DEX_COLS = `o.order_id, o.txid, o.vout, o.height, b.time, o.maker, o.side, o.exec_type, o.price_num, o.price_den, o.amount, o.quantity,
  o.asset_app_id, o.parent_order_id, COALESCE(o.closed_status, o.status) AS status`;

const dexRow = (r: Row): DexOrderRecord => ({
  orderId: r.order_id as string,
  txid: hexOf(r.txid),
  vout: num(r.vout),
  height: num(r.height),
  time: num(r.time),
  maker: r.maker as string,
  side: r.side as string,
  execType: r.exec_type as string,
  priceNum: big(r.price_num),
  priceDen: big(r.price_den),
  amount: big(r.amount),
  quantity: big(r.quantity),
  asset: r.asset_app_id as string,
  parentOrderId: (r.parent_order_id as string | null) ?? null,
  status: r.status as string,
});

function dexWhere(f: DexFilter): { sql: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  if (f.open || f.status === 'open') where.push("o.status = 'open' AND o.closed_height IS NULL");
  else if (f.status !== undefined) {
    where.push('COALESCE(o.closed_status, o.status) = ?');
    params.push(f.status);
  }
  for (const [col, v] of [
    ['o.asset_app_id', f.asset],
    ['o.side', f.side],
    ['o.maker', f.maker],
  ] as const)
    if (v !== undefined) {
      where.push(`${col} = ?`);
      params.push(v);
    }
  return { sql: where.length ? `WHERE ${where.join(' AND ')}` : '', params };
}

/** A page of the DEX rows `f` selects, newest first (block, transaction, output), and how many it selects. */
export async function dexOrdersPage(tx: ReadTx, f: DexFilter, o: { limit: number; offset: number }): Promise<{ total: number; page: DexOrderRecord[] }> {
  const w = dexWhere(f);
  const [count, rows] = await Promise.all([
    tx.all(`SELECT COUNT(*) AS n FROM dex_orders o ${w.sql}`, w.params),
    tx.all(
      `SELECT ${DEX_COLS} FROM dex_orders o JOIN blocks b ON b.height = o.height ${w.sql} ORDER BY o.height DESC, o.tx_index DESC, o.vout DESC LIMIT ? OFFSET ?`,
      [...w.params, Math.trunc(o.limit), Math.trunc(o.offset)],
    ),
  ]);
  return { total: num(count[0]?.n ?? 0), page: rows.map(dexRow) };
}

export async function dexOrderById(tx: ReadTx, orderId: string): Promise<DexOrderRecord | undefined> {
  const r = await tx.all(`SELECT ${DEX_COLS} FROM dex_orders o JOIN blocks b ON b.height = o.height WHERE o.order_id = ?`, [orderId]);
  return r[0] && dexRow(r[0]);
}

/** The status page's tag counts (kept by dex.ts in meta: no count per request). */
export async function tagStats(tx: ReadTx): Promise<{ charmsCast: number; bro: number; dexOrders: number }> {
  const m = new Map(
    (await tx.all("SELECT key, value FROM meta WHERE key IN ('dex_tag_charms_cast', 'dex_tag_bro', 'dex_orders_count')")).map((r) => [
      r.key as string,
      num(r.value),
    ]),
  );
  return { charmsCast: m.get('dex_tag_charms_cast') ?? 0, bro: m.get('dex_tag_bro') ?? 0, dexOrders: m.get('dex_orders_count') ?? 0 };
}

/** Like counts of charms (by app id, `--likes`), and whether `user` likes each; charms without likes are absent. */
export async function likesOf(tx: ReadTx, charmIds: string[], user: string | undefined): Promise<Map<string, { count: number; liked: boolean }>> {
  const ids = [...new Set(charmIds)];
  const out = new Map<string, { count: number; liked: boolean }>();
  if (ids.length === 0) return out;
  const rows = await tx.all(
    `SELECT charm_id, COUNT(*) AS n, SUM(CASE WHEN user_id = ? THEN 1 ELSE 0 END) AS mine FROM likes WHERE charm_id IN (${ids.map(() => '?').join(', ')}) GROUP BY charm_id`,
    [user ?? '', ...ids],
  );
  for (const r of rows) out.set(r.charm_id as string, { count: num(r.n), liked: user !== undefined && num(r.mine) > 0 });
  return out;
}
