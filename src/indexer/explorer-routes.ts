/**
 * The charms explorer's own API (CharmsDev/charms-explorer `api/src/handlers/`: assets, charms,
 * transactions list, status per network) from the index, so that the explorer's webapp runs
 * unchanged against `charms index` (docs/index.md). Same paths, parameters and field names; every
 * number the webapp formats is a JSON number (amounts and supplies with their exact digits).
 * Every answer is read inside one `store.read` (one index state) through query.ts.
 *
 * Differences from the hosted explorer, on purpose: the catalogue and holders follow reorgs
 * exactly; supplies are the unspent confirmed amounts; `sort=oldest` is honoured; holders are
 * paged (`page` or a keyset `cursor`, `limit` ≤ 1000: the explorer answers them all) and the asked app's own (the explorer
 * answers a token's holders from its NFT's); `decimals` is the CHIP-0420 metadata's (default 0);
 * likes are not chain data (`likes_count` 0, liking refused unless `--likes`); a `?network=` the index does not
 * hold gets empty lists and 404s.
 */
import { decodeCbor } from '../codec/cbor.js';
import { toJsonCompact } from '../codec/json.js';
import { CharmsError } from '../errors.js';
import { readJsonBody, type Req, type Res } from '../infra/http.js';
import { spellFromCbor, spellToValue, type NormalizedSpell } from '../model/spell.js';
import { appFromString, appToString, txidToDisplay } from '../model/primitives.js';
import { addressCodec, ok, RawJson, type AddressCodec, type J } from './api.js';
import { assetTypeOf } from './catalogue.js';
import { txTags, type TxTags } from './dex.js';
import { chip420Meta, type TokenMeta } from './explorer-api.js';
import type { MempoolOverlay } from './mempool.js';
import * as q from './query.js';
import type { ReadTx } from './driver.js';
import type { Route } from './routes.js';
import type { IndexReader } from './store.js';

export interface ExplorerContext {
  store: IndexReader;
  mempool?: MempoolOverlay | undefined;
  network: string;
  /** How addresses map to the rows' destinations (api.ts addressCodec; default: the network's Bitcoin one). */
  codec?: AddressCodec | undefined;
  /** `--likes`: like counts read from the `likes` table, and taken by the writer (`write`, else refused). */
  likes?: LikesOn | undefined;
}

const codecOf = (c: ExplorerContext): AddressCodec => c.codec ?? addressCodec('bitcoin', c.network);

/** Likes turned on (`--likes`). */
interface LikesOn {
  /** The writer's `setLike` (absent on an --api-only reader: it shows the counts, takes no like). */
  write?: ((charmId: string, user: string, on: boolean) => Promise<number>) | undefined;
  /** Whether `client` may write a like now (LikeLimiter). */
  allow(client: string): boolean;
}

/** Like writes per client address in a minute, and the clients tracked at most. */
const LIKES_PER_MINUTE = 30;
const MAX_LIKE_CLIENTS = 10_000;
const MAX_USER_ID = 64;
const MAX_CHARM_ID = 1024;

/** Like writes per client address: at most LIKES_PER_MINUTE in each minute (a fixed window). */
export class LikeLimiter {
  private window = 0;
  private counts = new Map<string, number>();
  constructor(
    private readonly perMinute = LIKES_PER_MINUTE,
    private readonly now: () => number = Date.now,
  ) {}

  allow(client: string): boolean {
    const w = Math.floor(this.now() / 60_000);
    // a new minute, or too many clients to track in this one: counting starts again
    if (w !== this.window || this.counts.size >= MAX_LIKE_CLIENTS) {
      this.window = w;
      this.counts = new Map();
    }
    const n = this.counts.get(client) ?? 0;
    if (n >= this.perMinute) return false;
    this.counts.set(client, n + 1);
    return true;
  }
}

const MAX_LIMIT = 100;
const MAX_HOLDERS_LIMIT = 1000;
const MAX_ADDRESS_CHARMS = 1000;
const MAX_PAGE = 1_000_000;

const bad = (msg: string): CharmsError => new CharmsError('INVALID_INPUT', msg);
const notFound = (msg: string): CharmsError => new CharmsError('NOT_FOUND', msg);
const num = (b: bigint): RawJson => new RawJson(b.toString());
const iso = (unix: number): string => new Date(unix * 1000).toISOString();

