/**
 * The charms index's HTTP API (`/v1/...`), a Handler over an IndexReader, the follower's status and
 * the mempool overlay. Amounts are decimal strings (exact beyond 2^53, sums beyond u64); answers
 * depend only on the index state (deterministic orders everywhere) apart from wall-clock fields of
 * the status. Addresses are checked against the index's network (400 otherwise), and so is a
 * `?network=` a client adds.
 *
 *   GET  /v1/status                              200 synced, 503 over-cap reorg, lag > maxLag, node silent
 *   GET  /v1/addresses/{address}/balances        per app: confirmed, unconfirmed_in/out, utxos
 *   GET  /v1/addresses/{address}/utxos?mempool=1 confirmed charm UTXOs (+ pending receives)
 *   GET  /v1/addresses/{address}/history?cursor=&limit=
 *   POST /v1/addresses/balances                  {"addresses": [...]} (≤ 50)
 *   GET  /v1/outputs/{txid}:{vout}               spent ones too, beamed ones (beamed_to); 404 when it never held charms
 *   GET  /v1/txs/{txid}                          spell, outputs, beamed outputs, consumed charm outputs
 *   GET  /v1/apps/{app}?cursor=&limit=           supply and holders (app with / or %2F)
 */
import { decodeAddress, isTagValidFor, scriptToAddress, type BitcoinChainName } from '../bitcoin/address.js';
import { BITCOIN_NETWORKS, CARDANO_NETWORKS, networkNamed, type BitcoinNetwork } from '../model/network.js';
import { cardanoAddressBytes, cardanoAddressOfNetwork, cardanoAddressText } from '../cardano/address.js';
import { decodeCbor } from '../codec/cbor.js';
import { toJsonCompact } from '../codec/json.js';
import { publicText } from '../util/redact.js';
import { ValueMap } from '../codec/value.js';
import { CharmsError } from '../errors.js';
import { spellFromValue, spellToValue } from '../model/spell.js';
import { appFromString } from '../model/primitives.js';
import { errorResponse, readJsonBody, type Handler, type Req, type Res } from '../infra/http.js';
import { silentLogger, type Logger } from '../infra/log.js';
import type { BlockSource, ChainTip } from '../sources/block-source.js';
import type { FollowerStatus } from './follower.js';
import type { MempoolOverlay } from './mempool.js';
import { JSON_HEADERS, ok, RawJson, sameNetwork, type J } from './answer-json.js';
import { tableHandler, type Route } from './routes.js';
import { writerOf, type AmountRow, type BeamedOutputRow, type CharmOutputRow, type CharmOutputWrite, type IndexReader } from './store.js';

export const MAX_BATCH = 50;
const DEFAULT_PAGE = 50;
const MAX_PAGE = 500;
/** Status answers 503 when the index is more blocks than this behind the node. */
const DEFAULT_MAX_LAG = 6;
/**
 * Status answers 503 when the indexer's node has not answered for this long and its last poll
 * failed: the lag it reports is the last one known, which no longer says the index is current.
 */
const DEFAULT_MAX_NODE_SILENCE_MS = 60_000;
/** At most this many addresses' decoded scripts are kept (some 250 bytes each). */
const MAX_KEPT_SCRIPTS = 50_000;
/** At most this many apps' balances entry heads are kept (some 300 bytes each). */
const MAX_KEPT_APP_HEADS = 10_000;
/** `GET /v1/addresses/{address}/balances` (answered without a promise where the store can). */
const BALANCES_PATH = /^\/v1\/addresses\/([^/]+)\/balances$/;
/** The schema's INTEGER columns (heights, positions, output indexes) hold at most this. */
const MAX_INT32 = 2 ** 31 - 1;

