/**
 * Charms Cast DEX orders (schema V6 `dex_orders`), detected as the charms explorer detects them
 * (CharmsDev/charms-explorer `indexer/src/domain/services/dex/`), written inside the store's
 * transaction of each block and undone exactly by a rollback, so that a reader never sees orders
 * of another state than the outputs they sit on.
 *
 * Detection, per verified spell: the spell names a Cast app (`b/<64 zeros>/<vk>`, vk of Cast
 * v0.1 or v0.2) in its `app_public_inputs`; then an output charm that is an order (`maker`, `side`
 * ask|bid, `price` [num, den]; `amount`, `quantity` u64 or 0; `asset.token`; `exec_type`
 * all_or_none | {partial: {from?}}) makes it a create (the order `txid:vout`, `open`); without
 * one, 3 outputs or more make it a fulfill (of a bid when outs[3] holds charms, else of an ask),
 * fewer a cancel.
 *
 * Status follows the order's output (a charm output of the Cast app): when a transaction spends
 * it, a fulfill makes it `filled` (filled amount and quantity: all of it), a cancel `cancelled`,
 * each with the explorer's activity row (`<spender>:0`, the order's figures, its own status,
 * `parent_order_id` the order) when the order is the spender's input 0, as the explorer takes it;
 * a create (a partial fill leaving a remainder order) makes it `partial`, and a spend without a
 * Cast spell (the order's charms burned) `cancelled` — two cases the explorer leaves `open`. A
 * rollback deletes the rows of the blocks it undoes and reopens the orders they closed.
 *
 * The status page's `tag_stats` are kept here too, as running totals in `meta` (no count per
 * request): `charms_cast_count` the charm outputs of Cast transactions, `bro_count` those of
 * transactions moving $BRO, `dex_orders_count` the rows of `dex_orders` (orders and activity rows).
 */
import { spellFromCbor, type NormalizedSpell } from '../model/spell.js';
import { appToString } from '../model/primitives.js';
import { ValueMap, type Value } from '../codec/value.js';
import type { Row } from './driver.js';

/** The store's write transaction, as far as the DEX rows use it (store.ts TxDriver). */
interface TxDriver {
  all(sql: string, params?: unknown[]): Promise<Row[]>;
  run(sql: string, params?: unknown[]): Promise<void>;
}

/** What the DEX rows read of a block the store writes (store.ts BlockWrite). */
interface BlockWrite {
  height: number;
  spellTxs: readonly { txid: string; txIndex: number; spell: Uint8Array }[];
  outputs: readonly { txid: string; app: string }[];
}

/** Verification keys of the Charms Cast DEX app (explorer `dex/types.rs` `dex_vks`). */
const CAST_VKS = [
  'ce0c45fe29f26ff197bf9288e62ad7513941294d513e724854d97bee53e03a45', // v0.1
  'a471d3fcc436ae7cbc0e0c82a68cdc8e003ee21ef819e1acf834e11c43ce47d8', // v0.2
];
const CAST_APP = new RegExp(`^b/0{64}/(${CAST_VKS.join('|')})$`);

/** $BRO's identities (explorer `known_tokens`): an app containing one is $BRO. */
const BRO_IDENTITIES = ['3d7fe7e4cea6121947af73d70e5119bebd8aa5b7edfe74bfaf6e779a1847bd9b', '6274399ab68d4a35e5193394aded0bed548453f6ebb7ea46dd2ca0c251f74580'];
const isBro = (app: string): boolean => BRO_IDENTITIES.some((i) => app.includes(i));

type DexSide = 'ask' | 'bid';

interface DexOrderCharm {
  maker: string;
  side: DexSide;
  /** `all_or_none` or `partial`. */
  execType: 'all_or_none' | 'partial';
  /** `exec_type.partial.from`: the order this one remains of. */
  from: string | null;
  priceNum: bigint;
  priceDen: bigint;
  amount: bigint;
  quantity: bigint;
  asset: string;
}