function intParam(req: Req, name: string, min: number, max: number, dflt: number): number {
  const raw = req.query.get(name);
  if (raw === null || raw === '') return dflt;
  const n = Number(raw);
  if (!/^\d{1,10}$/.test(raw) || n < min || n > max) throw bad(`${name}: expected an integer from ${min} to ${max}`);
  return n;
}

/** `page` (from 1) and `limit` as an offset, bounded. */
export function paging(req: Req, dfltLimit: number, maxLimit = MAX_LIMIT): { page: number; limit: number; offset: number } {
  const page = intParam(req, 'page', 1, MAX_PAGE, 1);
  const limit = intParam(req, 'limit', 1, maxLimit, dfltLimit);
  return { page, limit, offset: (page - 1) * limit };
}

function assetTypeParam(req: Req, name: string): q.AssetType | undefined {
  const t = req.query.get(name);
  if (t === null || t === '' || t === 'all') return undefined;
  if (t !== 'token' && t !== 'nft' && t !== 'dapp') throw bad(`${name}: expected token, nft or dapp`);
  return t;
}

function orderParam(req: Req): q.Order {
  const s = req.query.get('sort');
  if (s === null || s === '' || s === 'newest') return 'newest';
  if (s === 'oldest') return 'oldest';
  throw bad('sort: expected newest or oldest');
}

export function decoded(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw bad('bad %-escape in the path');
  }
}

/** An app id from the path or query (`<tag>/<identity>/<vk>`; a trailing `:N`, as the webapp may add, dropped). */
export function appParam(raw: string): string {
  const app = raw.replace(/:\d+$/, '');
  try {
    return appToString(appFromString(app));
  } catch (e) {
    throw new CharmsError('INVALID_INPUT', 'app: expected <tag>/<identity hex>/<vk hex>', { cause: e });
  }
}

const pagination = (page: number, limit: number, total: number): J => ({ total, page, limit, total_pages: Math.ceil(total / limit) });

// ------------------------------------------------------------------------------ metadata

/** CHIP-0420 metadata of apps, read once per answer from their reference NFT `n/<identity>/<vk>`. */
function metaReader(tx: ReadTx): (app: string) => Promise<TokenMeta> {
  const kept = new Map<string, Promise<TokenMeta>>();
  return (app) => {
    const [, identity = '', vk = ''] = app.split('/');
    const key = `${identity}/${vk}`;
    let p = kept.get(key);
    if (!p) {
      p = q.nftDataOf(tx, identity, vk).then((nft) => {
        if (!nft) return chip420Meta(null, null);
        try {
          return chip420Meta(decodeCbor(nft.data), nft.app);
        } catch {
          return chip420Meta(null, nft.app);
        }
      });
      kept.set(key, p);
    }
    return p;
  };
}

/** The explorer's `charm` / `data` object of a spell transaction (the spell as `native_data`). */
function charmJson(spell: Uint8Array | undefined): J {
  if (spell === undefined) return { type: 'spell', detected: true, has_native_data: false, native_data: null, version: 'native_parser' };
  return {
    type: 'spell',
    detected: true,
    has_native_data: true,
    native_data: new RawJson(toJsonCompact(spellToValue(spellFromCbor(spell), true))),
    version: 'native_parser',
  };
}

/** The apps a spell names (its `app_public_inputs`, sorted). */
function spellApps(spell: Uint8Array): string[] {
  try {
    return spellFromCbor(spell).app_public_inputs.map(([a]) => appToString(a));
  } catch {
    return [];
  }
}

/** A spell of the index decoded, or undefined (it verified: never). */
function decodedSpell(spell: Uint8Array): NormalizedSpell | undefined {
  try {
    return spellFromCbor(spell);
  } catch {
    return undefined;
  }
}

const NO_TAGS: TxTags = { tags: null, txType: 'spell' };

/**
 * The explorer's `tags` and `tx_type` of spell transactions (dex.ts `txTags`), by txid, read in
 * `tx`: whether one spends an output of a beam-out transaction is read from the index's spells.
 */
