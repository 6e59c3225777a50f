/**
 * The charms explorer's DEX routes (CharmsDev/charms-explorer `api/src/handlers/dex_orders.rs`,
 * `api/src/services/dex_orders_service.rs`): the Charms Cast orders dex.ts keeps, in the
 * explorer's order shape (`{total, orders}` for lists, the order or `null` by id). Read in one
 * `store.read` each, through query.ts.
 *
 * Differences from the hosted explorer: lists are paged (`page`, `limit` ≤ 1000, default 100;
 * `total` counts them all: the explorer answers every order); `created_at` is the block's time
 * (the explorer's is when its indexer wrote the row); orders are confirmed ones only (the explorer
 * also lists the mempool's); `by-asset` without `network` answers the index's network (the
 * explorer's default is mainnet).
 */
import { CharmsError } from '../errors.js';
import type { Req, Res } from '../infra/http.js';
import { ok, RawJson, type J } from './api.js';
import { appParam, decoded, paging, type ExplorerContext } from './explorer-routes.js';
import * as q from './query.js';
import type { Route } from './routes.js';

const MAX_LIMIT = 1000;
const DEFAULT_LIMIT = 100;

const num = (b: bigint): RawJson => new RawJson(b.toString());

/** chrono's NaiveDateTime as the explorer writes it: `YYYY-MM-DD HH:MM:SS` (UTC). */
const naive = (unix: number): string =>
  new Date(unix * 1000)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, '');

/** The explorer's DexOrderResponse of one row. */
function orderJson(c: ExplorerContext, o: q.DexOrderRecord): J {
  const filled = o.status === 'filled';
  return {
    order_id: o.orderId,
    txid: o.txid,
    vout: o.vout,
    block_height: o.height,
    platform: 'charms-cast',
    maker: o.maker,
    side: o.side,
    exec_type: o.execType,
    price_num: num(o.priceNum),
    price_den: num(o.priceDen),
    price_per_token: o.priceDen === 0n ? 0 : (Number(o.priceNum) / Number(o.priceDen)) * 100_000_000,
    amount: num(o.amount),
    quantity: num(o.quantity),
    filled_amount: num(filled ? o.amount : 0n),
    filled_quantity: num(filled ? o.quantity : 0n),
    asset_app_id: o.asset,
    scrolls_address: null,
    status: o.status,
    confirmed: o.height > 0,
    parent_order_id: o.parentOrderId,
    created_at: naive(o.time),
    network: c.network,
  };
}

/** A free-text filter of the query (`status`, `side`), bounded. */
function textParam(req: Req, name: string): string | undefined {
  const v = req.query.get(name);
  if (v === null || v === '') return undefined;
  if (v.length > 200) throw new CharmsError('INVALID_INPUT', `${name}: at most 200 characters`);
  return v;
}

function list(c: ExplorerContext, req: Req, f: q.DexFilter): Promise<Res> {
  const { limit, offset } = paging(req, DEFAULT_LIMIT, MAX_LIMIT);
  return c.store.read(async (tx) => {
    const r = await q.dexOrdersPage(tx, f, { limit, offset });
    return ok({ total: r.total, orders: r.page.map((o) => orderJson(c, o)) });
  });
}

/** GET /v1/dex/orders?status=: every order and activity row, newest first. */
const allOrders = (c: ExplorerContext, req: Req): Promise<Res> => list(c, req, { status: textParam(req, 'status') });

/** GET /v1/dex/orders/open?asset=&side=: the open orders. */
function openOrders(c: ExplorerContext, req: Req): Promise<Res> {
  const asset = textParam(req, 'asset');
  return list(c, req, { open: true, asset: asset === undefined ? undefined : appParam(asset), side: textParam(req, 'side') });
}

/** GET /v1/dex/orders/by-asset/{asset_app_id}: the asset's orders and activity rows. */
const byAsset = (c: ExplorerContext, req: Req, m: RegExpExecArray): Promise<Res> => list(c, req, { asset: appParam(decoded(m[1]!)) });

/** GET /v1/dex/orders/by-maker/{maker}?status=: a maker's orders and activity rows. */
function byMaker(c: ExplorerContext, req: Req, m: RegExpExecArray): Promise<Res> {
  const maker = decoded(m[1]!);
  if (maker.length > 200) throw new CharmsError('INVALID_INPUT', 'maker: at most 200 characters');
  return list(c, req, { maker, status: textParam(req, 'status') });
}

/** GET /v1/dex/orders/{order_id}: the order (`txid:vout`), or null (200) when this index has none. */
function orderById(c: ExplorerContext, _req: Req, m: RegExpExecArray): Promise<Res> | Res {
  const id = decoded(m[1]!);
  if (!/^[0-9a-f]{64}:\d{1,10}$/.test(id)) return ok(null);
  return c.store.read(async (tx) => {
    const o = await q.dexOrderById(tx, id);
    return ok(o ? orderJson(c, o) : null);
  });
}

const none = (): J => ({ total: 0, orders: [] });

/** The DEX routes, in match order (`open`, `by-asset`, `by-maker` before `{order_id}`). */
export const DEX_ROUTES: readonly Route<ExplorerContext>[] = [
  { method: 'GET', pattern: /^\/v1\/dex\/orders$/, doc: '/v1/dex/orders', cache: 'state', network: 'empty', handler: allOrders, empty: none },
  { method: 'GET', pattern: /^\/v1\/dex\/orders\/open$/, doc: '/v1/dex/orders/open', cache: 'state', network: 'empty', handler: openOrders, empty: none },
  {
    method: 'GET',
    pattern: /^\/v1\/dex\/orders\/by-asset\/([^/]+(?:\/[^/]+\/[^/]+)?)$/,
    doc: '/v1/dex/orders/by-asset/{asset_app_id}',
    cache: 'state',
    network: 'empty',
    handler: byAsset,
    empty: none,
  },
  {
    method: 'GET',
    pattern: /^\/v1\/dex\/orders\/by-maker\/([^/]+)$/,
    doc: '/v1/dex/orders/by-maker/{maker}',
    cache: 'state',
    network: 'empty',
    handler: byMaker,
    empty: none,
  },
  {
    method: 'GET',
    pattern: /^\/v1\/dex\/orders\/([^/]+)$/,
    doc: '/v1/dex/orders/{order_id}',
    cache: 'state',
    network: 'empty',
    handler: orderById,
    empty: () => null,
  },
];