type DexDetection =
  | { op: 'create'; vout: number; order: DexOrderCharm }
  | { op: 'fulfill-ask' | 'fulfill-bid' | 'cancel'; vout?: undefined; order?: undefined };

const U64_MAX = (1n << 64n) - 1n;
const u64 = (v: Value | undefined): bigint | undefined => (typeof v === 'bigint' && v >= 0n && v <= U64_MAX ? v : undefined);
const field = (v: Value, key: string): Value | undefined => (v instanceof ValueMap ? v.get(key) : undefined);

/** An order charm (explorer `parse_order_data`), or undefined. */
function orderOf(data: Value): DexOrderCharm | undefined {
  const maker = field(data, 'maker');
  const side = field(data, 'side');
  if (typeof maker !== 'string' || (side !== 'ask' && side !== 'bid')) return undefined;
  const price = field(data, 'price');
  if (!Array.isArray(price) || price.length < 2) return undefined;
  const num = u64(price[0]);
  const den = u64(price[1]);
  if (num === undefined || den === undefined) return undefined;
  const exec = field(data, 'exec_type');
  const partial = exec instanceof ValueMap ? exec.get('partial') : undefined;
  const from = partial === undefined ? undefined : field(partial, 'from');
  const token = field(field(data, 'asset') ?? null, 'token');
  return {
    maker,
    side,
    execType: exec instanceof ValueMap && partial !== undefined ? 'partial' : 'all_or_none',
    from: typeof from === 'string' ? from : null,
    priceNum: num,
    priceDen: den,
    amount: u64(field(data, 'amount')) ?? 0n,
    quantity: u64(field(data, 'quantity')) ?? 0n,
    asset: typeof token === 'string' ? token : '',
  };
}

/** The Cast operation of a spell (explorer `detect_dex_operation`), undefined when it names no Cast app. */
function detectDex(spell: NormalizedSpell): DexDetection | undefined {
  if (!spell.app_public_inputs.some(([a]) => CAST_APP.test(appToString(a)))) return undefined;
  const outs = spell.tx.outs;
  for (let vout = 0; vout < outs.length; vout++)
    for (const k of [...outs[vout]!.keys()].sort((a, b) => a - b)) {
      const order = orderOf(outs[vout]!.get(k)!);
      if (order) return { op: 'create', vout, order };
    }
  if (outs.length >= 3) return { op: outs.length >= 4 && outs[3]!.size > 0 ? 'fulfill-bid' : 'fulfill-ask' };
  return { op: 'cancel' };
}

function detectCbor(cbor: Uint8Array): DexDetection | undefined {
  try {
    return detectDex(spellFromCbor(cbor));
  } catch {
    return undefined; // it verified: never here
  }
}

/** eBTC's identity (explorer `known_tokens::EBTC_IDENTITY`). */
const EBTC_IDENTITY = '0796f63ed48144b4ec69fb794fbc2290ae63acf945fb035d5474648b50ee43b6';

/** The app of each output charm, per output in app-index order and once per output (explorer `extract_asset_info`; an order's is its `asset.token`). */
function assetApps(spell: NormalizedSpell): string[] {
  const apps = spell.app_public_inputs.map(([a]) => appToString(a));
  const out: string[] = [];
  for (const charms of spell.tx.outs) {
    const seen = new Set<string>();
    for (const k of [...charms.keys()].sort((a, b) => a - b)) {
      if (apps[k] === undefined) continue;
      const token = field(field(charms.get(k)!, 'asset') ?? null, 'token');
      const app = typeof token === 'string' ? token : apps[k]!;
      if (seen.has(app)) continue;
      seen.add(app);
      out.push(app);
    }
  }
  return out;
}

/** The explorer's tags of a transaction: `tags` (comma-separated, null for none) and `tx_type`. */
export interface TxTags {
  tags: string | null;
  txType: string;
}