async function tagsOf(tx: ReadTx, spells: Map<string, Uint8Array>): Promise<Map<string, TxTags>> {
  const decoded = new Map<string, NormalizedSpell>();
  const ins = new Set<string>();
  for (const [txid, cbor] of spells) {
    const s = decodedSpell(cbor);
    if (!s) continue;
    decoded.set(txid, s);
    for (const u of s.tx.ins ?? []) ins.add(txidToDisplay(u.txid));
  }
  const beamOuts = new Set<string>();
  for (const [txid, cbor] of await q.spellsOf(tx, [...ins])) if (decodedSpell(cbor)?.tx.beamed_outs !== undefined) beamOuts.add(txid);
  const out = new Map<string, TxTags>();
  for (const [txid, s] of decoded)
    out.set(
      txid,
      txTags(
        s,
        (s.tx.ins ?? []).some((u) => beamOuts.has(txidToDisplay(u.txid))),
      ),
    );
  return out;
}

// ------------------------------------------------------------------------------ assets

async function assetJson(c: ExplorerContext, a: q.AssetRecord, meta: (app: string) => Promise<TokenMeta>): Promise<J> {
  const m = await meta(a.app);
  return {
    id: String(a.id),
    app_id: a.app,
    charmid: a.app,
    asset_type: a.assetType,
    name: m.name,
    symbol: m.ticker,
    description: m.description,
    image_url: m.image,
    total_supply: num(a.supply),
    decimals: m.decimals,
    network: c.network,
    created_at: iso(a.firstTime),
    updated_at: iso(a.firstTime),
    block_height: a.firstHeight,
    transaction_hash: a.firstTxid,
    charm_count: a.outputs,
    reference_nft: m.refApp,
  };
}

const parseAssetCursor = (raw: string | null): q.AssetCursor | undefined => {
  if (raw === null) return undefined;
  const m = /^(\d{1,10})-(\d{1,10})-(\d{1,15})$/.exec(raw);
  if (!m) throw bad('cursor: expected the next_cursor of a previous page');
  return { height: Number(m[1]), txIndex: Number(m[2]), id: Number(m[3]) };
};

/** GET /v1/assets: the catalogue, paged (`page`/`limit`, or our keyset `cursor`), or the one `app_id`. */
async function assets(c: ExplorerContext, req: Req): Promise<Res> {
  const { page, limit, offset } = paging(req, 20);
  const type = assetTypeParam(req, 'asset_type');
  const order = orderParam(req);
  const appRaw = req.query.get('app_id');
  const app = appRaw === null ? undefined : appParam(appRaw);
  const after = parseAssetCursor(req.query.get('cursor'));
  return c.store.read(async (tx) => {
    const meta = metaReader(tx);
    if (app !== undefined) {
      const a = await q.assetByApp(tx, app);
      const list = a && (!type || a.assetType === type) ? [await assetJson(c, a, meta)] : [];
      return ok({ data: { assets: list }, pagination: pagination(page, limit, list.length), next_cursor: null });
    }
    const [rows, counts] = await Promise.all([q.assetsPage(tx, { type, order, limit, ...(after ? { after } : { offset }) }), q.assetCounts(tx)]);
    const total = type ? counts[type] : counts.total;
    const items: J[] = [];
    for (const a of rows) items.push(await assetJson(c, a, meta));
    const last = rows[rows.length - 1];
    return ok({
      data: { assets: items },
      pagination: pagination(page, limit, total),
      next_cursor: last && rows.length === limit ? `${last.firstHeight}-${last.firstTxIndex}-${last.id}` : null,
    });
  });
}

/** GET /v1/assets/count: assets per type. */
function assetCount(c: ExplorerContext): Promise<Res> {
  return c.store.read(async (tx) => {
    const n = await q.assetCounts(tx);
    return ok({ total: n.total, nft: n.nft, token: n.token, dapp: n.dapp });
  });
}

/** GET /v1/assets/{asset_id}: by our numeric id or the app id. */
function asset(c: ExplorerContext, _req: Req, m: RegExpExecArray): Promise<Res> {
  const raw = decoded(m[1]!);
  const byId = /^\d{1,15}$/.test(raw);
  const app = byId ? undefined : appParam(raw);
  return c.store.read(async (tx) => {
    const a = app === undefined ? await q.assetById(tx, Number(raw)) : await q.assetByApp(tx, app);
    if (!a) throw notFound(`asset ${raw.slice(0, 200)} is not in this index`);
    return ok(await assetJson(c, a, metaReader(tx)));
  });
}

