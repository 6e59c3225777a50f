/** Chain auto-detection for plain transaction hex (`--prev-txs`): Bitcoin first, then Cardano. */
import { CharmsError } from '../errors.js';
import { parseTx } from '../bitcoin/tx.js';
import { parseCardanoTx } from '../cardano/tx.js';
import type { Chain } from '../model/request.js';

export function detectChain(bytes: Uint8Array): Chain {
  try {
    parseTx(bytes);
    return 'bitcoin';
  } catch {
    /* not Bitcoin */
  }
  try {
    parseCardanoTx(bytes);
    return 'cardano';
  } catch (e) {
    throw new CharmsError('INVALID_INPUT', 'transaction hex is neither a Bitcoin nor a Cardano transaction', { cause: e });
  }
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
