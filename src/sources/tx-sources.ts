/**
 * Where the spell-query service gets transactions by id:
 * - Bitcoin Core `getrawtransaction <txid>` through the one node client (bitcoin-node.ts; the node
 *   needs `-txindex` for arbitrary confirmed transactions); RPC error -5 means unknown;
 * - an Esplora-compatible REST API (`GET <base>/tx/<txid>/hex`, e.g. mempool.space's `/api`
 *   or blockstream.info's); 404 means unknown.
 *
 * Errors: NOT_FOUND for an unknown transaction; UPSTREAM_UNAVAILABLE (503) when no answer came
 * at all (connection refused, DNS, timeout, unreadable cookie file); UPSTREAM_FAILED (502) when
 * the source answered with a failure.
 *
 * Configuration (`sourceFromConfig` of `Settings.querySource`): `ESPLORA_URL`, or `BITCOIN_RPC_URL` with
 * `BITCOIN_RPC_COOKIE` (path of bitcoind's `.cookie` file, read at every call so node restarts
 * are picked up) or `BITCOIN_RPC_USER` / `BITCOIN_RPC_PASSWORD`.
 */
import { CharmsError } from '../errors.js';
import { parseTx, txidHex } from '../bitcoin/tx.js';
import { fromHex } from '../util/bytes.js';
import type { SourceConfig } from '../settings/settings.js';
import { SOURCE_ANSWER_LIMIT, rpcNodeFromConfig, type BitcoinNode } from './bitcoin-node.js';
import { EsploraClient } from './esplora.js';

export interface TxSource {
  readonly name: string;
  /** Raw transaction hex; NOT_FOUND when unknown, UPSTREAM_FAILED / UPSTREAM_UNAVAILABLE when failing / unreachable. */
  rawTx(txid: string): Promise<string>;
}

export class EsploraSource implements TxSource {
  readonly name: string;
  readonly client: EsploraClient;
  /** `base` may carry credentials (sent as Basic auth) and a query (e.g. `?token=`, kept on every call). */
  constructor(
    base: string | EsploraClient,
    timeoutMs = 10_000,
    private readonly answerLimit = SOURCE_ANSWER_LIMIT,
  ) {
    this.client = typeof base === 'string' ? new EsploraClient(base, timeoutMs) : base;
    this.name = this.client.name;
  }
  async rawTx(txid: string): Promise<string> {
    const a = await this.client.request(`/tx/${txid}/hex`, { limit: this.answerLimit });
    if (a.status === 404) throw new CharmsError('NOT_FOUND', `transaction ${txid} not found`);
    return this.client.expectOk(a).text();
  }
}

/** Transactions from a Bitcoin Core node (`getrawtransaction`; the node needs `-txindex`). */
export class NodeSource implements TxSource {
  readonly name: string;
  constructor(private readonly node: BitcoinNode) {
    this.name = node.name;
  }
  /** `blockHash`: look in that block (`getrawtransaction <txid> false <block>`: no `-txindex` needed). */
  async rawTx(txid: string, blockHash?: string): Promise<string> {
    let hex: unknown;
    try {
      hex = await this.node.call('getrawtransaction', blockHash === undefined ? [txid] : [txid, false, blockHash]);
    } catch (e) {
      if (e instanceof CharmsError && e.code === 'NOT_FOUND') throw new CharmsError('NOT_FOUND', `transaction ${txid} not found`, { cause: e });
      throw e;
    }
    if (typeof hex !== 'string') throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered without a transaction`);
    return hex;
  }
}

/** Esplora when `esploraUrl` is set, else Bitcoin Core RPC when `rpcUrl` is set, else none. */
export function sourceFromConfig(c: SourceConfig): TxSource | undefined {
  if (c.esploraUrl) return new EsploraSource(c.esploraUrl, c.timeoutMs);
  const node = rpcNodeFromConfig(c);
  return node && new NodeSource(node);
}

/** A transaction fetched from a source and checked to be the one asked for. */
export interface CheckedTx {
  /** Lowercase hex as the source answered it (trimmed). */
  hex: string;
  bytes: Uint8Array;
}

/**
 * The one fetch-and-check of a transaction by id (the query service, `spell check`, the index):
 * `source.rawTx(txid)`, then the answer must parse as a Bitcoin transaction hashing to `txid`.
 * UPSTREAM_FAILED when it does not (a source that lies is faulty or hostile); NOT_FOUND and
 * UPSTREAM_UNAVAILABLE from the source pass through.
 */
export async function fetchCheckedTx(source: TxSource, txid: string): Promise<CheckedTx> {
  const want = txid.toLowerCase();
  const hex = (await source.rawTx(want)).trim();
  let bytes: Uint8Array;
  let got: string;
  try {
    bytes = fromHex(hex, 'transaction');
    got = txidHex(parseTx(bytes));
  } catch (e) {
    throw new CharmsError('UPSTREAM_FAILED', `${source.name} answered something that is not a Bitcoin transaction for ${want}`, { cause: e });
  }
  if (got !== want) throw new CharmsError('UPSTREAM_FAILED', `${source.name} answered a different transaction for ${want}: it answered transaction ${got}`);
  return { hex, bytes };
}

/** `fetchCheckedTx`'s bytes, or undefined when the source does not know the transaction. */
export async function fetchCheckedTxIfKnown(source: TxSource, txid: string): Promise<Uint8Array | undefined> {
  try {
    return (await fetchCheckedTx(source, txid)).bytes;
  } catch (e) {
    if (e instanceof CharmsError && e.code === 'NOT_FOUND') return undefined;
    throw e;
  }
}