/** `part / whole` in percent as a JSON number (6 decimals). */
function percent(part: bigint, whole: bigint): number {
  return whole === 0n ? 0 : Number((part * 100_000_000n) / whole) / 1_000_000;
}

const parseHolderCursor = (raw: string | null): q.HolderCursor | undefined => {
  if (raw === null) return undefined;
  const m = /^(\d{1,80})-((?:[0-9a-f]{2}){1,10000})$/.exec(raw);
  if (!m) throw bad('cursor: expected the next_cursor of a previous page');
  return { amount: BigInt(m[1]!), script: Buffer.from(m[2]!, 'hex') };
};

/**
 * GET /v1/assets/{app_id}/holders: the app's holders, largest first, paged — our addition (the
 * explorer answers them all): `limit` ≤ 1000 (default 100), and `page` or the keyset `cursor`
 * (the `next_cursor` of the previous page: `<amount>-<script hex>`).
 */
function holders(c: ExplorerContext, req: Req, m: RegExpExecArray): Promise<Res> {
  const app = appParam(decoded(m[1]!));
  const { page, limit, offset } = paging(req, 100, MAX_HOLDERS_LIMIT);
  const after = parseHolderCursor(req.query.get('cursor'));
  const codec = codecOf(c);
  return c.store.read(async (tx) => {
    const [a, h] = await Promise.all([q.assetByApp(tx, app), q.holdersPage(tx, app, { limit, offset, after })]);
    const supply = a?.supply ?? 0n;
    const last = h.page[h.page.length - 1];
    return ok({
      app_id: app,
      total_holders: h.holders,
      total_supply: num(supply),
      holders: h.page.map((x) => ({
        address: codec.addressOf(x.script),
        script_pubkey: Buffer.from(x.script).toString('hex'),
        total_amount: num(x.amount),
        charm_count: x.outputs,
        percentage: percent(x.amount, supply),
        first_seen_block: x.firstHeight,
        last_updated_block: x.lastHeight,
      })),
      page,
      limit,
      total_pages: Math.ceil(h.holders / limit),
      next_cursor: last && h.page.length === limit ? `${last.amount}-${Buffer.from(last.script).toString('hex')}` : null,
    });
  });
}

// ------------------------------------------------------------------------------ charms

interface CharmSource {
  txid: string;
  vout: number | null;
  app: string | null;
  amount: bigint | null;
  script: Uint8Array | null;
  height: number | null;
  time: number | null;
  spent: boolean;
}

/** The explorer's CharmData of one charm. */
async function charmData(
  c: ExplorerContext,
  x: CharmSource,
  spell: Uint8Array | undefined,
  meta: (app: string) => Promise<TokenMeta>,
  withSpell = false,
  likes?: { count: number; liked: boolean },
  tags: TxTags = NO_TAGS,
): Promise<J> {
  const m = x.app === null ? undefined : await meta(x.app);
  const data = charmJson(spell);
  return {
    txid: x.txid,
    vout: x.vout,
    charmid: x.app,
    app_id: x.app,
    block_height: x.height,
    data,
    date_created: x.time === null ? null : iso(x.time),
    asset_type: x.app === null ? 'other' : assetTypeOf(x.app),
    network: c.network,
    amount: num(x.app === null ? 0n : (x.amount ?? 1n)),
    address: x.script ? codecOf(c).addressOf(x.script) : null,
    spent: x.spent,
    likes_count: likes?.count ?? 0,
    user_liked: likes?.liked ?? false,
    name: m?.name ?? undefined,
    image: m?.image ?? undefined,
    ticker: m?.ticker ?? undefined,
    description: m?.description ?? undefined,
    decimals: m?.decimals,
    verified: true,
    tags: tags.tags ?? undefined,
    tx_type: tags.txType,
    spell: withSpell ? data : undefined,
  };
}

/** The `user_id` a charm list's likes are read for (`--likes`). */
function userParam(req: Req): string | undefined {
  const u = req.query.get('user_id');
  if (u === null || u === '') return undefined;
  if (u.length > MAX_USER_ID) throw bad(`user_id: at most ${MAX_USER_ID} characters`);
  return u;
}

