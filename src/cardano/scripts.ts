/**
 * Proxy scripts of Charms apps on Cardano. Non-token apps' charms sit at the proxy *spending*
 * script of their app set: the proxy script applied to `B(apps_hash)`, where `apps_hash` is
 * blake2b-256 of the concatenated CBOR `App`s (`[tag, 32 uints, 32 uints]`), sorted.
 */
import { blake2b } from '@noble/hashes/blake2.js';
import { CborWriter } from '../codec/cbor.js';
import { compareApps, type App } from '../model/primitives.js';
import { concatBytes } from '../util/bytes.js';
import { appliedProxyScript, scriptHash } from './script-template.js';

export { appliedProxyScript, scriptHash } from './script-template.js';
export { assetNameForApp, policyIdForApp } from './assets.js';

/** blake2b-256 of the concatenated CBOR of the apps, sorted (order-insensitive). */
export function appsHash(apps: App[]): Uint8Array {
  const w = new CborWriter();
  for (const a of [...apps].sort(compareApps)) {
    w.arrayHeader(3);
    w.text(a.tag);
    w.uintArray(a.identity);
    w.uintArray(a.vk);
  }
  return blake2b(w.finish(), { dkLen: 32 });
}

/** The applied proxy spending script of an app set. */
export const proxyScriptForApps = (apps: App[]): Uint8Array => appliedProxyScript(appsHash(apps));

/** Script hash (28 bytes) of the proxy spending script of an app set. */
export const proxyScriptHashForApps = (apps: App[]): Uint8Array => scriptHash(proxyScriptForApps(apps));

/** `util dest --apps`: the mainnet enterprise script address `0x71 ‖ proxy script hash`. */
export const proxyAddressForApps = (apps: App[]): Uint8Array => concatBytes(Uint8Array.of(0x71), proxyScriptHashForApps(apps));