/**
 * A verified spell's tags and type as the explorer's indexer gives them (`tx_analyzer.rs`
 * `analyze_tx`, then the block path's beam-in rule): `spendsBeamOut` says whether an input of the
 * transaction spends an output of a beam-out transaction (a verified spell with `beamed_outs`).
 */
export function txTags(spell: NormalizedSpell, spendsBeamOut: boolean): TxTags {
  const tags: string[] = [];
  const dex = detectDex(spell);
  if (dex) tags.push('charms-cast', dex.op === 'create' ? `create-${dex.order.side}` : dex.op);
  const beamOut = spell.tx.beamed_outs !== undefined;
  const contract = spell.app_public_inputs.some(([a]) => a.tag === 'c');
  if (beamOut) tags.push('beaming', 'beam-out');
  else if (contract) tags.push('beaming', 'beam-in');
  const assets = assetApps(spell);
  const bro = assets.filter(isBro).length;
  if (bro > 0) tags.push('bro', bro === 1 ? 'bro-mint' : 'bro-transfer');
  if (assets.some((a) => a.includes(EBTC_IDENTITY))) tags.push('ebtc');
  // the block path's ADA→BTC claim: a spell with charms, not beaming, spending a beam-out's output
  if (!beamOut && !contract && assets.length > 0 && spendsBeamOut) {
    const rest = tags.filter((t) => t !== 'bro-mint' && t !== 'bro-transfer');
    return { tags: ['beaming', 'beam-in', ...rest].join(','), txType: 'beam_in' };
  }
  const has = (t: string) => tags.includes(t);
  const dexType = ['create-ask', 'create-bid', 'fulfill-ask', 'fulfill-bid', 'cancel'].find(has);
  const txType = dexType
    ? `dex_${dexType.replace('-', '_')}`
    : beamOut
      ? 'beam_out'
      : contract
        ? 'beam_in'
        : has('bro-mint')
          ? 'bro_mint'
          : has('bro-transfer')
            ? 'token_transfer'
            : 'spell';
  return { tags: tags.length === 0 ? null : tags.join(','), txType };
}

const bytes = (hex: string): Buffer => Buffer.from(hex, 'hex');
const hexOf = (b: unknown): string => Buffer.from(b as Uint8Array).toString('hex');

const META_KEYS = { cast: 'dex_tag_charms_cast', bro: 'dex_tag_bro', orders: 'dex_orders_count' } as const;
type Counts = Record<keyof typeof META_KEYS, number>;

