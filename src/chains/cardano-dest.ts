/**
 * `util dest` for Cardano (browser-safe):
 * - `cardanoAddressBytes(addr)`: the raw bytes of a bech32/bech32m Shelley address (base,
 *   pointer, enterprise, reward; any network), INVALID_INPUT otherwise (Byron included);
 * - `cardanoProxyAddressForApps(apps)`: the mainnet enterprise script address `0x71 ‖ hash` of
 *   the apps' proxy spending script (order-insensitive).
 */
import type { App } from '../model/primitives.js';
import { cardanoAddressBytes as addressBytes } from '../cardano/address.js';
import { proxyAddressForApps } from '../cardano/scripts.js';

export const cardanoAddressBytes = (addr: string): Uint8Array => addressBytes(addr);

export const cardanoProxyAddressForApps = (apps: App[]): Uint8Array => proxyAddressForApps(apps);