export interface IndexApiOptions {
  store: IndexReader;
  /** The follower's status (absent with --api-only). */
  follower?: { status: FollowerStatus } | undefined;
  mempool?: MempoolOverlay | undefined;
  /** With --api-only: where the status reads the node's tip. */
  source?: BlockSource | undefined;
  network: string;
  /** The chain indexed (default bitcoin): a Cardano index takes and answers Cardano addresses. */
  chain?: 'bitcoin' | 'cardano' | undefined;
  version: string;
  maxLag?: number | undefined;
  /** See DEFAULT_MAX_NODE_SILENCE_MS. */
  maxNodeSilenceMs?: number | undefined;
  log?: Logger | undefined;
  startedAt?: number | undefined;
  now?: (() => number) | undefined;
  /**
   * The explorer's per-network status (explorer-routes.ts `networkStatus`), answered under
   * `networks.<network>` beside our fields, so that the explorer's webapp reads this status too.
   */
  explorerStatus?: ((o: { node: ChainTip | undefined; lastPollAt: number | undefined; healthy: boolean; now: number }) => Promise<J>) | undefined;
}

// the JSON answers' writer lives in answer-json.ts (below the route table); its names are the API's too
export { JSON_HEADERS, ok, RawJson, sameNetwork, type J };

const bad = (msg: string): CharmsError => new CharmsError('INVALID_INPUT', msg);
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const TXID = /^[0-9a-fA-F]{64}$/;

const chainName = (network: string): BitcoinChainName =>
  network === 'mainnet' || network === 'main' ? 'main' : network === 'testnet' ? 'test' : (network as BitcoinChainName);
const addrNet = (network: string): BitcoinNetwork => networkNamed('bitcoin', network === 'main' ? 'mainnet' : network) ?? BITCOIN_NETWORKS.testnet4;

/** The script an address of the index's chain pays to (one decode); INVALID_INPUT for anything else. */
function addressScript(address: unknown, chain: BitcoinChainName, network: string): Uint8Array {
  if (typeof address === 'string' && address.length <= 120) {
    try {
      const d = decodeAddress(address);
      if (isTagValidFor(d.tag, chain)) return d.script;
    } catch {
      /* answered below */
    }
  }
  throw bad(`${String(address).slice(0, 120)}: not a valid ${network} address`);
}

/**
 * How an index names the destinations its rows hold (`script`): on Bitcoin an address and its
 * scriptPubKey, on Cardano an address and its raw bytes (cardano/charm-moves.ts; Shelley bech32 of
 * the index's network id or Byron base58, as given). `scriptOf` is INVALID_INPUT for anything else.
 */
export interface AddressCodec {
  scriptOf(address: unknown): Uint8Array;
  addressOf(script: Uint8Array): string | null;
  /** Whether `address` is well-formed for the chain, of any of its networks (the explorer answers another network's empty). */
  wellFormed(address: string): boolean;
}

export function addressCodec(chain: 'bitcoin' | 'cardano' | undefined, network: string): AddressCodec {
  const cardanoNet = chain === 'cardano' ? (networkNamed('cardano', network) ?? CARDANO_NETWORKS.mainnet) : undefined;
  const decodes = (f: (a: string) => unknown) => (a: string) => {
    try {
      f(a);
      return true;
    } catch {
      return false;
    }
  };
  if (!cardanoNet) {
    const bchain = chainName(network);
    const net = addrNet(network);
    return {
      scriptOf: (a) => addressScript(a, bchain, network),
      addressOf: (script) => scriptToAddress(script, net) ?? null,
      wellFormed: decodes(decodeAddress),
    };
  }
  return {
    scriptOf: (a) => {
      if (typeof a !== 'string' || a.length > 200) throw bad(`${String(a).slice(0, 120)}: not a valid Cardano ${network} address`);
      try {
        return cardanoAddressOfNetwork(a, cardanoNet);
      } catch (e) {
        throw bad(`${a.slice(0, 120)}: not a valid Cardano ${network} address (${(e as Error).message})`);
      }
    },
    addressOf: (script) => cardanoAddressText(script),
    wellFormed: decodes((a) => (/^[a-z_]+1/.test(a) ? cardanoAddressBytes(a) : cardanoAddressOfNetwork(a, cardanoNet))),
  };
}