async function addCounts(tx: TxDriver, d: Counts): Promise<void> {
  for (const [k, key] of Object.entries(META_KEYS) as [keyof Counts, string][]) {
    if (d[k] === 0) continue;
    const have = Number((await tx.all('SELECT value FROM meta WHERE key = ?', [key]))[0]?.value ?? 0);
    await tx.run('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [key, String(have + d[k])]);
  }
}

/** Tag counts of transactions: charm outputs of Cast transactions and of those moving $BRO (or an order of it). */
function tagCounts(dex: Map<string, DexDetection | undefined>, outputs: Iterable<{ txid: string; app: string }>): { cast: number; bro: number } {
  const rows = new Map<string, { n: number; bro: boolean }>();
  for (const o of outputs) {
    const r = rows.get(o.txid) ?? { n: 0, bro: false };
    r.n++;
    r.bro ||= isBro(o.app);
    rows.set(o.txid, r);
  }
  let cast = 0;
  let bro = 0;
  for (const [txid, r] of rows) {
    const d = dex.get(txid);
    if (d) cast += r.n;
    // an order trading $BRO counts as moving it (the explorer reads an order's asset as its output's app)
    if (r.bro || (d?.op === 'create' && isBro(d.order.asset))) bro += r.n;
  }
  return { cast, bro };
}

const ORDER_INSERT = `INSERT INTO dex_orders (order_id, txid, vout, height, tx_index, maker, side, exec_type, price_num, price_den, amount, quantity,
  asset_app_id, parent_order_id, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (order_id) DO NOTHING`;

async function insertOrder(tx: TxDriver, txid: string, txIndex: number, height: number, d: { vout: number; order: DexOrderCharm }): Promise<void> {
  const o = d.order;
  await tx.run(ORDER_INSERT, [
    `${txid}:${d.vout}`,
    bytes(txid),
    d.vout,
    height,
    txIndex,
    o.maker,
    o.side,
    o.execType,
    o.priceNum.toString(),
    o.priceDen.toString(),
    o.amount.toString(),
    o.quantity.toString(),
    o.asset,
    o.from,
    'open',
  ]);
}

/** The open orders whose outputs were spent at `height` (by a transaction of that block), with their spenders. */
const SPENT_ORDERS = `SELECT DISTINCT o.order_id, o.maker, o.side, o.exec_type, o.price_num, o.price_den, o.amount, o.quantity, o.asset_app_id,
  co.spent_txid, co.spent_vin FROM charm_outputs co JOIN dex_orders o ON o.txid = co.txid AND o.vout = co.vout
  WHERE co.spent_height = ? AND o.status = 'open' AND o.closed_height IS NULL`;

/**
 * Closes the orders of `spent` (rows of SPENT_ORDERS) spent at `height`: `spender(txid)` is the
 * spending transaction's tx index and Cast operation (undefined: no Cast spell). Returns the
 * activity rows written.
 */
async function closeSpent(
  tx: TxDriver,
  height: number,
  spent: Row[],
  spender: (txid: string) => { txIndex: number; dex: DexDetection | undefined } | undefined,
): Promise<number> {
  let written = 0;
  for (const r of spent) {
    const by = hexOf(r.spent_txid);
    const s = spender(by);
    const op = s?.dex?.op;
    const status = op === 'create' ? 'partial' : op === 'fulfill-ask' || op === 'fulfill-bid' ? 'filled' : 'cancelled';
    await tx.run('UPDATE dex_orders SET closed_height = ?, closed_status = ? WHERE order_id = ?', [height, status, r.order_id]);
    if (s && op !== undefined && op !== 'create' && Number(r.spent_vin) === 0) {
      await tx.run(ORDER_INSERT, [
        `${by}:0`,
        bytes(by),
        0,
        height,
        s.txIndex,
        r.maker,
        r.side,
        r.exec_type,
        String(r.price_num),
        String(r.price_den),
        String(r.amount),
        String(r.quantity),
        r.asset_app_id,
        r.order_id,
        status,
      ]);
      written++;
    }
  }
  return written;
}

/** Whether the DEX rows wait for their first fill (a database migrated from before V6). */
async function pending(tx: TxDriver): Promise<boolean> {
  return (await tx.all("SELECT value FROM meta WHERE key = 'dex_orders'"))[0]?.value === 'pending';
}

/**
 * Every DEX row and tag count from the spells and outputs the index holds (once, for a database
 * migrated from before V6; empty for a new one), then marked filled. Reads every spell once.
 */
async function fill(tx: TxDriver): Promise<void> {
  await tx.run('DELETE FROM dex_orders');
  const dex = new Map<string, DexDetection | undefined>();
  const at = new Map<string, { height: number; txIndex: number }>();
  const byHeight = new Map<number, string[]>();
  for (const r of await tx.all('SELECT txid, height, tx_index, spell FROM spell_txs ORDER BY height, tx_index')) {
    const txid = hexOf(r.txid);
    const d = detectCbor(new Uint8Array(r.spell as Uint8Array));
    dex.set(txid, d);
    at.set(txid, { height: Number(r.height), txIndex: Number(r.tx_index) });
    if (d?.op === 'create') await insertOrder(tx, txid, Number(r.tx_index), Number(r.height), d);
    if (d) byHeight.set(Number(r.height), [...(byHeight.get(Number(r.height)) ?? []), txid]);
  }
  // closures in chain order (an activity row copies its order, which a later block may not have closed yet)
  const heights = [
    ...new Set(
      (
        await tx.all(
          "SELECT DISTINCT co.spent_height FROM charm_outputs co JOIN dex_orders o ON o.txid = co.txid AND o.vout = co.vout WHERE o.status = 'open' AND co.spent_height IS NOT NULL",
        )
      ).map((r) => Number(r.spent_height)),
    ),
  ].sort((a, b) => a - b);
  for (const h of heights)
    await closeSpent(tx, h, await tx.all(SPENT_ORDERS, [h]), (txid) => {
      const p = at.get(txid);
      return p && { txIndex: p.txIndex, dex: dex.get(txid) };
    });
  const outputs = (await tx.all('SELECT co.txid, a.app FROM charm_outputs co JOIN apps a ON a.id = co.app_id')).map((r) => ({
    txid: hexOf(r.txid),
    app: r.app as string,
  }));
  const tags = tagCounts(dex, outputs);
  const orders = Number((await tx.all('SELECT COUNT(*) AS n FROM dex_orders'))[0]!.n);
  for (const key of Object.values(META_KEYS)) await tx.run('DELETE FROM meta WHERE key = ?', [key]);
  await addCounts(tx, { ...tags, orders });
  await tx.run("UPDATE meta SET value = 'filled' WHERE key = 'dex_orders'");
}

/**
 * What block `b` changes in the DEX rows, after the store wrote its rows in `tx` (its outputs
 * inserted, the outputs it spends marked spent at its height).
 */
export async function dexBlock(tx: TxDriver, b: BlockWrite): Promise<void> {
  if (await pending(tx)) return fill(tx); // the fill reads this block's rows too
  const dex = new Map<string, DexDetection | undefined>();
  const index = new Map<string, number>();
  let orders = 0;
  for (const s of [...b.spellTxs].sort((x, y) => x.txIndex - y.txIndex)) {
    const d = detectCbor(s.spell);
    dex.set(s.txid, d);
    index.set(s.txid, s.txIndex);
    if (d?.op === 'create') {
      await insertOrder(tx, s.txid, s.txIndex, b.height, d);
      orders++;
    }
  }
  const spent = await tx.all(SPENT_ORDERS, [b.height]);
  orders += await closeSpent(tx, b.height, spent, (txid) => {
    const i = index.get(txid);
    return i === undefined ? undefined : { txIndex: i, dex: dex.get(txid) };
  });
  await addCounts(tx, { ...tagCounts(dex, b.outputs), orders });
}

/**
 * What undoing every block above `forkHeight` changes in the DEX rows, in the rollback's
 * transaction `tx` before the store deletes its rows: the rows written above the fork go, the
 * orders closed above it open again, and the tag counts lose what those blocks added.
 */
export async function dexRollback(tx: TxDriver, forkHeight: number): Promise<void> {
  if (await pending(tx)) return; // the first fill reads the state after the rollback
  const dex = new Map<string, DexDetection | undefined>();
  for (const r of await tx.all('SELECT txid, spell FROM spell_txs WHERE height > ?', [forkHeight]))
    dex.set(hexOf(r.txid), detectCbor(new Uint8Array(r.spell as Uint8Array)));
  const outputs = (await tx.all('SELECT co.txid, a.app FROM charm_outputs co JOIN apps a ON a.id = co.app_id WHERE co.created_height > ?', [forkHeight])).map(
    (r) => ({
      txid: hexOf(r.txid),
      app: r.app as string,
    }),
  );
  const tags = tagCounts(dex, outputs);
  const orders = Number((await tx.all('SELECT COUNT(*) AS n FROM dex_orders WHERE height > ?', [forkHeight]))[0]!.n);
  await tx.run('DELETE FROM dex_orders WHERE height > ?', [forkHeight]);
  await tx.run('UPDATE dex_orders SET closed_height = NULL, closed_status = NULL WHERE closed_height > ?', [forkHeight]);
  await addCounts(tx, { cast: -tags.cast, bro: -tags.bro, orders: -orders });
}
