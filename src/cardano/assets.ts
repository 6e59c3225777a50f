/**
 * Charms as Cardano native tokens (CNTs). Token (`t`) and NFT (`n`) charms are native assets:
 * - policy id = script hash of the app proxy script applied to the app's vk (so apps sharing a
 *   vk share a policy);
 * - asset name = CIP-67 label ‖ identity[4..32] (28 bytes): label 333 `0014df10` for tokens,
 *   label 222 `000de140` for NFTs (two identities differing only in their first 4 bytes collide);
 * - quantity = the token amount, or 1 for an NFT.
 * Every other app tag is "non-token": its charms sit at the proxy script address of the app set.
 */
import { CharmsError } from '../errors.js';
import { compareApps, type App, type Data } from '../model/primitives.js';
import { concatBytes, fromHex, toHex } from '../util/bytes.js';
import { appliedProxyScript, scriptHash } from './script-template.js';
import type { Assets } from './tx.js';

/** CIP-67 label 333 (fungible token). */
const CIP67_FT_LABEL = fromHex('0014df10');
/** CIP-67 label 222 (NFT). */
export const CIP67_NFT_LABEL = fromHex('000de140');

/** Token and NFT apps are native tokens; other tags are not. */
export const isTokenApp = (app: App): boolean => app.tag === 't' || app.tag === 'n';

const policyCache = new Map<string, Uint8Array>();

/** The app's minting policy id (28 bytes): hash of the proxy script applied to `B(app.vk)`. */
export function policyIdForApp(app: App): Uint8Array {
  const key = toHex(app.vk);
  let p = policyCache.get(key);
  if (p === undefined) {
    p = scriptHash(appliedProxyScript(app.vk));
    if (policyCache.size > 4096) policyCache.clear();
    policyCache.set(key, p);
  }
  return Uint8Array.from(p);
}

/** The asset name (32 bytes) of a token or NFT app; other apps have none. */
export function assetNameForApp(app: App): Uint8Array {
  if (!isTokenApp(app)) throw new CharmsError('INVALID_INPUT', `app tag ${JSON.stringify(app.tag)} has no Cardano asset (only t and n do)`);
  return concatBytes(app.tag === 'n' ? CIP67_NFT_LABEL : CIP67_FT_LABEL, app.identity.subarray(4));
}

/** The CNT quantity standing for one charm: the token amount (a u64), or 1 for an NFT. */
export function tokenQuantity(app: App, data: Data): bigint {
  if (app.tag === 'n') return 1n;
  if (typeof data !== 'bigint' || data < 0n || data >= 1n << 64n)
    throw new CharmsError('INVALID_SPELL', `token charm of ${app.tag}/… must hold an amount (u64)`);
  return data;
}

/**
 * The CNTs expected for one output's charms (the reference's `multi_asset`): one entry per token
 * or NFT app, in app order; colliding (policy, name) pairs keep the LAST app's quantity, exactly
 * as the reference's `MultiAsset::set` does.
 */
export function expectedTokens(charms: [App, Data][]): Assets {
  const out: Assets = new Map();
  for (const [app, data] of [...charms].sort(([a], [b]) => compareApps(a, b))) {
    if (!isTokenApp(app)) continue;
    const p = toHex(policyIdForApp(app));
    const m = out.get(p) ?? new Map<string, bigint>();
    m.set(toHex(assetNameForApp(app)), tokenQuantity(app, data));
    out.set(p, m);
  }
  return out;
}