function charmJson(app: string, amount: bigint | null, data: Uint8Array | null): J {
  if (amount !== null) return { app, amount: amount.toString() };
  let text = 'null';
  try {
    text = toJsonCompact(decodeCbor(data!));
  } catch {
    /* data that our JSON printer cannot show: the CBOR is still there */
  }
  return { app, data: new RawJson(text), data_cbor: hex(data!) };
}

/** Groups rows of one output list (sorted by txid, vout, app) into outputs with their charms. */
function groupOutputs<T extends { txid: string; vout: number; app: string; amount: bigint | null; data: Uint8Array | null }>(
  rows: T[],
): { first: T; charms: J[] }[] {
  const out: { first: T; charms: J[] }[] = [];
  for (const r of rows) {
    const last = out[out.length - 1];
    if (last && last.first.txid === r.txid && last.first.vout === r.vout) last.charms.push(charmJson(r.app, r.amount, r.data));
    else out.push({ first: r, charms: [charmJson(r.app, r.amount, r.data)] });
  }
  return out;
}

function parseLimit(q: URLSearchParams): number {
  const raw = q.get('limit');
  if (raw === null) return DEFAULT_PAGE;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > MAX_PAGE) throw bad(`limit: expected an integer from 1 to ${MAX_PAGE}`);
  return n;
}

function parseHistoryCursor(raw: string | null): { height: number; txIndex: number } | undefined {
  if (raw === null) return undefined;
  const m = /^(\d{1,10})-(\d{1,10})$/.exec(raw);
  // heights and positions are 32-bit signed in the schema: a larger one is no cursor we issued
  if (!m || Number(m[1]) > MAX_INT32 || Number(m[2]) > MAX_INT32) throw bad('cursor: expected the next_cursor of a previous page');
  return { height: Number(m[1]), txIndex: Number(m[2]) };
}

function decoded(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw bad('bad %-escape in the path');
  }
}

// ------------------------------------------------------------------------------ the handler

/** The index API's context: its routes' functions over `o` (with the address scripts they keep). */
export type IndexApi = ReturnType<typeof indexApi>;

