/**
 * `dest` bytes for `tx.coins[].dest`: the scriptPubKey of a Bitcoin address, the raw bytes of a
 * Cardano address, or the Cardano proxy-script address of a set of apps.
 */
import { CharmsError } from '../errors.js';
import { addressToScript } from '../bitcoin/address.js';
import { appFromString } from '../model/primitives.js';
import type { Chain } from '../model/request.js';
import { cardanoAddressBytes, cardanoProxyAddressForApps } from './cardano-dest.js';

export function destForAddress(addr: string, chain?: Chain): Uint8Array {
  if (chain === 'bitcoin') return addressToScript(addr).script;
  if (chain === 'cardano') return cardanoAddressBytes(addr);
  // auto-detect: Cardano first, then Bitcoin
  try {
    return cardanoAddressBytes(addr);
  } catch {
    /* not Cardano */
  }
  try {
    return addressToScript(addr).script;
  } catch (e) {
    throw new CharmsError('INVALID_INPUT', 'could not parse address as Bitcoin or Cardano; try specifying --chain', { cause: e });
  }
}

export function destForApps(apps: string[], chain?: Chain): Uint8Array {
  if (chain === 'bitcoin') throw new CharmsError('INVALID_INPUT', '--apps only works with Cardano');
  return cardanoProxyAddressForApps(apps.map((s, i) => appFromString(s, `--apps[${i}]`)));
}
