/** What a spell transaction carries: `(spell without ins/coins, proof)`. */
import { CborWriter } from '../codec/cbor.js';
import { spellToValue, stripForChain, type NormalizedSpell } from '../model/spell.js';

/** `(spell, proof)` as it goes on chain: CBOR array(2), the proof as an array of uints. */
export function spellPayload(spell: NormalizedSpell, proof: Uint8Array): Uint8Array {
  const w = new CborWriter();
  w.arrayHeader(2);
  w.value(spellToValue(stripForChain(spell), false));
  w.uintArray(proof);
  return w.finish();
}
