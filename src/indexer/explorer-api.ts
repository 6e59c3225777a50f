/**
 * The explorer-compatible API: the `/v1/wallet/...`, `/v1/transactions/{txid}` and
 * `/v1/assets/reference-nft/{hash}` endpoints of CharmsDev/charms-explorer that the official wallet
 * (CharmsDev/charms-wallet) calls, so that it works unchanged against `charms index`.
 *
 * Field names are the explorer's, plus the spellings the wallet actually reads (appId/app_id,
 * assetType/asset_type, imageUrl/image_url/image, time/timestamp). Amounts are JSON numbers
 * written with their exact integer digits (beyond 2^53 too). Semantics (issue 22):
 *   confirmed     unspent confirmed charm outputs of the address
 *   unconfirmed   verified pending receives (the mempool overlay)
 *   mempoolSpent  confirmed charm outputs an unconfirmed transaction spends
 *   available     confirmed − mempoolSpent;  total = confirmed + unconfirmed
 * Plain-BTC parts (address UTXOs, fee estimate, broadcast, tip) come from the configured BtcSource;
 * where there is none the answer says `btc_source: "none"` and carries no invented value (the
 * explorer's 546-sat default is not copied). Invalid addresses and batches over 50 are 400s (the
 * explorer silently truncates). Token metadata (name, ticker, image, decimals, description) comes
 * from the token's CHIP-0420 reference NFT `n/<identity>/<vk>`; CHIP-0420's default decimals is 0.
 */
import { parseTx, txVsize, txWeight, type BitcoinTx } from '../bitcoin/tx.js';
import { scriptAsm } from '../bitcoin/script.js';
import { decodeCbor } from '../codec/cbor.js';
import { toJsonCompact } from '../codec/json.js';
import { ValueMap, type Value } from '../codec/value.js';
import { CharmsError } from '../errors.js';
import { spellFromValue, spellToValue } from '../model/spell.js';
import { readJsonBody, type Handler, type Req, type Res } from '../infra/http.js';
import { silentLogger, type Logger } from '../infra/log.js';
import type { BlockSource } from '../sources/block-source.js';
import type { AddressUtxo, BtcSource } from '../sources/btc-source.js';
import { notKept } from './answer-cache.js';
import { addressCodec, JSON_HEADERS, MAX_BATCH, noRoute, ok, RawJson, sameNetwork, type AddressCodec, type J } from './api.js';
import { tableHandler, type Route } from './routes.js';
import type { MempoolOverlay } from './mempool.js';
import type { CharmOutputWrite, IndexReader, StoredBlock, WalletOutputRow } from './store.js';
import { txidToDisplay } from '../model/primitives.js';

const MAX_PREV_TXS = 10;
const MAX_TX_PAGE = 100;
/** History entries read for one address's paged transaction list (memory bound). */
const MAX_HISTORY = 10_000;
/** Distinct previous transactions read to compute one fee from a node (bounded work per request). */
const MAX_FEE_PREV_TXS = 25;
/**
 * Upstream reads (the BTC source's `/tx/:txid`, the node's transactions) one transaction-list
 * request may spend on its entries' fees; entries past it say so and the answer is not kept.
 */
export const MAX_FEE_READS_PER_REQUEST = 60;
/** Fees found, by txid (a txid commits to the inputs and outputs, so its fee never changes). */
const MAX_KEPT_FEES = 50_000;
/**
 * Apps whose metadata is kept for one index state, and the characters of their text (CHIP-0420
 * strings run up to MAX_META_STRING each); past either, the kept ones are dropped and kept anew.
 */
const MAX_KEPT_META = 20_000;
const MAX_KEPT_META_CHARS = 8 * 1024 * 1024;

/** A fee in sats, or null with the reason; `retry` when asking again may find it (a source failed, the bound was spent). */
interface Fee {
  sats: bigint | null;
  unavailable: string | null;
  retry?: true;
}

export interface ExplorerApiOptions {
  store: IndexReader;
  mempool?: MempoolOverlay | undefined;
  /** The chain the index follows: raw transactions for `/wallet/tx/...` and `/wallet/prev-txs`. */
  source?: BlockSource | undefined;
  /** Plain-BTC side (UTXOs, fees, broadcast, tip time); absent → `btc_source: "none"`. */
  btc?: BtcSource | undefined;
  /** How addresses map to the rows' destinations (api.ts addressCodec; default: the network's Bitcoin one). */
  codec?: AddressCodec | undefined;
  network: string;
  log?: Logger | undefined;
  /**
   * The service's answer to `GET /v1/wallet/balance/{address}` (through its answer cache, which
   * keeps it per index state when no BTC source gives address UTXOs): `POST /v1/wallet/balance/batch`
   * is made of these answers' bytes, so its entries are kept exactly when the GET's are. Absent:
   * each entry is computed here.
   */
  balanceAnswer?: ((address: string) => Promise<Res>) | undefined;
}

// ------------------------------------------------------------------------------ metadata

/** CHIP-0420 metadata read from a reference NFT's data (only well-typed fields). */
export interface TokenMeta {
  name: string | null;
  ticker: string | null;
  description: string | null;
  image: string | null;
  image_hash: string | null;
  url: string | null;
  decimals: number;
  /** True when the reference NFT exists. */
  found: boolean;
  refApp: string | null;
}

const NO_META: TokenMeta = { name: null, ticker: null, description: null, image: null, image_hash: null, url: null, decimals: 0, found: false, refApp: null };
const MAX_META_STRING = 256 * 1024;

/** The CHIP-0420 fields of an NFT's data value; unknown or ill-typed fields are ignored. */
export function chip420Meta(v: Value, refApp: string | null): TokenMeta {
  if (!(v instanceof ValueMap)) return { ...NO_META, found: true, refApp };
  const str = (k: string): string | null => {
    const x = v.get(k);
    return typeof x === 'string' && x.length <= MAX_META_STRING ? x : null;
  };
  const d = v.get('decimals');
  const dn = typeof d === 'bigint' ? Number(d) : d;
  return {
    name: str('name'),
    ticker: str('ticker'),
    description: str('description'),
    image: str('image'),
    image_hash: str('image_hash'),
    url: str('url'),
    decimals: typeof dn === 'number' && Number.isInteger(dn) && dn >= 0 && dn <= 255 ? dn : 0,
    found: true,
    refApp,
  };
}

