/**
 * Cardano policy ids and proxy-script addresses of Charms apps. Token (`t`) and NFT (`n`) charms
 * are native tokens: policy = the proxy script applied to the app vk; asset name = CIP-67 label ‖
 * identity[4..32]. Other apps live at the proxy *spending* script of their app set.
 */
import { blake2b } from '@noble/hashes/blake2.js';
import { CborWriter } from '../codec/cbor.js';
import { compareApps, type App } from '../model/primitives.js';
import { concatBytes, fromHex } from '../util/bytes.js';
import { PROXY_SCRIPT_PREFIX_HEX } from './scripts-data.js';

const PREFIX = fromHex(PROXY_SCRIPT_PREFIX_HEX);
const LABEL_FT = fromHex('0014df10'); // CIP-67 label 333
const LABEL_NFT = fromHex('000de140'); // CIP-67 label 222

/** The applied proxy script (CBOR-wrapped flat) for a 32-byte parameter. */
export const appliedProxyScript = (param: Uint8Array): Uint8Array => concatBytes(PREFIX, param, Uint8Array.of(0x00, 0x01));

/** Plutus V3 script hash: blake2b-224(0x03 ‖ script bytes). */
export const scriptHash = (script: Uint8Array): Uint8Array => blake2b(concatBytes(Uint8Array.of(0x03), script), { dkLen: 28 });

export const policyIdForApp = (app: App): Uint8Array => scriptHash(appliedProxyScript(app.vk));

/** Token and NFT apps are native tokens; other tags are not. */
export const isTokenApp = (app: App): boolean => app.tag === 't' || app.tag === 'n';

export function assetNameForApp(app: App): Uint8Array {
  return concatBytes(app.tag === 'n' ? LABEL_NFT : LABEL_FT, app.identity.subarray(4));
}

/** blake2b-256 of the concatenated CBOR of the apps, sorted. */
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

export const proxyScriptHashForApps = (apps: App[]): Uint8Array => scriptHash(appliedProxyScript(appsHash(apps)));

/** `util dest --apps`: the mainnet enterprise script address of the apps' proxy script. */
export const proxyAddressForApps = (apps: App[]): Uint8Array => concatBytes(Uint8Array.of(0x71), proxyScriptHashForApps(apps));