export function indexApi(o: IndexApiOptions) {
  const { store, mempool } = o;
  const now = o.now ?? Date.now;
  const startedAt = o.startedAt ?? now();
  const maxNodeSilenceMs = o.maxNodeSilenceMs ?? DEFAULT_MAX_NODE_SILENCE_MS;
  const maxLag = o.maxLag ?? DEFAULT_MAX_LAG;
  const cardanoNet = o.chain === 'cardano';
  const codec = addressCodec(o.chain, o.network);
  const addressOf = codec.addressOf;

  // the scripts of addresses asked lately (a decode is ~5 µs, a bech32 checksum): valid ones only;
  // two generations, so that the addresses asked again stay when the newer one is full
  let scripts = new Map<string, Uint8Array>();
  let older = new Map<string, Uint8Array>();
  const scriptOf = (address: string): Uint8Array => {
    let s = scripts.get(address);
    if (s === undefined) {
      s = older.get(address) ?? codec.scriptOf(address);
      if (scripts.size >= MAX_KEPT_SCRIPTS / 2) {
        older = scripts;
        scripts = new Map();
      }
      scripts.set(address, s);
    }
    return s;
  };

  // per app, the start of its balances entry (`{"app":…,"tag":…,"fungible":…,"confirmed":"`)
  const appHeads = new Map<string, string>();
  const appHead = (app: string): string => {
    let h = appHeads.get(app);
    if (h === undefined) {
      if (appHeads.size >= MAX_KEPT_APP_HEADS) appHeads.clear();
      h = `{"app":${JSON.stringify(app)},"tag":${JSON.stringify(app.split('/')[0]!)},"fungible":${app.startsWith('t/')},"confirmed":"`;
      appHeads.set(app, h);
    }
    return h;
  };

  /** Whether the pending transactions may spend a confirmed charm output (the balances then read outpoints). */
  const outpointsNeeded = (): boolean => mempool?.spendsConfirmedCharms() ?? false;

  /** The balances answer of `address` (its `script`) from the unspent rows paying it. */
  function balancesJson(address: string, script: Uint8Array, rows: AmountRow[]): RawJson {
    const per = new Map<string, { confirmed: bigint; inn: bigint; out: bigint; utxos: number }>();
    const entry = (app: string) => {
      let e = per.get(app);
      if (!e) per.set(app, (e = { confirmed: 0n, inn: 0n, out: 0n, utxos: 0 }));
      return e;
    };
    for (const r of rows) {
      const e = entry(r.app);
      const v = r.amount ?? 1n;
      e.confirmed += v;
      e.utxos++;
      if (r.vout >= 0 && mempool?.spender(r.txid, r.vout)) e.out += v;
    }
    if (mempool) for (const r of mempool.receivesOf(script)) entry(r.app).inn += r.amount ?? 1n;
    // written by hand (the hot answer): the same bytes as `write` gives for
    // {address, balances: [{app, tag, fungible, confirmed, unconfirmed_in, unconfirmed_out, utxos}]}
    let text = `{"address":${JSON.stringify(address)},"balances":[`;
    const apps = per.size > 1 ? [...per.keys()].sort((a, b) => (a < b ? -1 : 1)) : per.keys();
    let first = true;
    for (const app of apps) {
      const e = per.get(app)!;
      text += `${first ? '' : ','}${appHead(app)}${e.confirmed}","unconfirmed_in":"${e.inn}","unconfirmed_out":"${e.out}","utxos":${e.utxos}}`;
      first = false;
    }
    return new RawJson(`${text}]}`);
  }

  async function balances(address: string): Promise<RawJson> {
    const script = scriptOf(address);
    // outpoints only when a pending transaction may spend a confirmed charm output (a cheaper read)
    const outpoints = outpointsNeeded();
    return balancesJson(address, script, store.unspentAmountsNow?.(script, outpoints) ?? (await store.unspentAmounts(script, outpoints)));
  }

  /** `balances` without a promise where the store reads synchronously (SQLite); else undefined. */
  function balancesNow(address: string): RawJson | undefined {
    const script = scriptOf(address);
    const rows = store.unspentAmountsNow?.(script, outpointsNeeded());
    return rows && balancesJson(address, script, rows);
  }

  /** Where a confirmed output is: the fields every output answer starts with. */
  const placed = (first: CharmOutputRow | BeamedOutputRow) => ({
    txid: first.txid,
    vout: first.vout,
    sats: first.sats.toString(),
    address: addressOf(first.script),
    script_pubkey: hex(first.script),
    height: first.createdHeight,
    confirmed: true,
  });

  const outputJson = (first: CharmOutputRow, charms: J[]): J => ({
    ...placed(first),
    charms,
    spent: first.spent ? { txid: first.spent.txid, vin: first.spent.vin, height: first.spent.height } : null,
    pending_spend: first.spent ? null : (mempool?.spender(first.txid, first.vout) ?? null),
  });

  /** An output a spell beamed to another chain: what it carried, and where to (`beamed_to`, the destination hash). */
  const beamedJson = (first: BeamedOutputRow, charms: J[]): J => ({
    ...placed(first),
    beamed_to: first.beamedTo,
    charms,
  });

  const pendingJson = (first: CharmOutputWrite, charms: J[]): J => ({
    txid: first.txid,
    vout: first.vout,
    sats: first.sats.toString(),
    address: addressOf(first.script),
    script_pubkey: hex(first.script),
    height: null,
    confirmed: false,
    charms,
    spent: null,
    pending_spend: null,
  });

  async function status(): Promise<Res> {
    const tip = await store.tip();
    const meta = await store.meta();
    const f = o.follower?.status;
    let node: ChainTip | undefined = f?.node;
    let error = f?.error;
    if (!o.follower && o.source) {
      try {
        node = await o.source.tip();
      } catch (e) {
        error = { code: e instanceof CharmsError ? e.code : 'INTERNAL', message: (e as Error).message, at: Date.now() };
      }
    }
    const indexHeight = tip?.height ?? meta.startHeight - 1;
    const lag = node ? Math.max(0, node.height - indexHeight) : 0;
    // the follower's view; an --api-only reader sees the same from the node's tip it asked for
    const waitingForStart =
      f?.waitingForStart ??
      (!o.follower && node && !tip && node.height < meta.startHeight ? { startHeight: meta.startHeight, nodeHeight: node.height } : undefined);
    const nodeBehind =
      f?.nodeBehind ??
      (!o.follower && node && tip && node.height < tip.height ? { nodeHeight: node.height, indexHeight: tip.height, since: undefined } : undefined);
    const last = await store.lastReorg();
    // the follower's, or (an --api-only reader, a restarted indexer before its first poll) the recorded one
    const unrecoverable = f?.unrecoverable ?? (await store.unrecoverable());
    // an indexer that never reached its node cannot say it is in sync: not healthy yet
    const unreached = o.follower !== undefined && node === undefined;
    // nor one whose node went silent: the lag above is the last one known
    const silentMs = f?.error && f.nodeAnsweredAt !== undefined ? now() - f.nodeAnsweredAt : 0;
    const silent = silentMs > maxNodeSilenceMs;
    const healthy = !(unrecoverable || unreached || silent || lag > maxLag);
    const explorer = await o.explorerStatus?.({ node, lastPollAt: f?.lastPollAt, healthy, now: now() });
    const body: J = {
      chain: meta.chain,
      network: meta.network,
      version: o.version,
      mock: meta.mock,
      db: { engine: store.engine, schema_version: meta.schemaVersion, writes_waiting: writesWaiting() },
      mode: o.follower ? 'indexer' : 'api-only',
      node: node
        ? {
            height: node.height,
            hash: node.hash,
            slot: cardanoNet ? (f?.nodeSlot ?? null) : undefined,
            answered_at: f ? (f.nodeAnsweredAt ?? null) : undefined,
          }
        : null,
      index: tip
        ? { height: tip.height, hash: tip.hash, time: tip.time, slot: cardanoNet ? (tip.slot ?? null) : undefined }
        : { height: indexHeight, hash: null, time: null, slot: cardanoNet ? null : undefined },
      // Cardano: the node's tip slot minus the index's (slots are seconds since Shelley)
      lag_slots: cardanoNet ? (f?.nodeSlot !== undefined && tip?.slot !== undefined ? Math.max(0, f.nodeSlot - tip.slot) : null) : undefined,
      lag_blocks: lag,
      synced: node !== undefined && lag === 0 && !silent && !nodeBehind && !waitingForStart,
      node_behind: nodeBehind ? { node_height: nodeBehind.nodeHeight, index_height: nodeBehind.indexHeight, since: nodeBehind.since ?? null } : null,
      waiting: waitingForStart
        ? `waiting for the node to reach the start height ${waitingForStart.startHeight} (node at ${waitingForStart.nodeHeight})`
        : nodeBehind
          ? `node behind: the node is at ${nodeBehind.nodeHeight}, the index at ${nodeBehind.indexHeight}${f?.nodeBehind ? ' on the same chain' : ''}; waiting for it to catch up`
          : null,
      sync: f ? { rate_blocks_per_s: Math.round(f.rate * 100) / 100, eta_seconds: f.etaSeconds ?? null, last_poll_at: f.lastPollAt ?? null } : null,
      mempool: mempool ? { txs: mempool.size, spell_txs: mempool.spellTxs } : null,
      reorg: {
        last: last ? { fork_height: last.forkHeight, depth: last.depth, old_tip: last.oldTip, new_tip: last.newTip, at: last.at } : null,
        unrecoverable: unrecoverable ? { fork_height: unrecoverable.forkHeight, depth: unrecoverable.depth, at: unrecoverable.at } : null,
      },
      // no machine path (a cookie file, a database) or credential in an answer: the log has them
      error: error ? { code: error.code, message: publicText(error.message), at: error.at } : null,
      started_at: startedAt,
      networks: explorer === undefined ? undefined : { [meta.network]: explorer },
    };
    return ok(body, healthy ? 200 : 503);
  }

  /** Why the writer's transactions wait, while they do (SQLite: another connection holds the write lock), else null. */
  function writesWaiting(): J {
    const w = writerOf(store)?.writeWait?.();
    return w ? { reason: w.reason, since: w.since } : null;
  }

  /** POST /v1/addresses/balances {"addresses": [...]}. */
  async function balancesBatch(req: Req): Promise<Res> {
    let body;
    try {
      body = await readJsonBody(req, 64 * 1024, 'lossless');
    } catch (e) {
      if (e instanceof CharmsError && e.code !== 'INVALID_INPUT') throw e;
      throw new CharmsError('INVALID_INPUT', 'body must be JSON {"addresses": [...]}', { cause: e });
    }
    const list = body instanceof ValueMap ? body.get('addresses') : undefined;
    if (!Array.isArray(list) || list.some((a) => typeof a !== 'string')) throw bad('body must be JSON {"addresses": ["<address>", ...]}');
    if (list.length > MAX_BATCH) throw bad(`at most ${MAX_BATCH} addresses per request, got ${list.length}`);
    const addrs = list as string[];
    addrs.forEach(scriptOf); // all checked before any work
    const out: J[] = [];
    for (const a of addrs) out.push(await balances(a));
    return ok({ balances: out });
  }

  /** GET /v1/addresses/{address}/(balances|utxos|history). */
  async function addressInfo(req: Req, m: RegExpExecArray): Promise<Res> {
    const address = decoded(m[1]!);
    if (m[2] === 'balances') return ok(await balances(address));
    const script = scriptOf(address);
    if (m[2] === 'utxos') {
      const withMempool = req.query.get('mempool') === '1' || req.query.get('mempool') === 'true';
      const utxos: J[] = groupOutputs(await store.unspentByScript(script)).map((g) => outputJson(g.first, g.charms));
      if (withMempool && mempool) utxos.push(...groupOutputs(mempool.receivesOf(script)).map((g) => pendingJson(g.first, g.charms)));
      return ok({ address, utxos });
    }
    const limit = parseLimit(req.query);
    const cursor = parseHistoryCursor(req.query.get('cursor'));
    const items = await store.history(script, limit + 1, cursor);
    const page = items.slice(0, limit);
    const last = page[page.length - 1];
    return ok({
      address,
      items: page.map((h) => ({
        txid: h.txid,
        height: h.height,
        tx_index: h.txIndex,
        changes: h.changes.map((c) => ({ app: c.app, received: c.received.toString(), sent: c.sent.toString() })),
      })),
      next_cursor: items.length > limit && last ? `${last.height}-${last.txIndex}` : null,
    });
  }

  /** GET /v1/outputs/{txid}:{vout}. */
  async function output(_req: Req, path: RegExpExecArray): Promise<Res> {
    const m = /^([0-9a-fA-F]{64}):(\d{1,10})$/.exec(path[1]!);
    if (!m) throw bad('expected /v1/outputs/<txid>:<vout>');
    const txid = m[1]!.toLowerCase();
    const vout = Number(m[2]);
    if (vout > 0xffffffff) throw bad('vout: expected an output index (at most 4294967295)');
    // no transaction has 2^31 outputs (and PostgreSQL's INTEGER would refuse the number)
    const g = vout > MAX_INT32 ? undefined : groupOutputs(await store.output(txid, vout))[0];
    // beamed to the other chain: held by neither, answered with its destination
    const b = g || vout > MAX_INT32 ? undefined : groupOutputs((await store.beamedOf(txid)).filter((x) => x.vout === vout))[0];
    if (b) return ok(beamedJson(b.first, b.charms));
    if (!g) {
      const pending = mempool?.get(txid)?.outputs.filter((x) => x.vout === vout) ?? [];
      const pg = groupOutputs(pending)[0];
      if (pg) return ok(pendingJson(pg.first, pg.charms));
      throw new CharmsError('NOT_FOUND', `output ${txid}:${vout} never held charms (in this index)`);
    }
    return ok(outputJson(g.first, g.charms));
  }

  /** GET /v1/txs/{txid}. */
  async function txInfo(_req: Req, m: RegExpExecArray): Promise<Res> {
    if (!TXID.test(m[1]!)) throw bad('txid: expected 64 hex characters');
    const txid = m[1]!.toLowerCase();
    // the spell, its outputs and what it spent: one snapshot
    const [spell, outs, consumed, beamed] = await store.read(() =>
      Promise.all([store.spellTx(txid), store.outputsOf(txid), store.spentBy(txid), store.beamedOf(txid)]),
    );
    const consumedJson = groupOutputs(consumed).map((g) => ({ txid: g.first.txid, vout: g.first.vout, vin: g.first.spent!.vin, charms: g.charms }));
    if (spell) {
      const spellJson = new RawJson(toJsonCompact(spellToValue(spellFromValue(decodeCbor(spell.spell), false), true)));
      return ok({
        txid,
        confirmed: true,
        height: spell.height,
        tx_index: spell.txIndex,
        version: spell.version,
        verified: true,
        spell: spellJson,
        outputs: groupOutputs(outs).map((g) => outputJson(g.first, g.charms)),
        beamed: groupOutputs(beamed).map((g) => beamedJson(g.first, g.charms)),
        consumed: consumedJson,
      });
    }
    if (consumed.length > 0)
      return ok({
        txid,
        confirmed: true,
        height: consumed[0]!.spent!.height,
        verified: false,
        spell: null,
        burned: true,
        outputs: [],
        consumed: consumedJson,
      });
    const pending = mempool?.get(txid);
    if (pending && pending.outputs.length > 0)
      return ok({
        txid,
        confirmed: false,
        height: null,
        verified: true,
        spell: null,
        outputs: groupOutputs(pending.outputs).map((g) => pendingJson(g.first, g.charms)),
        consumed: [],
      });
    throw new CharmsError('NOT_FOUND', `transaction ${txid} neither carries a verified spell nor spends charms (in this index)`);
  }

  /** GET /v1/apps/{app}(/holders). */
  async function appInfo(req: Req, m: RegExpExecArray): Promise<Res> {
    const app = decoded(m[1]!);
    try {
      appFromString(app);
    } catch (e) {
      throw new CharmsError('INVALID_INPUT', `app: expected <tag>/<identity hex>/<vk hex>`, { cause: e });
    }
    const limit = parseLimit(req.query);
    const cursor = req.query.get('cursor');
    // a cursor is a holder's script (hex) as next_cursor gave it
    if (cursor !== null && !/^(?:[0-9a-f]{2}){1,10000}$/.test(cursor)) throw bad('cursor: expected the next_cursor of a previous page');
    // the first height, the supply and the holders it sums: one snapshot
    const [first, h] = await store.read(async () => {
      const at = await store.appFirstHeight(app);
      return [at, at === undefined ? undefined : await store.appHolders(app, cursor === null ? undefined : Buffer.from(cursor, 'hex'), limit + 1)] as const;
    });
    if (first === undefined || h === undefined) throw new CharmsError('NOT_FOUND', `app ${app} has no charms in this index`);
    const page = h.page.slice(0, limit);
    return ok({
      app,
      tag: app.split('/')[0]!,
      fungible: app.startsWith('t/'),
      first_height: first,
      supply: h.supply.toString(),
      holders_count: h.holders,
      holders: page.map((x) => ({ script_pubkey: hex(x.script), address: addressOf(x.script), amount: x.amount.toString(), utxos: x.utxos })),
      next_cursor: h.page.length > limit ? hex(page[page.length - 1]!.script) : null,
    });
  }

  return { status, balancesBatch, addressInfo, output, txInfo, appInfo, balancesNow };
}