// ------------------------------------------------------------------------------ helpers

const bad = (msg: string): CharmsError => new CharmsError('INVALID_INPUT', msg);
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const num = (b: bigint): RawJson => new RawJson(b.toString());
const TXID = /^[0-9a-fA-F]{64}$/;
const assetType = (app: string): string => (app.startsWith('t/') ? 'token' : app.startsWith('n/') ? 'nft' : 'dapp');
const noBtc = (what: string): CharmsError =>
  new CharmsError('UPSTREAM_UNAVAILABLE', `${what}: no BTC source configured (start charms index with --esplora-url or --rpc-url)`);

async function bodyJson(req: Req, what: string): Promise<Record<string, unknown>> {
  let v: unknown;
  try {
    v = await readJsonBody(req, 256 * 1024, 'plain');
  } catch (e) {
    if (e instanceof CharmsError && e.code !== 'INVALID_INPUT') throw e;
    throw new CharmsError('INVALID_INPUT', `body must be JSON ${what}`, { cause: e });
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw bad(`body must be JSON ${what}`);
  return v as Record<string, unknown>;
}

interface Outpoint {
  txid: string;
  vout: number;
  sats: bigint;
  height: number | null;
  rows: { app: string; amount: bigint | null }[];
  mempoolSpent: boolean;
  /** The fields of its `charmUtxo` entries before and after the app and amount (JSON text, once per output). */
  head?: string;
  tail?: string;
}

function outpoints(rows: (WalletOutputRow | CharmOutputWrite)[], confirmed: boolean, spender: (txid: string, vout: number) => string | undefined): Outpoint[] {
  const out: Outpoint[] = [];
  for (const r of rows) {
    const last = out[out.length - 1];
    if (last && last.txid === r.txid && last.vout === r.vout) last.rows.push({ app: r.app, amount: r.amount });
    else
      out.push({
        txid: r.txid,
        vout: r.vout,
        sats: r.sats,
        height: confirmed ? (r as WalletOutputRow).createdHeight : null,
        rows: [{ app: r.app, amount: r.amount }],
        mempoolSpent: confirmed && spender(r.txid, r.vout) !== undefined,
      });
  }
  return out;
}

/** Token metadata of an app and its `metaFields` as JSON text (without braces). */
interface AppMeta {
  meta: TokenMeta;
  text: string;
}

// ------------------------------------------------------------------------------ the handler

/** The wallet routes' context: their functions over `o` (with the fees and metadata they keep). */
export type WalletApi = ReturnType<typeof walletApi>;

export function walletApi(o: ExplorerApiOptions) {
  const { store, mempool, btc } = o;
  const log = o.log ?? silentLogger;
  const codec = o.codec ?? addressCodec('bitcoin', o.network);
  const spender = (txid: string, vout: number) => mempool?.spender(txid, vout);
  const btcName = btc ? btc.kind : 'none';
  /** The source of address UTXOs: only Esplora has an address index. */
  const utxoSource = btc?.addressUtxos ? btc.kind : 'none';

  const scriptOf = codec.scriptOf;
  const keptFees = new Map<string, bigint>();

  const checkNetwork = (n: unknown): void => {
    if (n === undefined || n === null) return;
    if (typeof n !== 'string') throw bad(`network: expected a network name; this index serves ${o.network}`);
    if (!sameNetwork(n, o.network)) throw bad(`network ${n.slice(0, 40)}: this index serves ${o.network}`);
  };

  const addressList = (body: Record<string, unknown>): string[] => {
    const list = body.addresses;
    if (!Array.isArray(list)) throw bad('body must be JSON {"addresses": ["<address>", ...], "network": "..."}');
    if (list.length > MAX_BATCH) throw bad(`at most ${MAX_BATCH} addresses per request, got ${list.length}`);
    list.forEach(scriptOf); // all checked before any work
    return list as string[];
  };

  /** Lookups kept for one index state: reference NFTs by `identity/vk`, and per app its metadata and text. */
  interface KeptMeta {
    nfts: Map<string, Promise<TokenMeta>>;
    apps: Map<string, Promise<AppMeta>>;
    /** Characters of the apps' texts (each holds its metadata's strings). */
    chars: number;
  }
  const newKeptMeta = (): KeptMeta => ({ nfts: new Map(), apps: new Map(), chars: 0 });
  let metaState: number | undefined;
  let keptMeta = newKeptMeta();

  /**
   * Metadata per app, kept for the confirmed index state it was read in: reference NFTs change
   * only with a block or a rollback, which moves the store's data version (the mempool is not
   * read). The version is taken before the lookups, so what a state keeps was read in it or
   * later, never before; a computation still running when the state moves finishes into the old
   * state's maps, which are gone. Where the version cannot be told, the lookups are shared within
   * one request only.
   */
  async function metaCache(): Promise<(app: string) => Promise<AppMeta>> {
    const v = store.dataVersion();
    const now = typeof v === 'object' ? await v : v;
    let kept: KeptMeta;
    if (now === undefined) kept = newKeptMeta();
    else {
      if (now !== metaState || keptMeta.apps.size > MAX_KEPT_META || keptMeta.chars > MAX_KEPT_META_CHARS) {
        metaState = now;
        keptMeta = newKeptMeta();
      }
      kept = keptMeta;
    }
    const nftMeta = (identity: string, vk: string): Promise<TokenMeta> => {
      const key = `${identity}/${vk}`;
      let p = kept.nfts.get(key);
      if (!p) {
        p = (async () => {
          const nft = await store.nftData(identity, vk);
          if (!nft) return NO_META;
          try {
            return chip420Meta(decodeCbor(nft.data), nft.app);
          } catch {
            return { ...NO_META, found: true, refApp: nft.app };
          }
        })();
        kept.nfts.set(key, p);
        p.catch(() => kept.nfts.delete(key)); // a failed read is asked again
      }
      return p;
    };
    return (app) => {
      let p = kept.apps.get(app);
      if (!p) {
        const parts = app.split('/');
        p = nftMeta(parts[1] ?? '', parts[2] ?? '').then((meta) => {
          const text = JSON.stringify(metaFields(app, meta)).slice(1, -1);
          kept.chars += text.length;
          return { meta, text };
        });
        kept.apps.set(app, p);
        p.catch(() => kept.apps.delete(app));
      }
      return p;
    };
  }

  const metaFields = (app: string, m: TokenMeta): Record<string, J> => ({
    appId: app,
    app_id: app,
    assetType: assetType(app),
    asset_type: assetType(app),
    symbol: m.ticker,
    ticker: m.ticker,
    name: m.name,
    description: m.description,
    imageUrl: m.image,
    image_url: m.image,
    image: m.image,
    decimals: m.decimals,
  });

  /** What an address holds in charms, per app (sorted), with its outputs. */
  async function holdings(address: string, meta: (app: string) => Promise<AppMeta>) {
    const script = scriptOf(address);
    const confirmed = outpoints(await store.unspentForWallet(script), true, spender);
    const pending = outpoints(mempool?.receivesOf(script) ?? [], false, spender);
    const per = new Map<string, { confirmed: bigint; unconfirmed: bigint; mempoolSpent: bigint; utxos: { op: Outpoint; amount: bigint }[] }>();
    for (const op of [...confirmed, ...pending])
      for (const r of op.rows) {
        let e = per.get(r.app);
        if (!e) per.set(r.app, (e = { confirmed: 0n, unconfirmed: 0n, mempoolSpent: 0n, utxos: [] }));
        const amount = r.amount ?? 1n;
        if (op.height === null) e.unconfirmed += amount;
        else e.confirmed += amount;
        if (op.mempoolSpent) e.mempoolSpent += amount;
        e.utxos.push({ op, amount });
      }
    const balances = [];
    for (const [app, e] of [...per.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) balances.push({ app, e, meta: await meta(app) });
    return { script, confirmed, pending, balances };
  }

  /**
   * One utxo of a `/wallet/charms` balance entry as JSON text: {txid, vout, value, address, appId,
   * app_id, amount, confirmed, blockHeight, block_height, hasOrderCharm, allCharmAppIds,
   * mempoolSpent}, the bytes `ok()` writes for that object (`addressText`, `appText`: JSON strings).
   * Written by hand: the answers list every output, and the generic writer costs more than the read.
   */
  const charmUtxo = (addressText: string, appText: string, op: Outpoint, amount: bigint): string => {
    if (op.head === undefined) {
      const apps = op.rows.map((r) => r.app);
      const h = op.height === null ? 'null' : String(op.height);
      op.head = `{"txid":${JSON.stringify(op.txid)},"vout":${op.vout},"value":${op.sats},"address":${addressText},`;
      op.tail = `,"confirmed":${op.height !== null},"blockHeight":${h},"block_height":${h},"hasOrderCharm":${apps.some((a) => a.startsWith('b/'))},"allCharmAppIds":${JSON.stringify(apps)},"mempoolSpent":${op.mempoolSpent}}`;
    }
    return `${op.head}"appId":${appText},"app_id":${appText},"amount":${amount}${op.tail}`;
  };

  /**
   * One `/wallet/charms` balance entry: the app's metadata fields (metaFields), confirmed,
   * unconfirmed, mempoolSpent, available, total, utxos, then `more` (JSON text of further fields).
   */
  const charmBalance = (address: string, b: Awaited<ReturnType<typeof holdings>>['balances'][number], more = ''): RawJson => {
    const addressText = JSON.stringify(address);
    const appText = JSON.stringify(b.app);
    const utxos = b.e.utxos.map((u) => charmUtxo(addressText, appText, u.op, u.amount)).join(',');
    const e = b.e;
    return new RawJson(
      `{${b.meta.text},"confirmed":${e.confirmed},"unconfirmed":${e.unconfirmed},"mempoolSpent":${e.mempoolSpent},"available":${e.confirmed - e.mempoolSpent},"total":${e.confirmed + e.unconfirmed},"utxos":[${utxos}]${more}}`,
    );
  };

  async function addressUtxos(address: string): Promise<AddressUtxo[] | undefined> {
    if (!btc?.addressUtxos) return undefined;
    try {
      return await btc.addressUtxos(address);
    } catch (e) {
      // an address the BTC source has never seen holds no BTC UTXO; other failures fail the request
      if (e instanceof CharmsError && e.code === 'NOT_FOUND') return [];
      throw e;
    }
  }

  /** One `/wallet/balance` entry: BTC from the BTC source, charms from the index. */
  async function balanceEntry(address: string, meta: (app: string) => Promise<AppMeta>): Promise<J> {
    const h = await holdings(address, meta);
    const charmOuts = new Set([...h.confirmed, ...h.pending].map((x) => `${x.txid}:${x.vout}`));
    const utxos = await addressUtxos(address);
    let btcJson: J;
    if (!utxos) {
      btcJson = { btc_source: 'none', confirmed: null, unconfirmed: null, total: null, available: null, locked: null, utxos: [] };
    } else {
      let conf = 0,
        unconf = 0,
        locked = 0;
      const list = [...utxos].sort((a, b) => (a.txid < b.txid ? -1 : a.txid > b.txid ? 1 : a.vout - b.vout));
      for (const u of list) {
        if (u.height === undefined) unconf += u.value;
        else conf += u.value;
        if (charmOuts.has(`${u.txid}:${u.vout}`)) locked += u.value;
      }
      btcJson = {
        btc_source: utxoSource,
        confirmed: conf,
        unconfirmed: unconf,
        total: conf + unconf,
        available: conf + unconf - locked,
        locked,
        utxos: list.map((u) => ({
          txid: u.txid,
          vout: u.vout,
          value: u.value,
          blockHeight: u.height ?? null,
          block_height: u.height ?? null,
          hasCharms: charmOuts.has(`${u.txid}:${u.vout}`),
          confirmed: u.height !== undefined,
        })),
      };
    }
    return {
      address,
      network: o.network,
      monitored: true,
      btc_source: utxos ? utxoSource : 'none',
      btc: btcJson,
      charms: {
        balances: h.balances.map((b) => charmBalance(address, b)),
        count: h.balances.length,
      },
    };
  }

  /**
   * `{results: {<address>: <entry>}}` from each address's `GET /v1/wallet/balance/{address}` answer
   * (a batch entry is that answer's body: the same bytes); the first answer that is not a 200 is
   * the batch's answer, as the error it carries would be if computed here.
   */
  async function balanceBatch(addrs: string[], answer: (address: string) => Promise<Res>): Promise<Res> {
    const parts: Uint8Array[] = [];
    // a repeated address keeps its first place (as an object's key does)
    for (const a of new Set(addrs)) {
      const res = await answer(a);
      if (res.status !== 200 || res.body === undefined) return res;
      parts.push(
        Buffer.from(`${parts.length === 0 ? '{"results":{' : ','}${JSON.stringify(a)}:`),
        typeof res.body === 'string' ? Buffer.from(res.body) : res.body,
      );
    }
    if (parts.length === 0) return ok({ results: {} });
    parts.push(Buffer.from('}}'));
    return { status: 200, headers: { ...JSON_HEADERS }, body: Buffer.concat(parts) };
  }

  async function tipHeight(): Promise<number | undefined> {
    return (await store.tip())?.height;
  }

  /**
   * Charm transactions of an address, newest first (pending receives first of all): the tip, the
   * history and each transaction's outputs read on one snapshot (a reorg between them would list
   * a transaction without its outputs, or count confirmations from another tip).
   */
  async function addressTxs(address: string, limit: number, sinceBlock?: number) {
    const script = scriptOf(address);
    // the data version first, outside the snapshot (a PostgreSQL reader asks it on another connection)
    const meta = await metaCache();
    return store.read(() => addressTxsIn(script, address, limit, meta, sinceBlock));
  }

  async function addressTxsIn(script: Uint8Array, address: string, limit: number, meta: (app: string) => Promise<AppMeta>, sinceBlock?: number) {
    const tip = await tipHeight();
    const items: Record<string, J>[] = [];
    const pendingTxs = new Map<string, CharmOutputWrite[]>();
    for (const r of mempool?.receivesOf(script) ?? []) pendingTxs.set(r.txid, [...(pendingTxs.get(r.txid) ?? []), r]);
    const scriptHex = hex(script);
    const asset = async (app: string, amount: bigint, vout: number): Promise<J> => {
      const m = (await meta(app)).meta;
      return { appId: app, app_id: app, assetType: assetType(app), asset_type: assetType(app), symbol: m.ticker, name: m.name, amount: num(amount), vout };
    };
    for (const [txid, outs] of [...pendingTxs.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const sats = new Map(outs.map((x) => [x.vout, x.sats]));
      items.push({
        txid,
        address,
        network: o.network,
        direction: 'in',
        amount: num([...sats.values()].reduce((a, b) => a + b, 0n)),
        fee: null,
        fee_unavailable: null,
        block_height: null,
        block_time: null,
        confirmations: 0,
        status: 'pending',
        charm_detected: true,
        assets: await Promise.all(outs.map((x) => asset(x.app, x.amount ?? 1n, x.vout))),
      });
    }
    const hist = await store.history(script, MAX_HISTORY);
    const times = new Map<number, number | null>();
    for (const h of hist) {
      if (sinceBlock !== undefined && h.height <= sinceBlock) break;
      if (items.length >= limit) break;
      if (!times.has(h.height)) times.set(h.height, (await store.blockAt(h.height))?.time ?? null);
      const received = h.changes.some((c) => c.received > 0n);
      const rows = received
        ? (await store.outputsOf(h.txid)).filter((r) => hex(r.script) === scriptHex)
        : (await store.spentBy(h.txid)).filter((r) => hex(r.script) === scriptHex);
      const sats = new Map(rows.map((r) => [`${r.txid}:${r.vout}`, r.sats]));
      items.push({
        txid: h.txid,
        address,
        network: o.network,
        direction: received ? 'in' : 'out',
        amount: num([...sats.values()].reduce((a, b) => a + b, 0n)),
        fee: null,
        fee_unavailable: null,
        block_height: h.height,
        block_time: times.get(h.height) ?? null,
        confirmations: tip === undefined ? null : tip - h.height + 1,
        status: 'confirmed',
        charm_detected: true,
        assets: await Promise.all(rows.map((r) => asset(r.app, r.amount ?? 1n, received ? r.vout : -1))),
      });
    }
    return { items, total: pendingTxs.size + hist.filter((h) => sinceBlock === undefined || h.height > sinceBlock).length, tip };
  }

  function txidArg(raw: string): string {
    if (!TXID.test(raw)) throw bad('txid: expected 64 hex characters');
    return raw.toLowerCase();
  }

  /**
   * A transaction's bytes from the chain source: looked up in `block` when the index knows the
   * block holding it (a Bitcoin Core without `-txindex` finds a confirmed transaction only so),
   * else (or when the block does not hold it) by txid alone.
   */
  async function rawTx(txid: string, block: StoredBlock | undefined): Promise<Uint8Array> {
    const src = o.source;
    if (!src) throw new CharmsError('UPSTREAM_UNAVAILABLE', 'no node configured (--api-only without a source)');
    const raw = (block && (await src.rawTx(txid, block.hash))) ?? (await src.rawTx(txid));
    if (!raw) throw new CharmsError('NOT_FOUND', `transaction ${txid} is unknown to ${src.name}`);
    return raw;
  }

  /** The index's block holding a transaction (confirmedAt), when it knows one. */
  function blockOf(txid: string): Promise<StoredBlock | undefined> {
    return store.read(async () => {
      const height = await confirmedAt(txid);
      return height === undefined ? undefined : store.blockAt(height);
    });
  }

  const scriptType = (s: Uint8Array): string => {
    if (s.length === 34 && s[0] === 0x51 && s[1] === 0x20) return 'witness_v1_taproot';
    if (s.length === 22 && s[0] === 0x00 && s[1] === 0x14) return 'witness_v0_keyhash';
    if (s.length === 34 && s[0] === 0x00 && s[1] === 0x20) return 'witness_v0_scripthash';
    if (s.length === 25 && s[0] === 0x76 && s[1] === 0xa9 && s[2] === 0x14 && s[23] === 0x88 && s[24] === 0xac) return 'pubkeyhash';
    if (s.length === 23 && s[0] === 0xa9 && s[1] === 0x14 && s[22] === 0x87) return 'scripthash';
    if (s.length > 0 && s[0] === 0x6a) return 'nulldata';
    return 'nonstandard';
  };

  /**
   * Where the index saw a transaction confirmed: any transaction of the recent blocks it keeps
   * (`recent_txs`), and charm transactions of any height.
   */
  async function confirmedAt(txid: string): Promise<number | undefined> {
    const recent = await store.recentTxHeight(txid);
    if (recent !== undefined) return recent;
    const spell = await store.spellTx(txid);
    if (spell) return spell.height;
    const consumed = await store.spentBy(txid);
    return consumed[0]?.spent?.height;
  }

  /**
   * A transaction's fee: Esplora's figure when the BTC source is Esplora, else the sum of its
   * previous outputs (read from the chain source, at most MAX_FEE_PREV_TXS transactions) minus its
   * outputs. Never guessed: null with the reason when neither can say. `tx` absent: read from the
   * chain source when needed. `budget`: upstream reads this may still spend (each one takes one).
   */
  async function txFee(txid: string, tx: BitcoinTx | undefined, budget?: { left: number }): Promise<Fee> {
    const none = (why: string) => ({ sats: null, unavailable: why });
    const kept = keptFees.get(txid);
    if (kept !== undefined) return { sats: kept, unavailable: null };
    const spent = (): Fee => ({
      sats: null,
      unavailable: `this request's bound of ${MAX_FEE_READS_PER_REQUEST} upstream reads for fees is spent: ask again (fees found are kept) or GET /v1/wallet/tx/${txid}`,
      retry: true,
    });
    const take = (): boolean => !budget || budget.left-- > 0;
    const found = (sats: bigint): Fee => {
      if (keptFees.size >= MAX_KEPT_FEES) keptFees.delete(keptFees.keys().next().value as string);
      keptFees.set(txid, sats);
      return { sats, unavailable: null };
    };
    const isCoinbase = (t: BitcoinTx) => t.inputs.length === 1 && t.inputs[0]!.vout === 0xffffffff && t.inputs[0]!.txid.every((b) => b === 0);
    if (tx && isCoinbase(tx)) return none('coinbase: no fee');
    try {
      if (btc?.txFee) {
        if (!take()) return spent();
        const fee = await btc.txFee(txid);
        if (fee !== undefined) return found(fee);
      }
      const src = o.source;
      if (!src) return none('no source for the previous outputs');
      if (!tx) {
        if (!take()) return spent();
        const raw = await src.rawTx(txid);
        if (!raw) return none(`transaction ${txid} is unknown to ${src.name}`);
        tx = parseTx(raw);
        if (isCoinbase(tx)) return none('coinbase: no fee');
      }
      const prevIds = [...new Set(tx.inputs.map((i) => txidToDisplay(i.txid)))];
      if (prevIds.length > MAX_FEE_PREV_TXS) return none(`spends outputs of ${prevIds.length} transactions (more than ${MAX_FEE_PREV_TXS} are not read)`);
      const values = new Map<string, bigint[]>();
      for (const p of prevIds) {
        if (!take()) return spent();
        const prev = await src.rawTx(p);
        if (!prev) return none(`previous transaction ${p} is unknown to ${src.name}`);
        values.set(
          p,
          parseTx(prev).outputs.map((x) => x.value),
        );
      }
      let sum = 0n;
      for (const i of tx.inputs) {
        const v = values.get(txidToDisplay(i.txid))?.[i.vout];
        if (v === undefined) return none(`input ${txidToDisplay(i.txid)}:${i.vout} names an output that does not exist`);
        sum += v;
      }
      const paid = sum - tx.outputs.reduce((a, x) => a + x.value, 0n);
      return paid < 0n ? none('outputs exceed inputs') : found(paid);
    } catch (e) {
      log.warn('fee unavailable', { txid, error: (e as Error).message });
      return { ...none(`the source failed (${e instanceof CharmsError ? e.code : 'INTERNAL'}): retry`), retry: true };
    }
  }

  /**
   * `fee` (sats, as `amount`) and `fee_unavailable` of transaction list entries, within `budget`
   * upstream reads; false when some entry may get its fee when asked again (then the answer is
   * not kept).
   */
  async function withFees(items: Record<string, J>[], budget: { left: number }): Promise<boolean> {
    let complete = true;
    for (const it of items) {
      const f = await txFee(it.txid as string, undefined, budget);
      it.fee = f.sats === null ? null : num(f.sats);
      it.fee_unavailable = f.unavailable;
      if (f.retry) complete = false;
    }
    return complete;
  }

  async function btcConfirmations(txid: string): Promise<number | undefined> {
    try {
      return await btc?.txConfirmations?.(txid);
    } catch (e) {
      log.warn('confirmations unavailable', { txid, error: (e as Error).message });
      return undefined;
    }
  }

  async function txJson(txid: string): Promise<J> {
    // the height, its block and the tip on one snapshot, before the sources are asked
    const { height, block, tip } = await store.read(async () => {
      const at = await confirmedAt(txid);
      return { height: at, block: at === undefined ? undefined : await store.blockAt(at), tip: await tipHeight() };
    });
    const raw = await rawTx(txid, block);
    const tx = parseTx(raw);
    const fee = await txFee(txid, tx);
    const pending = height === undefined && mempool?.get(txid) !== undefined;
    // neither a charm transaction nor one of the recent blocks the index keeps: the BTC source's
    // count, where it can tell
    const told = height === undefined && !pending ? await btcConfirmations(txid) : undefined;
    return {
      txid,
      version: tx.version,
      locktime: tx.locktime,
      size: raw.length,
      vsize: txVsize(tx),
      weight: txWeight(tx),
      // Bitcoin Core's `fee` is in BTC; `fee_sats` the same in sats; `fee_unavailable` says why it is null
      fee: fee.sats === null ? null : new RawJson(btcText(fee.sats)),
      fee_sats: fee.sats === null ? null : num(fee.sats),
      fee_unavailable: fee.unavailable,
      // known for charm transactions the index holds and any of its recent blocks, for mempool
      // ones, and for others where the BTC source can tell; otherwise null (not invented)
      confirmations: height !== undefined && tip !== undefined ? tip - height + 1 : pending ? 0 : (told ?? null),
      block_hash: block?.hash ?? null,
      block_height: height ?? null,
      time: block?.time ?? null,
      blocktime: block?.time ?? null,
      inputs: tx.inputs.map((i) => ({
        txid: txidToDisplay(i.txid),
        vout: i.vout,
        script_sig: hex(i.scriptSig),
        sequence: i.sequence,
        witness: i.witness.map(hex),
      })),
      outputs: tx.outputs.map((x, n) => ({
        value: new RawJson(btcText(x.value)),
        value_sats: num(x.value),
        n,
        script_pubkey: { asm: scriptAsm(x.script), hex: hex(x.script), type: scriptType(x.script), address: codec.addressOf(x.script) },
      })),
      hex: hex(raw),
    };
  }

  /** POST /v1/wallet/balance/batch, /v1/wallet/charms/batch/indexed, /v1/wallet/transactions/batch. */
  async function batch(req: Req): Promise<Res> {
    const p = req.path;
    const body = await bodyJson(req, '{"addresses": [...], "network": "..."}');
    checkNetwork(body.network);
    const addrs = addressList(body);
    const results: Record<string, J> = {};
    if (p === '/v1/wallet/balance/batch') {
      if (o.balanceAnswer) return balanceBatch(addrs, o.balanceAnswer);
      const meta = await metaCache();
      for (const a of addrs) results[a] = await balanceEntry(a, meta);
    } else if (p === '/v1/wallet/charms/batch/indexed') {
      const meta = await metaCache();
      for (const a of addrs) {
        const h = await holdings(a, meta);
        results[a] = {
          address: a,
          network: o.network,
          balances: h.balances.map((b) => charmBalance(a, b, ',"cardano":null')),
          count: h.balances.length,
        };
      }
    } else {
      const ps = body.page_size ?? MAX_TX_PAGE;
      if (typeof ps !== 'number' || !Number.isInteger(ps) || ps < 1 || ps > MAX_TX_PAGE) throw bad(`page_size: expected an integer from 1 to ${MAX_TX_PAGE}`);
      const since = body.since_block ?? undefined;
      if (since !== undefined && (typeof since !== 'number' || !Number.isInteger(since) || since < 0)) throw bad('since_block: expected a block height');
      const budget = { left: MAX_FEE_READS_PER_REQUEST };
      let complete = true;
      for (const a of addrs) {
        const t = await addressTxs(a, ps, since as number | undefined);
        if (!(await withFees(t.items, budget))) complete = false;
        results[a] = { transactions: t.items, total: t.total, last_block: t.tip ?? null };
      }
      return keptIf(complete, ok({ results }));
    }
    return ok({ results });
  }

  /** GET /v1/wallet/(balance|charms|utxos|transactions)/{address}. */
  async function perAddress(req: Req, m: RegExpExecArray): Promise<Res> {
    const address = m[2]!;
    scriptOf(address);
    if (m[1] === 'balance') return ok(await balanceEntry(address, await metaCache()));
    if (m[1] === 'charms') {
      const h = await holdings(address, await metaCache());
      return ok({ address, network: o.network, balances: h.balances.map((b) => charmBalance(address, b)), count: h.balances.length });
    }
    if (m[1] === 'utxos') {
      const minRaw = req.query.get('min_value');
      if (minRaw !== null && !/^\d{1,16}$/.test(minRaw)) throw bad('min_value: expected satoshis');
      const min = minRaw === null ? 0 : Number(minRaw);
      if (!btc?.addressUtxos) {
        const e = noBtc('address UTXOs');
        return {
          status: 503,
          headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
          body: JSON.stringify({
            error: btc ? `${btc.name} has no address index: configure --esplora-url for address UTXOs` : e.message,
            code: e.code,
            btc_source: 'none',
            address,
            utxos: [],
            count: 0,
          }),
        };
      }
      const [utxos, tip] = await Promise.all([addressUtxos(address), btc.tipTime()]);
      const script = hex(scriptOf(address));
      const list = (utxos ?? [])
        .filter((u) => u.value >= min)
        .sort((a, b) => (a.txid < b.txid ? -1 : a.txid > b.txid ? 1 : a.vout - b.vout))
        .map((u) => ({
          txid: u.txid,
          vout: u.vout,
          value: u.value,
          script_pubkey: script,
          confirmations: u.height === undefined ? 0 : tip.height - u.height + 1,
          block_height: u.height ?? null,
          confirmed: u.height !== undefined,
        }));
      return ok({ address, btc_source: utxoSource, utxos: list, count: list.length });
    }
    const page = intParam(req.query.get('page'), 'page', 1, 1_000_000) ?? 1;
    const size = intParam(req.query.get('page_size'), 'page_size', 1, MAX_TX_PAGE) ?? 50;
    const t = await addressTxs(address, Math.min(page * size, MAX_HISTORY));
    const transactions = t.items.slice((page - 1) * size, page * size);
    const complete = await withFees(transactions, { left: MAX_FEE_READS_PER_REQUEST });
    return keptIf(
      complete,
      ok({
        address,
        network: o.network,
        transactions,
        page,
        page_size: size,
        total: t.total,
        total_pages: Math.ceil(t.total / size),
      }),
    );
  }

  /** GET /v1/wallet/tip. */
  async function tipAnswer(): Promise<Res> {
    if (btc) {
      const t = await btc.tipTime();
      return ok({ height: t.height, hash: t.hash, time: t.time, timestamp: t.time, btc_source: btcName });
    }
    const t = await store.tip();
    if (!t) throw new CharmsError('UPSTREAM_UNAVAILABLE', 'the index holds no block yet');
    return ok({ height: t.height, hash: t.hash, time: t.time, timestamp: t.time, btc_source: 'none', source: 'index' });
  }

  /** GET /v1/wallet/fee-estimate?blocks=. */
  async function feeEstimate(req: Req): Promise<Res> {
    const blocks = intParam(req.query.get('blocks'), 'blocks', 1, 1008) ?? 6;
    if (!btc) throw noBtc('fee estimate');
    const f = await btc.feeEstimate(blocks);
    if (!f) throw new CharmsError('UPSTREAM_UNAVAILABLE', `${btc.name} has no fee estimate yet for ${blocks} blocks`);
    // the explorer's unit: BTC per kvB (the wallet multiplies by 100 000 for sat/vB)
    return ok({ fee_rate: f.satPerVb / 100_000, blocks: f.blocks, sat_per_vb: f.satPerVb, btc_source: btcName });
  }

  /** POST /v1/wallet/broadcast {"raw_tx"}. */
  async function broadcast(req: Req): Promise<Res> {
    const body = await bodyJson(req, '{"raw_tx": "<hex>"}');
    checkNetwork(body.network);
    if (typeof body.raw_tx !== 'string' || !/^[0-9a-fA-F]+$/.test(body.raw_tx.trim())) throw bad('raw_tx: expected the transaction in hex');
    if (!btc) throw noBtc('broadcast');
    return ok({ txid: await btc.broadcast(body.raw_tx.trim()) });
  }

  /** POST /v1/wallet/prev-txs {"txids"}. */
  async function prevTxs(req: Req): Promise<Res> {
    const body = await bodyJson(req, '{"txids": [...]}');
    checkNetwork(body.network);
    const ids = body.txids;
    if (!Array.isArray(ids) || ids.some((t) => typeof t !== 'string')) throw bad('txids: expected a list of txids');
    if (ids.length > MAX_PREV_TXS) throw bad(`at most ${MAX_PREV_TXS} txids per request, got ${ids.length}`);
    const list = (ids as string[]).map(txidArg);
    const transactions: Record<string, J> = {};
    for (const t of list) transactions[t] = hex(await rawTx(t, await blockOf(t)));
    return ok({ transactions });
  }

  /** GET /v1/wallet/tx/{txid}(/hex). */
  async function walletTx(_req: Req, m: RegExpExecArray): Promise<Res> {
    const txid = txidArg(m[1]!);
    if (m[2]) return ok({ txid, hex: hex(await rawTx(txid, await blockOf(txid))) });
    return ok(await txJson(txid));
  }

  /** GET /v1/transactions/{txid}. */
  const transaction = async (_req: Req, m: RegExpExecArray): Promise<Res> => ok(await transactionData(txidArg(m[1]!)));

  /** GET /v1/assets/reference-nft/{hash}. */
  async function referenceNft(_req: Req, m: RegExpExecArray): Promise<Res> {
    const hash = m[1]!.toLowerCase();
    if (!/^[0-9a-f]{64}$/.test(hash)) throw bad('hash: expected the 64-hex identity of the app');
    const nft = await store.nftData(hash);
    if (!nft) throw new CharmsError('NOT_FOUND', `no reference NFT n/${hash}/… in this index`);
    let value: Value = null;
    let text = 'null';
    try {
      value = decodeCbor(nft.data);
      text = toJsonCompact(value);
    } catch {
      /* data our JSON printer cannot show */
    }
    const meta = chip420Meta(value, nft.app);
    return ok({
      app_id: nft.app,
      appId: nft.app,
      name: meta.name,
      symbol: meta.ticker,
      ticker: meta.ticker,
      description: meta.description,
      image_url: meta.image,
      image: meta.image,
      url: meta.url,
      decimals: meta.decimals,
      metadata: new RawJson(text),
      txid: nft.txid,
      vout: nft.vout,
      block_height: nft.height,
    });
  }

  /** The explorer's TransactionData of a charm transaction (404 for others). */
  async function transactionData(txid: string): Promise<J> {
    const meta = await metaCache();
    const tip = await tipHeight();
    const assetJson = async (r: { app: string; amount: bigint | null; script: Uint8Array }, role: string, vout: number): Promise<J> => {
      const m = (await meta(r.app)).meta;
      return {
        app_id: r.app,
        appId: r.app,
        name: m.name,
        symbol: m.ticker,
        description: m.description,
        image_url: m.image,
        image: m.image,
        amount: num(r.amount ?? 1n),
        asset_type: assetType(r.app),
        assetType: assetType(r.app),
        role,
        vout,
        address: codec.addressOf(r.script),
        verified: true,
      };
    };
    const spell = await store.spellTx(txid);
    if (spell) {
      const [outs, consumed, block] = await Promise.all([store.outputsOf(txid), store.spentBy(txid), store.blockAt(spell.height)]);
      const native = new RawJson(toJsonCompact(spellToValue(spellFromValue(decodeCbor(spell.spell), false), true)));
      return {
        txid,
        block_height: spell.height,
        status: 'confirmed',
        confirmations: tip === undefined ? null : tip - spell.height + 1,
        blockchain: 'bitcoin',
        network: o.network,
        updated_at: block ? new Date(block.time * 1000).toISOString() : null,
        charm: { type: 'spell', detected: true, has_native_data: true, native_data: native, version: 'native_parser' },
        assets: [
          ...(await Promise.all(outs.map((r) => assetJson(r, 'output', r.vout)))),
          ...(await Promise.all(consumed.map((r) => assetJson(r, 'input', -1)))),
        ],
      };
    }
    const pending = mempool?.get(txid);
    if (pending && pending.outputs.length > 0)
      return {
        txid,
        block_height: null,
        status: 'pending',
        confirmations: 0,
        blockchain: 'bitcoin',
        network: o.network,
        updated_at: null,
        charm: { type: 'spell', detected: true, has_native_data: false, native_data: null, version: 'native_parser' },
        assets: await Promise.all(pending.outputs.map((r) => assetJson(r, 'output', r.vout))),
      };
    throw new CharmsError('NOT_FOUND', `transaction ${txid} carries no verified spell (in this index)`);
  }

  return { batch, perAddress, tipAnswer, feeEstimate, broadcast, prevTxs, walletTx, transaction, referenceNft };
}

/** `res`, marked not to be kept by the answer cache unless `complete`. */
const keptIf = (complete: boolean, res: Res): Res => (complete ? res : notKept(res));

/** Satoshis as a BTC decimal with 8 places, written exactly (Bitcoin Core's `value`). */
function btcText(sats: bigint): string {
  const s = sats.toString().padStart(9, '0');
  return `${s.slice(0, -8)}.${s.slice(-8)}`;
}

function intParam(raw: string | null, name: string, min: number, max: number): number | undefined {
  if (raw === null) return undefined;
  const n = Number(raw);
  if (!/^\d{1,10}$/.test(raw) || n < min || n > max) throw bad(`${name}: expected an integer from ${min} to ${max}`);
  return n;
}

const BATCH_BODY = 'POST {"addresses": [...], "network": "..."}';

/** The explorer's wallet routes (and its transaction and reference-NFT ones) over `walletApi`'s context. */
export const WALLET_ROUTES: readonly Route<WalletApi>[] = [
  {
    method: 'POST',
    pattern: /^\/v1\/wallet\/(balance\/batch|charms\/batch\/indexed|transactions\/batch)$/,
    doc: '/v1/wallet/balance/batch, /v1/wallet/charms/batch/indexed, /v1/wallet/transactions/batch',
    cache: 'none',
    network: 'refused',
    hint: BATCH_BODY,
    handler: (c, req) => c.batch(req),
  },
  {
    method: 'GET',
    pattern: /^\/v1\/wallet\/(balance)\/(?!batch$)([^/]+)$/,
    doc: '/v1/wallet/balance/{address}',
    cache: 'state-unless-btc-utxos',
    network: 'refused',
    handler: (c, req, m) => c.perAddress(req, m),
  },
  {
    method: 'GET',
    // the fees of /wallet/transactions come from the sources but never change for a txid; an
    // answer lacking one the sources may still give is marked notKept
    pattern: /^\/v1\/wallet\/(charms|transactions)\/(?!batch$)([^/]+)$/,
    doc: '/v1/wallet/charms/{address}, /v1/wallet/transactions/{address}',
    cache: 'state',
    network: 'refused',
    handler: (c, req, m) => c.perAddress(req, m),
  },
  {
    method: 'GET',
    pattern: /^\/v1\/wallet\/(utxos)\/([^/]+)$/,
    doc: '/v1/wallet/utxos/{address}',
    cache: 'none',
    network: 'refused',
    handler: (c, req, m) => c.perAddress(req, m),
  },
  { method: 'GET', pattern: /^\/v1\/wallet\/tip$/, doc: '/v1/wallet/tip', cache: 'none', network: 'refused', handler: (c) => c.tipAnswer() },
  {
    method: 'GET',
    pattern: /^\/v1\/wallet\/fee-estimate$/,
    doc: '/v1/wallet/fee-estimate',
    cache: 'none',
    network: 'refused',
    handler: (c, req) => c.feeEstimate(req),
  },
  {
    method: 'POST',
    pattern: /^\/v1\/wallet\/broadcast$/,
    doc: '/v1/wallet/broadcast',
    cache: 'none',
    network: 'refused',
    hint: 'POST {"raw_tx": "<hex>"}',
    handler: (c, req) => c.broadcast(req),
  },
  {
    method: 'POST',
    pattern: /^\/v1\/wallet\/prev-txs$/,
    doc: '/v1/wallet/prev-txs',
    cache: 'none',
    network: 'refused',
    hint: 'POST {"txids": [...]}',
    handler: (c, req) => c.prevTxs(req),
  },
  {
    method: 'GET',
    pattern: /^\/v1\/wallet\/tx\/([^/]+)(\/hex)?$/,
    doc: '/v1/wallet/tx/{txid}, …/hex',
    cache: 'none',
    network: 'refused',
    handler: (c, req, m) => c.walletTx(req, m),
  },
  {
    method: 'GET',
    pattern: /^\/v1\/transactions\/([^/]+)$/,
    doc: '/v1/transactions/{txid}',
    cache: 'state',
    network: 'refused',
    handler: (c, req, m) => c.transaction(req, m),
  },
  {
    method: 'GET',
    pattern: /^\/v1\/assets\/reference-nft\/([^/]+)$/,
    doc: '/v1/assets/reference-nft/{hash}',
    cache: 'state',
    network: 'refused',
    handler: (c, req, m) => c.referenceNft(req, m),
  },
];

/** The wallet routes alone (tests): `o`'s answers, 404 for other paths. */
export function explorerApiHandler(o: ExplorerApiOptions): Handler {
  const log = o.log ?? silentLogger;
  return tableHandler(WALLET_ROUTES, walletApi(o), { network: o.network, log, next: noRoute(log) });
}
