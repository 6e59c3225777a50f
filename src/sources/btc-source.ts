/**
 * The plain-Bitcoin side the wallet-compatible API needs besides charms: an address's UTXOs, a fee
 * estimate, broadcasting a transaction and the tip's time. Served by Esplora (all of it) or by
 * Bitcoin Core (no address index: `addressUtxos` is absent, and callers must say the answer is
 * unavailable rather than invent one). Also the checks both block sources share.
 */
import { CharmsError } from '../errors.js';
import { parseBlock, type Block } from '../bitcoin/block.js';
import { parseTx, txidHex } from '../bitcoin/tx.js';
import { fromHex } from '../util/bytes.js';
import { BITCOIN_NETWORKS, bitcoinNetworkOfCoreChain, type BitcoinNetwork, type BitcoinNetworkName } from '../model/network.js';
import type { ChainTip, Outspend } from './block-source.js';

export interface AddressUtxo {
  txid: string;
  vout: number;
  /** Satoshis (at most 21e14, exact as a number). */
  value: number;
  /** Height of the confirming block; undefined while in the mempool. */
  height: number | undefined;
}

export interface FeeEstimate {
  /** Fee rate in sat/vB. */
  satPerVb: number;
  /** The confirmation target the estimate is for (the source may widen the one asked). */
  blocks: number;
}

export interface BtcSource {
  readonly name: string;
  readonly kind: 'bitcoind' | 'esplora';
  /** An address's UTXOs, mempool included. Absent on Bitcoin Core, which has no address index. */
  addressUtxos?(address: string): Promise<AddressUtxo[]>;
  /** A fee rate for confirmation within `targetBlocks`; undefined when the source has no estimate yet. */
  feeEstimate(targetBlocks: number): Promise<FeeEstimate | undefined>;
  /** Sends a signed transaction; resolves with its txid. INVALID_TX when the source rejects it. */
  broadcast(txHex: string): Promise<string>;
  /** The best block and its header time (unix seconds). */
  tipTime(): Promise<ChainTip & { time: number }>;
  /**
   * A transaction's fee in sats, when the source knows it without further work (Esplora's
   * `/tx/:txid` carries it); undefined when it does not. Absent on Bitcoin Core (the fee needs
   * the previous outputs there).
   */
  txFee?(txid: string): Promise<bigint | undefined>;
  /**
   * A transaction's confirmations as the source sees it (0: unconfirmed); undefined when the
   * source does not know the transaction (Bitcoin Core without `-txindex` knows only its mempool
   * and its wallet's).
   */
  txConfirmations?(txid: string): Promise<number | undefined>;
  /** Whether an output is spent (block-source.ts `Outspend`); undefined when the source does not know it. */
  outspend?(txid: string, vout: number): Promise<Outspend | undefined>;
}

/** The network of a Bitcoin Core chain name (`getblockchaininfo.chain`); UPSTREAM_FAILED for a name we do not know. */
export function networkOfCoreChain(chain: unknown, name: string): BitcoinNetwork {
  const n = typeof chain === 'string' ? bitcoinNetworkOfCoreChain(chain) : undefined;
  if (!n) throw new CharmsError('UPSTREAM_FAILED', `${name} serves an unknown chain ${JSON.stringify(chain)?.slice(0, 40)}`);
  return n;
}

/** Genesis block hashes (display order): how a source that does not name its network is recognised. */
export const GENESIS: Record<BitcoinNetworkName, string> = {
  mainnet: '000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f',
  testnet: '000000000933ea01ad0ee984209779baaec3ced90fa3f408719526f8d77f4943',
  testnet4: '00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043',
  signet: '00000008819873e925422c1ff0f99f7cc9bbb232af63a077a480a3633bee1ef6',
  regtest: '0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206',
};

/** The network whose genesis block `hash` is, if a known one's. */
export const knownNetworkOfGenesis = (hash: string): BitcoinNetwork | undefined => {
  const name = (Object.keys(GENESIS) as BitcoinNetworkName[]).find((k) => GENESIS[k] === hash);
  return name === undefined ? undefined : BITCOIN_NETWORKS[name];
};

export function networkOfGenesis(hash: string, name: string): BitcoinNetwork {
  const n = knownNetworkOfGenesis(hash);
  if (!n)
    throw new CharmsError(
      'UPSTREAM_FAILED',
      `${name}: genesis block ${hash} is no known network's (a custom chain): name its network with --network (${Object.keys(GENESIS).join(', ')})`,
    );
  return n;
}

/** Largest serialized block (MAX_BLOCK_SERIALIZED_SIZE): no answer for a block may be larger. */
export const MAX_BLOCK_BYTES = 4_000_000;

const HASH = /^[0-9a-f]{64}$/;

/** A 64-hex hash or txid from a source, lowercased; UPSTREAM_FAILED otherwise. */
export function hashFrom(v: unknown, name: string, what: string): string {
  if (typeof v !== 'string' || !HASH.test(v.toLowerCase())) throw new CharmsError('UPSTREAM_FAILED', `${name} answered ${what} that is not a 64-hex hash`);
  return v.toLowerCase();
}

/** A non-negative safe integer from a source; UPSTREAM_FAILED otherwise. */
export function countFrom(v: unknown, name: string, what: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
    throw new CharmsError('UPSTREAM_FAILED', `${name} answered ${what} that is not a non-negative integer`);
  return v;
}

/** A hash or txid given by a caller: 64 hex characters, lowercased (INVALID_INPUT otherwise). */
export function hashArg(v: string, what: string): string {
  if (!HASH.test(v.toLowerCase())) throw new CharmsError('INVALID_INPUT', `${what}: expected 64 hex characters`);
  return v.toLowerCase();
}

/** The block checked against the hash asked for and its merkle root, errors naming the source. */
export function checkedBlock(bytes: Uint8Array, hash: string, name: string): Block {
  try {
    return parseBlock(bytes, hash);
  } catch (e) {
    if (e instanceof CharmsError) throw new CharmsError('UPSTREAM_FAILED', `${name}: ${e.message}`, { cause: e });
    throw e;
  }
}

/** The txid of a transaction about to be broadcast (INVALID_TX when it is not one). */
export function txidOfHex(txHex: string): string {
  try {
    return txidHex(parseTx(fromHex(txHex.trim(), 'transaction')));
  } catch (e) {
    throw new CharmsError('INVALID_TX', `not a Bitcoin transaction: ${(e as Error).message}`, { cause: e });
  }
}
