/**
 * Which chain a transaction is, and its Charms txid: the one place that tells Bitcoin and Cardano
 * transactions apart (plain `--prev-txs` hex, the query service's `PUT` body) and names them.
 */
import { CharmsError, type ErrorCode } from '../errors.js';
import { parseTx, txid as bitcoinTxid } from '../bitcoin/tx.js';
import { cardanoTxid, parseCardanoTx } from '../cardano/tx.js';
import { fromHex } from '../util/bytes.js';
import { txidToDisplay } from '../model/primitives.js';
import type { Chain, ChainTx } from '../model/request.js';

/**
 * The chain of raw transaction bytes (Bitcoin first, then Cardano) and its txid in display hex;
 * `code` error (`<what> is neither a Bitcoin nor a Cardano transaction`) when it is neither.
 */
export function identifyTx(bytes: Uint8Array, what = 'transaction hex', code: ErrorCode = 'INVALID_INPUT'): { chain: Chain; txid: string } {
  try {
    return { chain: 'bitcoin', txid: txidToDisplay(bitcoinTxid(parseTx(bytes))) };
  } catch {
    /* not Bitcoin */
  }
  try {
    return { chain: 'cardano', txid: txidToDisplay(cardanoTxid(parseCardanoTx(bytes))) };
  } catch (e) {
    throw new CharmsError(code, `${what} is neither a Bitcoin nor a Cardano transaction`, { cause: e });
  }
}

/** Chain auto-detection for plain transaction hex (`--prev-txs`): Bitcoin first, then Cardano. */
export const detectChain = (bytes: Uint8Array): Chain => identifyTx(bytes).chain;

/**
 * The Charms txid of a chain-tagged transaction, internal byte order (Bitcoin: double SHA-256;
 * Cardano: the body hash, reversed); `txidToDisplay` gives its display hex. `what` names the hex
 * in errors.
 */
export function chainTxid(t: ChainTx, what = 'prev_txs'): Uint8Array {
  const bytes = fromHex(t.hex, what);
  return t.chain === 'bitcoin' ? bitcoinTxid(parseTx(bytes)) : cardanoTxid(parseCardanoTx(bytes));
}

/**
 * For bytes that failed to parse as `chain`: the other chain when they parse as that one (so an
 * error can say "use --chain cardano"), else undefined.
 */
export function otherChainOf(bytes: Uint8Array, chain: Chain): Chain | undefined {
  try {
    if (chain === 'bitcoin') {
      parseCardanoTx(bytes);
      return 'cardano';
    }
    parseTx(bytes);
    return 'bitcoin';
  } catch {
    return undefined;
  }
}
