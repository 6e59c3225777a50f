/**
 * The chain-neutral half of reading a spell, used by every chain's extractor: decode the
 * on-chain `(NormalizedSpell, Proof)` pair, and verify the proof of a spell once the chain's
 * extractor has filled `tx.ins`/`tx.coins` from the transaction. Browser-safe.
 */
import { CharmsError } from '../errors.js';
import { CborReader } from '../codec/cbor.js';
import type { Value } from '../codec/value.js';
import { bytesFromBinary } from '../model/primitives.js';
import { ciboriumByteSeq } from '../model/ciborium-view.js';
import { encodeSpellCbor, spellFromValue, type NormalizedSpell } from '../model/spell.js';
import { verifySpellProof, type SpellProofCheck } from './verify.js';
import { publicValuesFor } from './public-values.js';

export interface SpellAndProof {
  spell: NormalizedSpell;
  proof: Uint8Array;
}

/**
 * Decodes the on-chain CBOR pair `(NormalizedSpell, Proof)` as ciborium's `from_reader` reads a
 * 2-tuple: tags in front skipped, an array (definite or not) whose first two items are read, and
 * nothing after them: further items, a missing break and trailing bytes are never looked at.
 */
export function decodeSpellAndProof(payload: Uint8Array): SpellAndProof {
  const pairExpected = () => new CharmsError('CBOR_DECODE', 'spell payload: expected a (spell, proof) pair');
  const r = new CborReader(payload);
  let h = r.head();
  while (h.major === 6) h = r.head();
  if (h.major !== 4 || (h.arg !== null && h.arg < 2n)) throw pairExpected();
  const item = (): Value => {
    if (h.arg === null && r.peekByte() === 0xff) throw pairExpected(); // an indefinite array that ends early
    return r.value();
  };
  const spell = item();
  const proof = item();
  return { spell: spellFromValue(spell, false), proof: bytesFromBinary(ciboriumByteSeq(proof, 'proof'), 'proof') };
}

/**
 * What verifying the proof of an extracted, filled spell takes (for verifySpellProof or, batched,
 * verifySpellProofs). Throws PROOF_INVALID for a mock spell unless `mock` allows mock spells.
 */
export function spellProofCheck(filled: NormalizedSpell, proof: Uint8Array, mock: boolean): SpellProofCheck {
  if (filled.mock && !mock) throw new CharmsError('PROOF_INVALID', 'spell is a mock, but we are not in mock mode');
  // For mock spells verifySpellProof also tries the framing early mock provers used.
  const publicValues = publicValuesFor(filled.version, encodeSpellCbor(filled), filled.mock);
  return { version: filled.version, publicValues, proof, mock: filled.mock };
}

/** Verifies the proof of an extracted, filled spell. `mock` allows mock spells. */
export function verifyFilledSpell(filled: NormalizedSpell, proof: Uint8Array, mock: boolean): void {
  verifySpellProof(spellProofCheck(filled, proof, mock));
}