/** The like counts of charms of `apps` when likes are on. */
const likesFor = (c: ExplorerContext, tx: ReadTx, apps: (string | null)[], user: string | undefined) =>
  c.likes
    ? q.likesOf(
        tx,
        apps.filter((a): a is string => a !== null),
        user,
      )
    : Promise.resolve(new Map<string, { count: number; liked: boolean }>());

async function charmsJson(c: ExplorerContext, tx: ReadTx, rows: q.CharmRecord[], user?: string): Promise<J[]> {
  const spells = await q.spellsOf(
    tx,
    rows.map((r) => r.txid),
  );
  const meta = metaReader(tx);
  const out: J[] = [];
  const likes = await likesFor(
    c,
    tx,
    rows.map((r) => r.app),
    user,
  );
  const tags = await tagsOf(tx, spells);
  for (const r of rows) out.push(await charmData(c, r, spells.get(r.txid), meta, false, likes.get(r.app), tags.get(r.txid)));
  return out;
}

/** The answer of a paged list for another network: no items, the asked page. */
function emptyList(key: string): (req: Req) => J {
  return (req) => {
    const { page, limit } = paging(req, 20);
    return { data: { [key]: [] }, pagination: pagination(page, limit, 0) };
  };
}

/** GET /v1/charms and /v1/charms/by-type?type=: every charm (spent ones too), newest first. */
function charms(c: ExplorerContext, req: Req, m: RegExpExecArray): Promise<Res> {
  const byType = m[1] === '/by-type';
  const type = assetTypeParam(req, 'type');
  if (byType && !type) throw bad('type: expected token, nft or dapp');
  const { page, limit, offset } = paging(req, 20);
  return c.store.read(async (tx) => {
    const [rows, counts] = await Promise.all([q.charmsPage(tx, { type, limit, offset }), q.assetCounts(tx)]);
    const total = type ? counts.outputs[type] : counts.outputs.token + counts.outputs.nft + counts.outputs.dapp;
    return ok({ data: { charms: await charmsJson(c, tx, rows, userParam(req)) }, pagination: pagination(page, limit, total) });
  });
}

/** GET /v1/charms/count?type=: charms (of a type). */
function charmCount(c: ExplorerContext, req: Req): Promise<Res> {
  const type = assetTypeParam(req, 'type');
  return c.store.read(async (tx) => {
    const n = await q.assetCounts(tx);
    return ok({ count: type ? n.outputs[type] : n.outputs.token + n.outputs.nft + n.outputs.dapp });
  });
}

/** GET /v1/charms/count-by-type: all charms, and assets per type (the explorer's figures). */
function charmCountByType(c: ExplorerContext): Promise<Res> {
  return c.store.read(async (tx) => {
    const n = await q.assetCounts(tx);
    return ok({ total: n.outputs.token + n.outputs.nft + n.outputs.dapp, nft: n.nft, token: n.token, dapp: n.dapp });
  });
}

/** GET /v1/charms/by-charmid/{charmid}: the app's first charm. */
function charmById(c: ExplorerContext, req: Req, m: RegExpExecArray): Promise<Res> {
  const app = appParam(decoded(m[1]!));
  return c.store.read(async (tx) => {
    const r = await q.firstCharmOf(tx, app);
    if (!r) throw notFound(`no charm of ${app} in this index`);
    return ok((await charmsJson(c, tx, [r], userParam(req)))[0]!);
  });
}

/** The script of an address of the index's network; undefined for a valid address of another network; 400 for no address. */
function scriptOrOther(c: ExplorerContext, address: string): Uint8Array | undefined {
  const codec = codecOf(c);
  try {
    return codec.scriptOf(address);
  } catch (e) {
    if (codec.wellFormed(address)) return undefined;
    throw e;
  }
}

/** GET /v1/charms/by-address/{address}: its unspent charms (confirmed, then pending receives), at most `limit` (≤ 1000). */
function charmsByAddress(c: ExplorerContext, req: Req, m: RegExpExecArray): Promise<Res> | Res {
  const address = decoded(m[1]!);
  const script = scriptOrOther(c, address);
  const { limit, offset } = paging(req, MAX_ADDRESS_CHARMS, MAX_ADDRESS_CHARMS);
  if (!script) return ok({ charms: [] });
  return c.store.read(async (tx) => {
    const list = await charmsJson(c, tx, await q.charmsOfScript(tx, script, { limit, offset }), userParam(req));
    const meta = metaReader(tx);
    if (c.mempool && list.length < limit)
      for (const o of c.mempool.receivesOf(script).slice(0, limit - list.length))
        list.push(
          await charmData(
            c,
            { txid: o.txid, vout: o.vout, app: o.app, amount: o.amount, script: o.script, height: null, time: null, spent: false },
            undefined,
            meta,
          ),
        );
    return ok({ charms: list });
  });
}

