/**
 * A Bitcoin Core node as the chain source of the index and as the BTC side of its API, through
 * standard interfaces only: JSON-RPC (`getblockchaininfo`, `getblockhash`, `getblockheader`,
 * `getblock <hash> 0`, `getrawtransaction`, `getrawmempool`, `getmempoolentry`,
 * `estimatesmartfee`, `sendrawtransaction`) and, where the node enables it (`-rest`), REST
 * `/rest/block/<hash>.bin`, which sends a block as bytes instead of hex inside JSON. Whether REST
 * is on is probed once (`/rest/chaininfo.json`); without it blocks come through RPC.
 *
 * Every block is checked against the hash asked for and its merkle root before it is returned.
 */
import { CharmsError } from '../errors.js';
import type { Block } from '../bitcoin/block.js';
import { parseTx } from '../bitcoin/tx.js';
import { fromHex } from '../util/bytes.js';
import { fetchRead, readCappedBytes, rpcCodeOf, unreachable, type RpcNode } from './bitcoin-node.js';
import type { BitcoinNetwork } from '../model/network.js';
import type { BlockSource, ChainTip, HeaderInfo, Outspend } from './block-source.js';
import { MAX_BLOCK_BYTES, checkedBlock, countFrom, hashArg, hashFrom, networkOfCoreChain, txidOfHex, type BtcSource, type FeeEstimate } from './btc-source.js';
import { NodeSource, fetchCheckedTxIfKnown } from './tx-sources.js';

/** A mempool list is 67 bytes per txid as JSON: room for a million transactions and more. */
const MEMPOOL_ANSWER_LIMIT = 96 * 1024 * 1024;

/** A block as hex inside a JSON-RPC answer: twice its bytes plus the envelope. */
const BLOCK_HEX_ANSWER_LIMIT = 2 * MAX_BLOCK_BYTES + 4096;
/** A decoded transaction (`getrawtransaction … true`): its hex plus every input and output spelled out. */
const TX_VERBOSE_ANSWER_LIMIT = 32 * 1024 * 1024;

/** RPC error codes: invalid parameter (a height above the tip), rejected transactions. */
const RPC_INVALID_PARAMETER = -8;
const RPC_REJECTED = new Set([-25, -26, -27]);

export interface MempoolEntry {
  /** Unix seconds the node first saw it. */
  time: number;
  vsize: number;
  /** Fee in satoshis (Core answers BTC; converted exactly to the satoshi). */
  feeSats: number;
}

export interface RpcBlockSourceOptions {
  /** Use REST for blocks: true/false forces it; undefined probes once (default). */
  rest?: boolean;
}

const asObject = (v: unknown, name: string, what: string): Record<string, unknown> => {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new CharmsError('UPSTREAM_FAILED', `${name} answered ${what} that is not a JSON object`);
  return v as Record<string, unknown>;
};

/** BTC amounts as Core prints them (8 decimals) to satoshis, without float rounding surprises. */
const satsOfBtc = (v: unknown, name: string): number => {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 21e6) throw new CharmsError('UPSTREAM_FAILED', `${name} answered an amount that is not BTC`);
  return Math.round(v * 1e8);
};

export class RpcBlockSource implements BlockSource, BtcSource {
  readonly name: string;
  readonly kind = 'bitcoind' as const;
  private readonly txs: NodeSource;
  private networkCache: BitcoinNetwork | undefined;
  private restOn: Promise<boolean> | undefined;

  constructor(
    readonly node: RpcNode,
    o: RpcBlockSourceOptions = {},
  ) {
    this.name = node.name;
    this.txs = new NodeSource(node);
    if (o.rest !== undefined) this.restOn = Promise.resolve(o.rest);
  }

  private async info(): Promise<Record<string, unknown>> {
    return asObject(await this.node.call('getblockchaininfo', []), this.name, 'getblockchaininfo');
  }

  async network(): Promise<BitcoinNetwork> {
    this.networkCache ??= networkOfCoreChain((await this.info()).chain, this.name);
    return this.networkCache;
  }

  /** `getblockchaininfo` names the best block and its height in one answer (a consistent pair). */
  async tip(): Promise<ChainTip> {
    const i = await this.info();
    return { height: countFrom(i.blocks, this.name, 'a height'), hash: hashFrom(i.bestblockhash, this.name, 'a best block hash') };
  }

  async hashAt(height: number): Promise<string | undefined> {
    if (!Number.isSafeInteger(height) || height < 0) throw new CharmsError('INVALID_INPUT', `height ${height}: expected a non-negative integer`);
    try {
      return hashFrom(await this.node.call('getblockhash', [height]), this.name, 'a block hash');
    } catch (e) {
      if (rpcCodeOf(e) === RPC_INVALID_PARAMETER) return undefined; // above the tip
      throw e;
    }
  }