/** The index's own routes over `indexApi`'s context. */
export const INDEX_ROUTES: readonly Route<IndexApi>[] = [
  { method: 'GET', pattern: /^\/v1\/status$/, doc: '/v1/status', cache: 'none', network: 'refused', handler: (c) => c.status() },
  {
    method: 'POST',
    pattern: /^\/v1\/addresses\/balances$/,
    doc: '/v1/addresses/balances',
    cache: 'none',
    network: 'refused',
    hint: 'POST {"addresses": [...]} to /v1/addresses/balances',
    handler: (c, req) => c.balancesBatch(req),
  },
  {
    method: 'GET',
    pattern: /^\/v1\/addresses\/([^/]+)\/(balances|utxos|history)$/,
    doc: '/v1/addresses/{address}/balances, /v1/addresses/{address}/utxos, /v1/addresses/{address}/history',
    cache: 'state',
    network: 'refused',
    handler: (c, req, m) => c.addressInfo(req, m),
  },
  {
    method: 'GET',
    pattern: /^\/v1\/outputs\/(.*)$/,
    doc: '/v1/outputs/{txid}:{vout}',
    cache: 'state',
    network: 'refused',
    handler: (c, req, m) => c.output(req, m),
  },
  { method: 'GET', pattern: /^\/v1\/txs\/([^/]+)$/, doc: '/v1/txs/{txid}', cache: 'state', network: 'refused', handler: (c, req, m) => c.txInfo(req, m) },
  {
    method: 'GET',
    pattern: /^\/v1\/apps\/(.+?)(\/holders)?$/,
    doc: '/v1/apps/{app}',
    cache: 'state',
    network: 'refused',
    handler: (c, req, m) => c.appInfo(req, m),
  },
];