/** GET /v1/charms/{txid}: the transaction's first charm with its spell (`data`, `spell`); pending ones too. */
function charmOfTx(c: ExplorerContext, req: Req, m: RegExpExecArray): Promise<Res> {
  const txid = m[1]!.toLowerCase();
  return c.store.read(async (tx) => {
    const meta = metaReader(tx);
    const s = await q.spellTxOf(tx, txid);
    if (s) {
      const first = (await q.charmsOfTx(tx, txid))[0];
      const src: CharmSource = first ?? {
        txid,
        vout: null,
        app: spellApps(s.spell)[0] ?? null,
        amount: null,
        script: null,
        height: s.height,
        time: s.time,
        spent: false,
      };
      const likes = await likesFor(c, tx, [src.app], userParam(req));
      const tags = (await tagsOf(tx, new Map([[txid, s.spell]]))).get(txid);
      return ok(await charmData(c, src, s.spell, meta, true, src.app === null ? undefined : likes.get(src.app), tags), 200);
    }
    const o = c.mempool?.get(txid)?.outputs[0];
    if (o)
      return ok(
        await charmData(
          c,
          { txid, vout: o.vout, app: o.app, amount: o.amount, script: o.script, height: null, time: null, spent: false },
          undefined,
          meta,
          true,
        ),
      );
    throw notFound(`transaction ${txid} carries no verified spell (in this index)`);
  });
}

/**
 * POST/DELETE /v1/charms/like {charm_id, user_id}: likes are not chain data; refused unless the
 * operator turned them on (`--likes`), and then taken by the writer only: one per `user_id` (the
 * explorer's default 1 when absent; at most 64 characters) and charm (an app of this index),
 * LIKES_PER_MINUTE writes a minute per client address.
 */
async function like(c: ExplorerContext, req: Req): Promise<Res> {
  if (!c.likes) throw new CharmsError('UNSUPPORTED', 'likes are off on this index (they are not chain data): start charms index with --likes to take them');
  const write = c.likes.write;
  if (!write) throw new CharmsError('UNSUPPORTED', 'likes are taken by the indexer (the database writer), not by an --api-only reader');
  let body: unknown;
  try {
    body = await readJsonBody(req, 4096, 'plain');
  } catch (e) {
    if (e instanceof CharmsError && e.code !== 'INVALID_INPUT') throw e;
    throw bad('body must be JSON {"charm_id": "<app id>", "user_id": <id>}');
  }
  const b = (body ?? {}) as Record<string, unknown>;
  if (typeof b.charm_id !== 'string' || b.charm_id.length > MAX_CHARM_ID) throw bad("charm_id: expected the charm's app id");
  const app = appParam(b.charm_id);
  const u = b.user_id ?? 1;
  if (!(typeof u === 'string' && u.length >= 1 && u.length <= MAX_USER_ID) && !(typeof u === 'number' && Number.isSafeInteger(u)))
    throw bad(`user_id: expected an integer or a string of at most ${MAX_USER_ID} characters`);
  if (!(await c.store.read((tx) => q.assetByApp(tx, app)))) throw notFound(`charm ${app} is not in this index`);
  if (!c.likes.allow(req.client ?? 'unknown'))
    throw new CharmsError('TOO_MANY_REQUESTS', `at most ${LIKES_PER_MINUTE} likes a minute from one client address: try again in a minute`);
  const on = req.method === 'POST';
  const likes_count = await write(app, String(u), on);
  return ok({ success: true, message: on ? 'Like added successfully' : 'Like removed successfully', likes_count });
}

// ------------------------------------------------------------------------------ transactions

