/**
 * Cardano address bytes and the apps' proxy-script address. Placeholder until the Cardano
 * read side lands (issue: Cardano): both say clearly that Cardano is not supported yet.
 */
import { CharmsError } from '../errors.js';
import type { App } from '../model/primitives.js';

export function cardanoAddressBytes(_addr: string): Uint8Array {
  throw new CharmsError('UNSUPPORTED', 'Cardano addresses are not supported yet');
}

export function cardanoProxyAddressForApps(_apps: App[]): Uint8Array {
  throw new CharmsError('UNSUPPORTED', 'Cardano proxy-script addresses (--apps) are not supported yet');
}