/** The 404 of a path no route has. */
export const noRoute =
  (log: Logger): Handler =>
  (req) =>
    uncachedError(new CharmsError('NOT_FOUND', `no route for ${req.method} ${req.path}`), log);

/** The index's own API alone (tests, the bench): its routes, the hot balances read answered without a promise where the store can. */
export function indexApiHandler(o: IndexApiOptions): Handler {
  const log = o.log ?? silentLogger;
  const c = indexApi(o);
  const answered = tableHandler(INDEX_ROUTES, c, { network: o.network, log, next: noRoute(log) });
  // the same bytes as the route gives (api.test.ts compares the two paths)
  return (req) => {
    if ((req.method === 'GET' || req.method === 'HEAD') && o.store.unspentAmountsNow) {
      const m = BALANCES_PATH.exec(req.path);
      const asked = req.query.get('network');
      if (m && (asked === null || sameNetwork(asked, o.network)))
        try {
          const body = c.balancesNow(decoded(m[1]!));
          if (body) return ok(body);
        } catch (e) {
          return uncachedError(e, log);
        }
    }
    return answered(req);
  };
}

/** An error answered as `{error, code}`, never cached (the index moves on). */
function uncachedError(e: unknown, log: Logger): Res {
  const r = errorResponse(e, log);
  return { ...r, headers: { ...r.headers, 'cache-control': 'no-store' } };
}