/** GET /v1/transactions: charm transactions, pending first then confirmed newest first, paged. */
function transactions(c: ExplorerContext, req: Req): Promise<Res> {
  const { page, limit, offset } = paging(req, 20);
  orderParam(req);
  const pending = [...(c.mempool?.pendingCharmTxs() ?? [])].sort((a, b) => (a.txid < b.txid ? -1 : 1));
  return c.store.read(async (tx) => {
    const [tip, count] = await Promise.all([q.tipOf(tx), q.spellTxCount(tx)]);
    const items: J[] = [];
    for (const p of pending.slice(offset, offset + limit)) {
      const app = p.outputs[0]?.app ?? null;
      items.push({
        txid: p.txid,
        block_height: null,
        status: 'pending',
        confirmations: 0,
        blockchain: 'bitcoin',
        network: c.network,
        updated_at: null,
        charm: charmJson(undefined),
        tx_type: 'spell',
        app_id: app,
        charmid: app,
        asset_type: app === null ? null : assetTypeOf(app),
      });
    }
    const left = limit - items.length;
    const confirmed = left > 0 ? await q.spellTxsPage(tx, { limit: left, offset: Math.max(0, offset - pending.length) }) : [];
    const tags = await tagsOf(tx, new Map(confirmed.map((s) => [s.txid, s.spell])));
    for (const s of confirmed) {
      const app = spellApps(s.spell)[0] ?? null;
      const t = tags.get(s.txid) ?? NO_TAGS;
      items.push({
        txid: s.txid,
        block_height: s.height,
        status: 'confirmed',
        confirmations: tip ? tip.height - s.height + 1 : 1,
        blockchain: 'bitcoin',
        network: c.network,
        updated_at: iso(s.time),
        charm: charmJson(s.spell),
        tags: t.tags ?? undefined,
        tx_type: t.txType,
        app_id: app,
        charmid: app,
        asset_type: app === null ? null : assetTypeOf(app),
      });
    }
    return ok({ data: { transactions: items }, pagination: pagination(page, limit, count + pending.length) });
  });
}

// ------------------------------------------------------------------------------ status

/**
 * The explorer's per-network status (`/v1/status`'s `networks.<network>`): read in `tx`; `node` is
 * the followed node's tip, `lastPollAt` the follower's last poll (ms), `healthy` the status's
 * verdict.
 */
export async function networkStatus(
  c: ExplorerContext,
  tx: ReadTx,
  o: { node: { height: number; hash: string } | undefined; lastPollAt: number | undefined; healthy: boolean; now: number },
): Promise<J> {
  const [tip, counts, txs, blocks, recent, tags] = await Promise.all([
    q.tipOf(tx),
    q.assetCounts(tx),
    q.spellTxCount(tx),
    q.recentBlocks(tx, 10),
    q.charmsPage(tx, { limit: 10, offset: 0 }),
    q.tagStats(tx),
  ]);
  const perBlock = blocks.length === 0 ? new Map<number, number>() : await q.charmOutputsByHeight(tx, blocks[blocks.length - 1]!.height, blocks[0]!.height);
  const pending = c.mempool?.spellTxs ?? 0;
  const age = o.lastPollAt === undefined ? undefined : o.now - o.lastPollAt;
  const status = !o.healthy ? 'inactive' : age === undefined || age < 60_000 ? 'active' : age < 300_000 ? 'idle' : 'inactive';
  const when = o.lastPollAt === undefined ? (tip ? iso(tip.time) : 'Never') : new Date(o.lastPollAt).toISOString();
  const total = txs + pending;
  return {
    indexer_status: {
      status,
      last_processed_block: tip?.height ?? 0,
      latest_confirmed_block: tip?.height ?? 0,
      last_updated_at: when,
      last_indexer_loop_time: when,
    },
    bitcoin_node: {
      status: o.node ? 'connected' : 'disconnected',
      network: c.network,
      block_count: o.node?.height ?? 0,
      best_block_hash: o.node?.hash ?? 'unknown',
    },
    charm_stats: {
      total_charms: counts.outputs.token + counts.outputs.nft + counts.outputs.dapp,
      total_transactions: total,
      confirmed_transactions: txs,
      confirmation_rate: total === 0 ? 0 : Math.round((txs / total) * 10_000) / 100,
      // charms (outputs), as total_charms: the explorer's summary counts charms per type here, not assets
      charms_by_asset_type: (['nft', 'token', 'dapp'] as const).map((t) => ({ asset_type: t, count: counts.outputs[t] })),
      recent_charms: recent.map((r) => ({ txid: r.txid, charmid: r.app, block_height: r.height, asset_type: assetTypeOf(r.app), app_id: r.app })),
    },
    // charm outputs of Charms Cast and of $BRO transactions, DEX rows (dex.ts keeps them per block)
    tag_stats: { charms_cast_count: tags.charmsCast, bro_count: tags.bro, dex_orders_count: tags.dexOrders },
    recent_blocks: blocks.map((b) => ({ height: b.height, hash: b.hash, status: 'processed', charm_count: perBlock.get(b.height) ?? 0, time: iso(b.time) })),
  };
}

