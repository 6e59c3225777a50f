/**
 * An Esplora-compatible REST API as the chain source of the index and as the BTC side of its API:
 * `/blocks/tip/height`, `/block-height/:h`, `/block/:hash/header` (raw, so the hash is checked
 * here), `/block/:hash/status`, `/block/:hash/raw`, `/mempool/txids`, `/tx/:txid/hex`,
 * `/tx/:txid` (its fee), `/address/:a/utxo`, `/fee-estimates`, `POST /tx`. Esplora does not name its network: it is the
 * configured one, or recognised from the genesis block.
 */
import { CharmsError } from '../errors.js';
import { parseBlockHeader, type Block } from '../bitcoin/block.js';
import { fromHex } from '../util/bytes.js';
import type { BitcoinNetwork } from '../model/network.js';
import type { BlockSource, ChainTip, HeaderInfo, Outspend } from './block-source.js';
import {
  MAX_BLOCK_BYTES,
  checkedBlock,
  countFrom,
  hashArg,
  hashFrom,
  knownNetworkOfGenesis,
  networkOfGenesis,
  txidOfHex,
  type AddressUtxo,
  type BtcSource,
  type FeeEstimate,
} from './btc-source.js';
import { EsploraClient } from './esplora.js';
import { EsploraSource, fetchCheckedTxIfKnown } from './tx-sources.js';

/** A mempool list as JSON: 67 bytes per txid. */
const MEMPOOL_ANSWER_LIMIT = 96 * 1024 * 1024;
/** A transaction as JSON (every input's prevout and witness: about twice the largest transaction). */
const TX_JSON_ANSWER_LIMIT = 16 * 1024 * 1024;
/** An address's UTXO list (an exchange address can have many). */
const UTXO_ANSWER_LIMIT = 32 * 1024 * 1024;

export interface EsploraBlockSourceOptions {
  /** The network served; recognised from the genesis block when not given. */
  network?: BitcoinNetwork;
  timeoutMs?: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

export class EsploraBlockSource implements BlockSource, BtcSource {
  readonly name: string;
  readonly kind = 'esplora' as const;
  readonly client: EsploraClient;
  private readonly txs: EsploraSource;
  /** The configured network (a custom chain's genesis is no known one's: then this names it). */
  private readonly configured: BitcoinNetwork | undefined;
  private networkRead: Promise<BitcoinNetwork> | undefined;

  /** `base` as ESPLORA_URL: may carry credentials (Basic auth) and a query such as `?token=`. */
  constructor(base: string, o: EsploraBlockSourceOptions = {}) {
    this.client = new EsploraClient(base, o.timeoutMs);
    this.name = this.client.name;
    this.txs = new EsploraSource(this.client);
    this.configured = o.network;
  }

  private async text(path: string, limit = 4096): Promise<string | undefined> {
    const a = await this.client.request(path, { limit });
    if (a.status === 404) return undefined;
    return this.client.expectOk(a).text();
  }

  /**
   * The configured network, unless the genesis block is another known network's (a mainnet URL
   * with `--network testnet4` is refused, not indexed as testnet4); without one, the genesis
   * block's network. Asked once.
   */
  network(): Promise<BitcoinNetwork> {
    this.networkRead ??= (async () => {
      // the first call to a new source: an answer that is no Esplora's says what the URL should be
      const notEsplora = `is it an Esplora API base? (ESPLORA_URL / --esplora-url, e.g. https://mempool.space/testnet4/api with its /api)`;
      let genesis: string | undefined;
      try {
        genesis = await this.hashAt(0);
      } catch (e) {
        if (e instanceof CharmsError && e.code === 'UPSTREAM_FAILED') throw new CharmsError('UPSTREAM_FAILED', `${e.message}: ${notEsplora}`, { cause: e });
        throw e;
      }
      if (genesis === undefined) throw new CharmsError('UPSTREAM_FAILED', `${this.name} does not know block 0 (404): ${notEsplora}`);
      if (this.configured === undefined) return networkOfGenesis(genesis, this.name);
      const known = knownNetworkOfGenesis(genesis);
      if (known !== undefined && known.id !== this.configured.id)
        throw new CharmsError('CONFIG', `--network ${this.configured.name}, but ${this.name} serves ${known.name} (its genesis block ${genesis})`);
      return this.configured;
    })();
    this.networkRead.catch(() => (this.networkRead = undefined)); // a failed read is asked again
    return this.networkRead;
  }

