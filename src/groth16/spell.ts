/**
 * The chain-neutral half of reading a spell, used by every chain's extractor: decode the
 * on-chain `(NormalizedSpell, Proof)` pair, and verify the proof of a spell once the chain's
 * extractor has filled `tx.ins`/`tx.coins` from the transaction. Browser-safe.
 */
import { CharmsError } from '../errors.js';
import { CiboriumReader } from '../model/ciborium.js';
import { encodeSpellCbor, spellFromCiborium, type NormalizedSpell } from '../model/spell.js';
import { verifySpellProof, type SpellProofCheck } from './verify.js';
import { publicValuesFor } from './public-values.js';

export interface SpellAndProof {
  spell: NormalizedSpell;
  proof: Uint8Array;
}

/**
 * Decodes the on-chain CBOR pair `(NormalizedSpell, Proof)` as the reference's `util::read`
 * (ciborium's `from_reader`) reads a 2-tuple: tags in front skipped, an array (definite or not)
 * whose first two items are read and nothing after them: the declared count, further items, a
 * missing break and trailing bytes are never looked at. Each item is read as its serde type
 * (model/ciborium.ts).
 */
export function decodeSpellAndProof(payload: Uint8Array): SpellAndProof {
  const pairExpected = () => new CharmsError('CBOR_DECODE', 'spell payload: expected a (spell, proof) pair');
  const r = new CiboriumReader(payload);
  const h = r.untagged();
  if (h.kind !== 'array') throw pairExpected(); // a byte string's u8 items are never a spell
  return r.nested(() => {
    const next = r.access(h.len);
    if (!next()) throw pairExpected();
    const spell = spellFromCiborium(r);
    if (!next()) throw pairExpected();
    return { spell, proof: r.byteVec('proof') };
  });
}

const checkedCbor = new WeakMap<NormalizedSpell, Uint8Array>();

/**
 * encodeSpellCbor(spell) as spellProofCheck encoded it for the proof's public values (the index
 * stores these bytes and need not encode the spell again), or undefined if it did not see this
 * spell. A verified spell is not changed afterwards.
 */
export const checkedSpellCbor = (spell: NormalizedSpell): Uint8Array | undefined => checkedCbor.get(spell);

/**
 * What verifying the proof of an extracted, filled spell takes (for verifySpellProof or, batched,
 * verifySpellProofs). Throws PROOF_INVALID for a mock spell unless `mock` allows mock spells.
 */
export function spellProofCheck(filled: NormalizedSpell, proof: Uint8Array, mock: boolean): SpellProofCheck {
  if (filled.mock && !mock) throw new CharmsError('PROOF_INVALID', 'spell is a mock, but we are not in mock mode');
  // For mock spells verifySpellProof also tries the framing early mock provers used.
  const cbor = encodeSpellCbor(filled);
  checkedCbor.set(filled, cbor);
  const publicValues = publicValuesFor(filled.version, cbor, filled.mock);
  return { version: filled.version, publicValues, proof, mock: filled.mock };
}

/** Verifies the proof of an extracted, filled spell. `mock` allows mock spells. */
export function verifyFilledSpell(filled: NormalizedSpell, proof: Uint8Array, mock: boolean): void {
  verifySpellProof(spellProofCheck(filled, proof, mock));
}
