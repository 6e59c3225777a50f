/**
 * Scrolls outputs on Bitcoin: outputs listed in `spell.tx.scrolls` must pay a script controlled by
 * the Scrolls Bitcoin canister. The canister answers `addresses(tx_in_0, out_is)` with a map
 * output index → P2WPKH scriptPubKey (hex text) and a BIP-340 signature over
 * SHA-256(CBOR(map)), the map written as ciborium writes a `BTreeMap<u32, String>` (ascending
 * uint keys, text values). This module checks such a signed map; fetching it is `scrolls/`'s job.
 */
import { schnorr } from '@noble/curves/secp256k1.js';
import { sha256 } from '../util/sha256.js';
import { CharmsError } from '../errors.js';
import { CborWriter } from '../codec/cbor.js';
import { fromHex, toHex } from '../util/bytes.js';
import type { NormalizedSpell } from '../model/spell.js';

/**
 * The x-only secp256k1 key of the Scrolls Bitcoin canister (`rpgc6-oqaaa-aaaak-qy3uq-cai`,
 * threshold Schnorr `key_1`, derivation path `["sign"]`), as published by the protocol.
 */
export const SCROLLS_ADDRS_PUBKEY_HEX = '30109b1c3c8dc1812de6267cd864a5f1f794330c6e43c25f971e6d0ae9440e3b';

/** The canister's answer: output index → scriptPubKey hex (exactly as signed), signature hex. */
export interface SignedScrollOutputs {
  scriptPubkeys: Map<number, string>;
  signature: string;
}

/** At most this many outputs per call (the canister's own limit). */
export const MAX_SCROLL_OUTPUTS = 256;

/** The signed message: CBOR of the map with ascending u32 keys and the hex texts as given. */
export function scrollOutputsMessage(scriptPubkeys: Map<number, string>): Uint8Array {
  const keys = [...scriptPubkeys.keys()].sort((a, b) => a - b);
  const w = new CborWriter();
  w.head(5, keys.length);
  for (const k of keys) {
    w.head(0, k);
    const text = new TextEncoder().encode(scriptPubkeys.get(k)!);
    w.head(3, text.length);
    w.raw(text);
  }
  return w.finish();
}

const refuse = (msg: string) => new CharmsError('INVALID_SPELL', msg);

/** True for `OP_0 <20 bytes>`: the only script the canister derives. */
const isP2wpkh = (s: Uint8Array): boolean => s.length === 22 && s[0] === 0x00 && s[1] === 0x14;

/**
 * Throws unless the signature verifies under `pubkey` (x-only, 32 bytes) and every script is a
 * P2WPKH script: never accept an empty or odd script for an output that holds charms.
 */
export function verifySignedScrollOutputs(s: SignedScrollOutputs, pubkey: Uint8Array = fromHex(SCROLLS_ADDRS_PUBKEY_HEX)): void {
  if (s.scriptPubkeys.size > MAX_SCROLL_OUTPUTS) throw refuse(`signed Scrolls map has ${s.scriptPubkeys.size} entries (max ${MAX_SCROLL_OUTPUTS})`);
  for (const [i, hex] of s.scriptPubkeys) {
    let script: Uint8Array;
    try {
      script = fromHex(hex, `scriptPubKey of Scrolls output #${i}`);
    } catch {
      throw refuse(`signed Scrolls map: output #${i} has a scriptPubKey that is not hex`);
    }
    if (!isP2wpkh(script)) throw refuse(`signed Scrolls map: output #${i} has scriptPubKey ${hex.slice(0, 80)}, not a P2WPKH script`);
  }
  let ok = false;
  try {
    const sig = fromHex(s.signature, 'Scrolls signature', 64);
    ok = schnorr.verify(sig, sha256(scrollOutputsMessage(s.scriptPubkeys)), pubkey);
  } catch {
    ok = false;
  }
  if (!ok) throw new CharmsError('PROOF_INVALID', 'the Scrolls signature over the scriptPubKey map does not verify');
}

/**
 * The reference's `check_scroll_outputs` for a spell hosted on Bitcoin: false when the spell
 * lists Scrolls outputs but no signed map is given (not bound yet); otherwise the map's keys
 * must equal `tx.scrolls`, each signed script must equal `coins[i].dest`, and the signature
 * must verify (throws INVALID_SPELL / PROOF_INVALID).
 */
export function checkScrollOutputs(spell: NormalizedSpell, signed: SignedScrollOutputs | undefined, pubkey?: Uint8Array): boolean {
  const scrolls = spell.tx.scrolls ?? [];
  if (scrolls.length === 0) return true;
  if (!signed) return false;
  const keys = [...signed.scriptPubkeys.keys()].sort((a, b) => a - b);
  if (keys.join(',') !== [...scrolls].sort((a, b) => a - b).join(','))
    throw refuse(`signed Scrolls scriptPubKey map keys ([${keys.join(', ')}]) do not match tx.scrolls ([${scrolls.join(', ')}])`);
  const coins = spell.tx.coins;
  if (!coins) throw refuse('Bitcoin spell with Scrolls outputs must have tx.coins set');
  for (const [i, hex] of signed.scriptPubkeys) {
    const coin = coins[i];
    if (!coin) throw refuse(`tx.scrolls references output #${i} but tx.coins only has ${coins.length} entries`);
    if (hex.toLowerCase() !== toHex(coin.dest))
      throw refuse(`Scrolls output #${i}: signed scriptPubKey (${hex}) does not match tx.coins[${i}].dest (${toHex(coin.dest)})`);
  }
  verifySignedScrollOutputs(signed, pubkey);
  return true;
}

/**
 * Returns the spell with each Scrolls output's `dest` set to the canister's signed script. The
 * map must cover exactly `tx.scrolls`, and its signature must verify.
 */
export function bindScrollOutputs(spell: NormalizedSpell, signed: SignedScrollOutputs, pubkey?: Uint8Array): NormalizedSpell {
  const coins = spell.tx.coins;
  if (!coins) throw refuse('Bitcoin spell with Scrolls outputs must have tx.coins set');
  const bound = coins.map((c, i) => {
    const hex = signed.scriptPubkeys.get(i);
    return hex === undefined ? c : { ...c, dest: fromHex(hex, `scriptPubKey of Scrolls output #${i}`) };
  });
  const next: NormalizedSpell = { ...spell, tx: { ...spell.tx, coins: bound } };
  checkScrollOutputs(next, signed, pubkey);
  return next;
}