// ------------------------------------------------------------------------------ the table

const APP_PATH = '([^/]+(?:/[^/]+/[^/]+)?)';

/** The explorer's routes, in match order (`count` and `reference-nft` before `{asset_id}`). */
export const EXPLORER_ROUTES: readonly Route<ExplorerContext>[] = [
  { method: 'GET', pattern: /^\/v1\/assets$/, doc: '/v1/assets', cache: 'state', network: 'empty', handler: assets, empty: emptyList('assets') },
  {
    method: 'GET',
    pattern: /^\/v1\/assets\/count$/,
    doc: '/v1/assets/count',
    cache: 'state',
    network: 'empty',
    handler: assetCount,
    empty: () => ({ total: 0, nft: 0, token: 0, dapp: 0 }),
  },
  {
    method: 'GET',
    pattern: new RegExp(`^/v1/assets/${APP_PATH}/holders$`),
    doc: '/v1/assets/{app_id}/holders',
    cache: 'state',
    network: 'empty',
    handler: holders,
    empty: (req, m) => {
      const { page, limit } = paging(req, 100, MAX_HOLDERS_LIMIT);
      return { app_id: decoded(m[1]!), total_holders: 0, total_supply: 0, holders: [], page, limit, total_pages: 0, next_cursor: null };
    },
  },
  {
    method: 'GET',
    pattern: /^\/v1\/assets\/(?!reference-nft\/)(?!count$)([^/]+(?:\/[^/]+\/[^/]+)?)$/,
    doc: '/v1/assets/{asset_id}',
    cache: 'state',
    network: 'not-found',
    handler: asset,
  },
  {
    method: 'GET',
    pattern: /^\/v1\/charms(|\/by-type)$/,
    doc: '/v1/charms, /v1/charms/by-type',
    cache: 'state',
    network: 'empty',
    handler: charms,
    empty: emptyList('charms'),
  },
  {
    method: 'GET',
    pattern: /^\/v1\/charms\/count$/,
    doc: '/v1/charms/count',
    cache: 'state',
    network: 'empty',
    handler: charmCount,
    empty: () => ({ count: 0 }),
  },
  {
    method: 'GET',
    pattern: /^\/v1\/charms\/count-by-type$/,
    doc: '/v1/charms/count-by-type',
    cache: 'state',
    network: 'empty',
    handler: charmCountByType,
    empty: () => ({ total: 0, nft: 0, token: 0, dapp: 0 }),
  },
  {
    method: 'GET',
    pattern: new RegExp(`^/v1/charms/by-charmid/${APP_PATH}$`),
    doc: '/v1/charms/by-charmid/{charmid}',
    cache: 'state',
    network: 'not-found',
    handler: charmById,
  },
  {
    method: 'GET',
    pattern: /^\/v1\/charms\/by-address\/([^/]+)$/,
    doc: '/v1/charms/by-address/{address}',
    cache: 'state',
    network: 'empty',
    handler: charmsByAddress,
    empty: () => ({ charms: [] }),
  },
  { method: 'POST', pattern: /^\/v1\/charms\/like$/, doc: '/v1/charms/like', cache: 'none', network: 'refused', handler: like },
  { method: 'DELETE', pattern: /^\/v1\/charms\/like$/, doc: '/v1/charms/like', cache: 'none', network: 'refused', handler: like },
  { method: 'GET', pattern: /^\/v1\/charms\/([0-9a-fA-F]{64})$/, doc: '/v1/charms/{txid}', cache: 'state', network: 'not-found', handler: charmOfTx },
  {
    method: 'GET',
    pattern: /^\/v1\/transactions$/,
    doc: '/v1/transactions',
    cache: 'state',
    network: 'empty',
    handler: transactions,
    empty: emptyList('transactions'),
  },
];