  async header(hash: string): Promise<HeaderInfo | undefined> {
    const want = hashArg(hash, 'block hash');
    let h: Record<string, unknown>;
    try {
      h = asObject(await this.node.call('getblockheader', [want, true]), this.name, 'getblockheader');
    } catch (e) {
      if (e instanceof CharmsError && e.code === 'NOT_FOUND') return undefined;
      throw e;
    }
    const got = hashFrom(h.hash, this.name, 'a header hash');
    if (got !== want) throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered header ${got} for block ${want}`);
    const height = countFrom(h.height, this.name, 'a header height');
    const confirmations = h.confirmations;
    if (typeof confirmations !== 'number' || !Number.isSafeInteger(confirmations))
      throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered a header without confirmations`);
    // the genesis block has no previousblockhash
    const prevHash = height === 0 && h.previousblockhash === undefined ? '0'.repeat(64) : hashFrom(h.previousblockhash, this.name, 'a previous block hash');
    // confirmations is -1 for a block no longer on the best chain
    return { hash: got, height, prevHash, time: countFrom(h.time, this.name, 'a header time'), inBestChain: confirmations >= 0 };
  }

  private restUrl(path: string): string {
    const u = new URL(this.node.url);
    u.pathname = path;
    u.search = '';
    return u.toString();
  }

  private async rest(path: string, limit: number, larger: string): Promise<{ status: number; bytes: Uint8Array }> {
    const headers: Record<string, string> = {};
    const auth = this.node.auth();
    if (auth !== undefined) headers.authorization = `Basic ${Buffer.from(auth).toString('base64')}`;
    try {
      const res = await fetchRead(this.restUrl(path), { headers, signal: AbortSignal.timeout(this.node.timeoutMs) });
      return { status: res.status, bytes: await readCappedBytes(res, `${this.name} REST`, limit, larger) };
    } catch (e) {
      if (e instanceof CharmsError) throw e;
      throw unreachable(this.name, e);
    }
  }

  /** Whether the node serves REST: asked once, remembered (a node without `-rest` answers 404 or 403). */
  private restEnabled(): Promise<boolean> {
    this.restOn ??= this.rest('/rest/chaininfo.json', 64 * 1024, 'larger than chain info').then(
      (r) => r.status === 200,
      (e: unknown) => {
        this.restOn = undefined; // no answer at all: ask again next time
        throw e;
      },
    );
    return this.restOn;
  }

  async block(hash: string): Promise<Block> {
    const want = hashArg(hash, 'block hash');
    if (await this.restEnabled()) {
      const r = await this.rest(`/rest/block/${want}.bin`, MAX_BLOCK_BYTES, 'larger than any block');
      if (r.status === 404) throw new CharmsError('NOT_FOUND', `${this.name} does not know block ${want}`);
      if (r.status !== 200) throw new CharmsError('UPSTREAM_FAILED', `${this.name} REST answered ${r.status} for block ${want}`);
      return checkedBlock(r.bytes, want, this.name);
    }
    const hex = await this.node.call('getblock', [want, 0], BLOCK_HEX_ANSWER_LIMIT);
    if (typeof hex !== 'string') throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered getblock without hex`);
    let bytes: Uint8Array;
    try {
      bytes = fromHex(hex, 'block');
    } catch (e) {
      throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered getblock with something that is not hex`, { cause: e });
    }
    return checkedBlock(bytes, want, this.name);
  }

  async mempoolTxids(): Promise<string[]> {
    const list = await this.node.call('getrawmempool', [false], MEMPOOL_ANSWER_LIMIT);
    if (!Array.isArray(list)) throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered getrawmempool without a list`);
    return list.map((t) => hashFrom(t, this.name, 'a mempool txid'));
  }

  /** A mempool transaction's entry; undefined when it is not in the mempool. */
  async mempoolEntry(txid: string): Promise<MempoolEntry | undefined> {
    let e: Record<string, unknown>;
    try {
      e = asObject(await this.node.call('getmempoolentry', [hashArg(txid, 'txid')]), this.name, 'getmempoolentry');
    } catch (err) {
      if (err instanceof CharmsError && (err.code === 'NOT_FOUND' || rpcCodeOf(err) === -5)) return undefined;
      throw err;
    }
    const fees = e.fees === null || typeof e.fees !== 'object' ? {} : (e.fees as Record<string, unknown>);
    return { time: countFrom(e.time, this.name, 'a mempool time'), vsize: countFrom(e.vsize, this.name, 'a vsize'), feeSats: satsOfBtc(fees.base, this.name) };
  }

  async rawTx(txid: string, blockHash?: string): Promise<Uint8Array | undefined> {
    const id = hashArg(txid, 'txid');
    if (blockHash === undefined) return fetchCheckedTxIfKnown(this.txs, id);
    const block = hashArg(blockHash, 'block hash');
    return fetchCheckedTxIfKnown({ name: this.name, rawTx: (t) => this.txs.rawTx(t, block) }, id);
  }

  /** `getrawtransaction <txid> true`'s `confirmations` (absent for a mempool transaction); undefined when the node does not know it. */
  async txConfirmations(txid: string): Promise<number | undefined> {
    let r: Record<string, unknown>;
    try {
      r = asObject(await this.node.call('getrawtransaction', [hashArg(txid, 'txid'), true], TX_VERBOSE_ANSWER_LIMIT), this.name, 'getrawtransaction');
    } catch (err) {
      if (err instanceof CharmsError && (err.code === 'NOT_FOUND' || rpcCodeOf(err) === -5)) return undefined;
      throw err;
    }
    return r.confirmations === undefined ? 0 : countFrom(r.confirmations, this.name, 'a confirmation count');
  }

  /** A call whose RPC_INVALID_ADDRESS_OR_KEY (-5: no such transaction or block) is undefined. */
  private async callKnown(method: string, params: readonly unknown[]): Promise<unknown> {
    try {
      return await this.node.call(method, params);
    } catch (e) {
      if ((e instanceof CharmsError && e.code === 'NOT_FOUND') || rpcCodeOf(e) === -5) return undefined;
      throw e;
    }
  }

  private hexAnswer(v: unknown, what: string, bytes?: number): Uint8Array {
    if (typeof v !== 'string') throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered ${what} without hex`);
    try {
      return fromHex(v, what, bytes);
    } catch (e) {
      throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered ${what} with something that is not hex`, { cause: e });
    }
  }

  /** `gettxoutproof [txid] (blockhash)`. */
  async txOutProof(txid: string, blockHash?: string): Promise<Uint8Array | undefined> {
    const params: unknown[] = [[hashArg(txid, 'txid')]];
    if (blockHash !== undefined) params.push(hashArg(blockHash, 'block hash'));
    const v = await this.callKnown('gettxoutproof', params);
    return v === undefined ? undefined : this.hexAnswer(v, 'gettxoutproof');
  }

  /** `getblockheader <hash> false`. */
  async rawHeader(hash: string): Promise<Uint8Array | undefined> {
    const v = await this.callKnown('getblockheader', [hashArg(hash, 'block hash'), false]);
    return v === undefined ? undefined : this.hexAnswer(v, 'getblockheader', 80);
  }

  /**
   * `gettxout <txid> <vout> true` (the mempool counts): an answer is unspent; none is spent when
   * the node knows the transaction and it has that output (Core does not name the spender), and
   * unknown otherwise.
   */
  async outspend(txid: string, vout: number): Promise<Outspend | undefined> {
    const id = hashArg(txid, 'txid');
    const out = await this.node.call('gettxout', [id, vout, true]);
    if (out !== null && out !== undefined) return { spent: false };
    const raw = await this.rawTx(id);
    if (!raw) return undefined;
    return vout < parseTx(raw).outputs.length ? { spent: true } : undefined;
  }

  async feeEstimate(targetBlocks: number): Promise<FeeEstimate | undefined> {
    const r = asObject(await this.node.call('estimatesmartfee', [targetBlocks]), this.name, 'estimatesmartfee');
    // without enough data Core answers {errors: [...], blocks} and no feerate
    if (r.feerate === undefined) return undefined;
    if (typeof r.feerate !== 'number' || !(r.feerate > 0) || r.feerate > 1)
      throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered a fee rate that is not BTC/kvB`);
    // BTC per 1000 vbytes → sat/vB
    return { satPerVb: Math.round(r.feerate * 1e8) / 1000, blocks: countFrom(r.blocks, this.name, 'a confirmation target') };
  }

  async broadcast(txHex: string): Promise<string> {
    const txid = txidOfHex(txHex);
    let got: unknown;
    try {
      got = await this.node.call('sendrawtransaction', [txHex.trim()]);
    } catch (e) {
      const code = rpcCodeOf(e);
      if (code !== undefined && RPC_REJECTED.has(code))
        throw new CharmsError('INVALID_TX', `${this.name} rejected the transaction: ${(e as Error).message}`, { cause: e });
      throw e;
    }
    if (hashFrom(got, this.name, 'a txid') !== txid)
      throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered txid ${String(got)} for transaction ${txid}`);
    return txid;
  }

  async tipTime(): Promise<ChainTip & { time: number }> {
    const t = await this.tip();
    const h = await this.header(t.hash);
    if (!h) throw new CharmsError('UPSTREAM_FAILED', `${this.name} does not know its own best block ${t.hash}`);
    return { ...t, time: h.time };
  }
}
