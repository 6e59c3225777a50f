/**
 * Where the charms index reads the chain from: a Bitcoin Core node (JSON-RPC, REST where faster)
 * or an Esplora API, behind one interface. Implementations check what they return: a block's
 * bytes hash to the hash that was asked for and match their merkle root (`parseBlock`), a
 * transaction's bytes hash to its txid. Hashes and txids are hex in display order (as RPC shows
 * them). Failures are CharmsErrors: UPSTREAM_UNAVAILABLE when no answer came, UPSTREAM_FAILED
 * when the source answered wrongly.
 *
 * Designed so that a Cardano follower can implement the same shape later (heights, hashes,
 * previous-hash links, raw blocks and a mempool are what any chain source gives).
 */
import type { Block } from '../bitcoin/block.js';
import type { BitcoinNetwork } from '../model/network.js';

export interface ChainTip {
  height: number;
  hash: string;
}

export interface HeaderInfo {
  hash: string;
  height: number;
  prevHash: string;
  time: number;
  /** False when the source knows the block but it is no longer on its best chain. */
  inBestChain: boolean;
}

export interface BlockSource {
  /** A name for logs and errors, credentials removed. */
  readonly name: string;
  /** The network the source serves (RPC: `getblockchaininfo`'s chain; Esplora: configured or inferred). */
  network(): Promise<BitcoinNetwork>;
  /** The best block. */
  tip(): Promise<ChainTip>;
  /** The hash of the best-chain block at `height`; undefined above the tip. */
  hashAt(height: number): Promise<string | undefined>;
  /** A header by hash; undefined when the source does not know the block. */
  header(hash: string): Promise<HeaderInfo | undefined>;
  /** The block with this hash, checked (hash, merkle root); UPSTREAM_FAILED when it does not check. */
  block(hash: string): Promise<Block>;
  /** Txids in the mempool. */
  mempoolTxids(): Promise<string[]>;
  /**
   * A transaction's bytes, checked against its txid; undefined when unknown. `blockHash`: the
   * block that holds it, when the caller knows (Bitcoin Core without `-txindex` finds a confirmed
   * transaction outside its wallet only in a block named to it; other sources need no hint).
   */
  rawTx(txid: string, blockHash?: string): Promise<Uint8Array | undefined>;
  /**
   * The BIP37 merkle block proving `txid` in the block that holds it (Bitcoin Core's
   * `gettxoutproof`, Esplora's `/tx/:txid/merkleblock-proof`); undefined when the source does not
   * know it confirmed. `blockHash`: that block, when the caller knows (Core without `-txindex`).
   */
  txOutProof?(txid: string, blockHash?: string): Promise<Uint8Array | undefined>;
  /** A block's 80-byte header; undefined when the source does not know the block. */
  rawHeader?(hash: string): Promise<Uint8Array | undefined>;
  /** Whether output `txid:vout` is spent, as far as the source can tell; undefined when it does not know the output. */
  outspend?(txid: string, vout: number): Promise<Outspend | undefined>;
}

/**
 * An output's spender as a source tells it: Esplora names it (`/tx/:txid/outspend/:vout`);
 * Bitcoin Core's `gettxout` tells unspent from spent only (then `txid` is absent).
 */
export type Outspend =
  | { spent: false }
  | {
      spent: true;
      txid?: string | undefined;
      vin?: number | undefined;
      confirmed?: boolean | undefined;
      height?: number | undefined;
      blockHash?: string | undefined;
    };