  /** The tip height, then the hash at that height: a consistent pair even if a block comes between. */
  async tip(): Promise<ChainTip> {
    const text = await this.text('/blocks/tip/height');
    const height = text === undefined || !/^\d{1,10}$/.test(text) ? NaN : Number(text);
    const h = countFrom(height, this.name, 'a tip height');
    const hash = await this.hashAt(h);
    if (hash === undefined) throw new CharmsError('UPSTREAM_UNAVAILABLE', `${this.name} has no block at its own tip height ${h} (a reorg in progress?): retry`);
    return { height: h, hash };
  }

  async hashAt(height: number): Promise<string | undefined> {
    if (!Number.isSafeInteger(height) || height < 0) throw new CharmsError('INVALID_INPUT', `height ${height}: expected a non-negative integer`);
    const text = await this.text(`/block-height/${height}`);
    return text === undefined ? undefined : hashFrom(text, this.name, 'a block hash');
  }

  async header(hash: string): Promise<HeaderInfo | undefined> {
    const want = hashArg(hash, 'block hash');
    const hex = await this.text(`/block/${want}/header`, 1024);
    if (hex === undefined) return undefined;
    let raw: Uint8Array;
    try {
      raw = fromHex(hex, 'header', 80);
    } catch (e) {
      throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered a header that is not 80 bytes of hex`, { cause: e });
    }
    const h = parseBlockHeader(raw);
    if (h.hash !== want) throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered header ${h.hash} for block ${want}`);
    const status = await this.client.json(`/block/${want}/status`, { limit: 4096 });
    if (!isObject(status) || typeof status.in_best_chain !== 'boolean')
      throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered a block status without in_best_chain`);
    let height = status.height;
    if (height === undefined || height === null) {
      // a stale block's status has no height: the block's own record does
      const info = await this.client.json(`/block/${want}`, { limit: 64 * 1024 });
      if (info === undefined) return undefined;
      height = isObject(info) ? info.height : undefined;
    }
    return { hash: want, height: countFrom(height, this.name, 'a block height'), prevHash: h.prevHash, time: h.time, inBestChain: status.in_best_chain };
  }

  /** A hex answer's bytes (404 → undefined). */
  private async hexAt(path: string, what: string, bytes?: number): Promise<Uint8Array | undefined> {
    const hex = await this.text(path, 64 * 1024);
    if (hex === undefined) return undefined;
    try {
      return fromHex(hex, what, bytes);
    } catch (e) {
      throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered ${what} that is not hex`, { cause: e });
    }
  }

  /** `/tx/:txid/merkleblock-proof` (Bitcoin Core's gettxoutproof format). */
  txOutProof(txid: string): Promise<Uint8Array | undefined> {
    return this.hexAt(`/tx/${hashArg(txid, 'txid')}/merkleblock-proof`, 'a merkle block proof');
  }

  rawHeader(hash: string): Promise<Uint8Array | undefined> {
    return this.hexAt(`/block/${hashArg(hash, 'block hash')}/header`, 'a header', 80);
  }

  /** `/tx/:txid/outspend/:vout`. */
  async outspend(txid: string, vout: number): Promise<Outspend | undefined> {
    const v = await this.client.json(`/tx/${hashArg(txid, 'txid')}/outspend/${vout}`, { limit: 64 * 1024 });
    if (v === undefined) return undefined;
    if (!isObject(v) || typeof v.spent !== 'boolean') throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered an outspend without spent`);
    if (!v.spent) return { spent: false };
    const st = isObject(v.status) ? v.status : {};
    const confirmed = st.confirmed === true;
    return {
      spent: true,
      txid: hashFrom(v.txid, this.name, 'a spender txid'),
      vin: countFrom(v.vin, this.name, 'an input index'),
      confirmed,
      height: confirmed ? countFrom(st.block_height, this.name, 'a block height') : undefined,
      blockHash: confirmed ? hashFrom(st.block_hash, this.name, 'a block hash') : undefined,
    };
  }

  async block(hash: string): Promise<Block> {
    const want = hashArg(hash, 'block hash');
    const a = await this.client.request(`/block/${want}/raw`, { limit: MAX_BLOCK_BYTES, larger: 'larger than any block' });
    if (a.status === 404) throw new CharmsError('NOT_FOUND', `${this.name} does not know block ${want}`);
    this.client.expectOk(a);
    return checkedBlock(a.bytes, want, this.name);
  }

  async mempoolTxids(): Promise<string[]> {
    const list = await this.client.json('/mempool/txids', { limit: MEMPOOL_ANSWER_LIMIT });
    if (!Array.isArray(list)) throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered /mempool/txids without a list`);
    return list.map((t) => hashFrom(t, this.name, 'a mempool txid'));
  }

  async rawTx(txid: string): Promise<Uint8Array | undefined> {
    return fetchCheckedTxIfKnown(this.txs, hashArg(txid, 'txid'));
  }

  async addressUtxos(address: string): Promise<AddressUtxo[]> {
    const list = await this.client.json(`/address/${encodeURIComponent(address)}/utxo`, { limit: UTXO_ANSWER_LIMIT });
    if (list === undefined) throw new CharmsError('NOT_FOUND', `${this.name} does not know address ${address}`);
    if (!Array.isArray(list)) throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered the UTXOs of ${address} without a list`);
    return list.map((u: unknown) => {
      if (!isObject(u) || !isObject(u.status)) throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered a UTXO without a status`);
      const value = countFrom(u.value, this.name, 'a UTXO value');
      if (value > 21e14) throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered a UTXO value above 21 million BTC`);
      return {
        txid: hashFrom(u.txid, this.name, 'a UTXO txid'),
        vout: countFrom(u.vout, this.name, 'a UTXO vout'),
        value,
        height: u.status.confirmed === true ? countFrom(u.status.block_height, this.name, 'a UTXO height') : undefined,
      };
    });
  }

  /** `/fee-estimates` maps targets ("1", "2", …, "1008") to sat/vB: the estimate for the nearest target at or below the one asked. */
  async feeEstimate(targetBlocks: number): Promise<FeeEstimate | undefined> {
    const m = await this.client.json('/fee-estimates', { limit: 64 * 1024 });
    if (!isObject(m)) throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered /fee-estimates without an object`);
    let best: FeeEstimate | undefined;
    for (const [k, v] of Object.entries(m)) {
      const blocks = Number(k);
      if (!Number.isSafeInteger(blocks) || blocks < 1 || typeof v !== 'number' || !(v > 0) || !Number.isFinite(v)) continue;
      if (blocks <= targetBlocks && (!best || blocks > best.blocks)) best = { satPerVb: v, blocks };
    }
    return best;
  }

  async broadcast(txHex: string): Promise<string> {
    const txid = txidOfHex(txHex);
    const a = await this.client.request('/tx', { method: 'POST', body: txHex.trim(), limit: 64 * 1024 });
    if (a.status === 400) throw new CharmsError('INVALID_TX', `${this.name} rejected the transaction: ${a.text().slice(0, 300)}`);
    const got = hashFrom(this.client.expectOk(a).text(), this.name, 'a txid');
    if (got !== txid) throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered txid ${got} for transaction ${txid}`);
    return txid;
  }

  /** `/tx/:txid`'s `fee` (sats); undefined for a transaction Esplora does not know or an answer without a fee. */
  async txFee(txid: string): Promise<bigint | undefined> {
    const info = await this.client.json(`/tx/${hashArg(txid, 'txid')}`, { limit: TX_JSON_ANSWER_LIMIT });
    if (!isObject(info) || info.fee === undefined) return undefined;
    const fee = countFrom(info.fee, this.name, 'a fee');
    if (fee > 21e14) throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered a fee above 21 million BTC`);
    return BigInt(fee);
  }

  /** From `/tx/:txid`'s `status` and the tip's height. */
  async txConfirmations(txid: string): Promise<number | undefined> {
    const info = await this.client.json(`/tx/${hashArg(txid, 'txid')}`, { limit: TX_JSON_ANSWER_LIMIT });
    if (!isObject(info)) return undefined;
    if (!isObject(info.status)) throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered a transaction without a status`);
    if (info.status.confirmed !== true) return 0;
    const height = countFrom(info.status.block_height, this.name, 'a block height');
    return Math.max(0, (await this.tip()).height - height + 1);
  }

  async tipTime(): Promise<ChainTip & { time: number }> {
    const t = await this.tip();
    const h = await this.header(t.hash);
    if (!h) throw new CharmsError('UPSTREAM_UNAVAILABLE', `${this.name} no longer knows its tip ${t.hash}: retry`);
    return { ...t, time: h.time };
  }
}
