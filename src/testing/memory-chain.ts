/**
 * An in-memory Bitcoin chain behind the BlockSource interface, for the indexer's tests: mine
 * blocks of given transactions, reorganise (any depth, same-height replacement), a mempool with
 * add / drop / replace, and faults (node down, garbage bytes, a wrong block for a hash, a block
 * that does not link). Blocks are real serialized blocks (`serializeBlock`), checked on the way
 * out by `parseBlock` as a real source does.
 */
import { parseBlock, serializeBlock, type Block } from '../bitcoin/block.js';
import { parseTx, serializeTx, txidHex, type BitcoinTx } from '../bitcoin/tx.js';
import { CharmsError } from '../errors.js';
import { fromHex, reversed } from '../util/bytes.js';
import { BITCOIN_NETWORKS, type BitcoinNetwork } from '../model/network.js';
import type { BlockSource, ChainTip, HeaderInfo } from '../sources/block-source.js';

const ZERO = '00'.repeat(32);

export type Fault = 'down' | 'garbage' | 'wrong-block' | 'unlinked' | undefined;

interface Stored {
  hash: string;
  height: number;
  prevHash: string;
  time: number;
  bytes: Uint8Array;
  txids: string[];
}

/** A coinbase paying 50 BTC to OP_TRUE, made unique by height and `nonce`. */
export function coinbase(height: number, nonce: number): Uint8Array {
  const tag = new Uint8Array(8);
  new DataView(tag.buffer).setUint32(0, height, true);
  new DataView(tag.buffer).setUint32(4, nonce, true);
  return serializeTx({
    version: 2,
    inputs: [{ txid: new Uint8Array(32), vout: 0xffffffff, scriptSig: Uint8Array.of(8, ...tag), sequence: 0xffffffff, witness: [] }],
    outputs: [{ value: 5_000_000_000n, script: Uint8Array.of(0x51) }],
    locktime: 0,
  });
}

/** A plain transaction spending `ins` (display txid:vout) to `outs` (script, sats): no spell. */
export function plainTx(ins: { txid: string; vout: number }[], outs: { script: Uint8Array; sats: bigint }[], locktime = 0): Uint8Array {
  const tx: BitcoinTx = {
    version: 2,
    inputs: ins.map((i) => ({ txid: reversed(fromHex(i.txid)), vout: i.vout, scriptSig: new Uint8Array(0), sequence: 0xfffffffd, witness: [] })),
    outputs: outs.map((o) => ({ value: o.sats, script: o.script })),
    locktime,
  };
  return serializeTx(tx);
}

export const txidOf = (raw: Uint8Array): string => txidHex(parseTx(raw));

export class MemoryChain implements BlockSource {
  readonly name = 'memory chain';
  private readonly blocks = new Map<string, Stored>();
  /** Best-chain hashes by height (index 0 = genesis). */
  best: string[] = [];
  readonly mempool = new Map<string, Uint8Array>();
  private readonly txs = new Map<string, Uint8Array>();
  fault: Fault;
  /** Calls answered, by method (tests check polling). */
  calls = 0;
  private unlinkedAt: { height: number; hash: string } | undefined;
  /** Makes every block unique (two branches with the same transactions differ); deterministic per chain. */
  private nonce = 0;

  constructor(
    private readonly net: BitcoinNetwork = BITCOIN_NETWORKS.regtest,
    private time = 1_700_000_000,
  ) {
    this.best.push(this.build(ZERO, 0, []).hash);
  }

  private build(prevHash: string, height: number, txs: Uint8Array[]): Stored {
    const all = [coinbase(height, ++this.nonce), ...txs];
    const bytes = serializeBlock({ prevHash, time: ++this.time }, all);
    const b = parseBlock(bytes);
    const s: Stored = { hash: b.header.hash, height, prevHash, time: b.header.time, bytes, txids: b.txs.map((t) => t.txid) };
    this.blocks.set(s.hash, s);
    b.txs.forEach((t) => this.txs.set(t.txid, Uint8Array.from(t.raw)));
    return s;
  }

  get height(): number {
    return this.best.length - 1;
  }

  /** Mines a block of `txs` on the tip; they leave the mempool. Returns its hash. */
  mine(txs: Uint8Array[] = []): string {
    const s = this.build(this.best[this.height]!, this.best.length, txs);
    this.best.push(s.hash);
    for (const id of s.txids) this.mempool.delete(id);
    return s.hash;
  }

  /**
   * Replaces the top `depth` blocks by `branch` (one array of txs per new block; a branch as long
   * as `depth` is a same-height replacement). Transactions of the old blocks that the new branch
   * does not contain return to the mempool when `toMempool` holds.
   */
  reorg(depth: number, branch: Uint8Array[][], toMempool = false): string[] {
    const old = this.best.splice(this.best.length - depth, depth);
    const hashes = branch.map((txs) => this.mine(txs));
    if (toMempool) {
      const kept = new Set(hashes.flatMap((h) => this.blocks.get(h)!.txids));
      for (const h of old) for (const id of this.blocks.get(h)!.txids.slice(1)) if (!kept.has(id)) this.mempool.set(id, this.txs.get(id)!);
    }
    return hashes;
  }

  /** Txids of the best chain's blocks (without coinbases). */
  bestTxids(): Set<string> {
    return new Set(this.best.flatMap((h) => this.blocks.get(h)!.txids.slice(1)));
  }

  mempoolAdd(raw: Uint8Array): string {
    const id = txidOf(raw);
    this.mempool.set(id, raw);
    this.txs.set(id, raw);
    return id;
  }

  mempoolDrop(txid: string): void {
    this.mempool.delete(txid);
  }

  /** Serves, once, a block at `height` (the next one) whose previous hash is not the best chain's. */
  serveUnlinked(height: number): void {
    const s = this.build('11'.repeat(32), height, []);
    this.unlinkedAt = { height, hash: s.hash };
  }

  private check(): void {
    this.calls++;
    if (this.fault === 'down') throw new CharmsError('UPSTREAM_UNAVAILABLE', 'memory chain: node down');
  }

  async network(): Promise<BitcoinNetwork> {
    this.check();
    return this.net;
  }

  async tip(): Promise<ChainTip> {
    this.check();
    return { height: this.height, hash: this.best[this.height]! };
  }

  async hashAt(height: number): Promise<string | undefined> {
    this.check();
    if (this.unlinkedAt?.height === height) return this.unlinkedAt.hash;
    return this.best[height];
  }

  async header(hash: string): Promise<HeaderInfo | undefined> {
    this.check();
    const s = this.blocks.get(hash);
    return s && { hash, height: s.height, prevHash: s.prevHash, time: s.time, inBestChain: this.best[s.height] === hash };
  }

  async block(hash: string): Promise<Block> {
    this.check();
    if (this.unlinkedAt?.hash === hash) this.unlinkedAt = undefined;
    const s = this.blocks.get(hash);
    if (!s) throw new CharmsError('UPSTREAM_FAILED', `memory chain: unknown block ${hash}`);
    if (this.fault === 'garbage')
      return parseBlock(
        Uint8Array.from({ length: 200 }, (_, i) => (i * 37) & 0xff),
        hash,
      );
    if (this.fault === 'wrong-block') return parseBlock(this.blocks.get(this.best[0]!)!.bytes, hash);
    return parseBlock(s.bytes, hash);
  }

  async mempoolTxids(): Promise<string[]> {
    this.check();
    return [...this.mempool.keys()];
  }

  async rawTx(txid: string): Promise<Uint8Array | undefined> {
    this.check();
    return this.txs.get(txid);
  }
}
