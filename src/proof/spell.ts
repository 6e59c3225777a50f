/**
 * The chain-neutral half of reading a spell, used by every chain's extractor: decode the
 * on-chain `(NormalizedSpell, Proof)` pair, and verify the proof of a spell once the chain's
 * extractor has filled `tx.ins`/`tx.coins` from the transaction. Browser-safe.
 */
import { CharmsError } from '../errors.js';
import { decodeCbor } from '../codec/cbor.js';
import { asArray, bytesFromBinary } from '../model/primitives.js';
import { ciboriumByteSeq, untag } from '../model/ciborium-view.js';
import { encodeSpellCbor, spellFromValue, type NormalizedSpell } from '../model/spell.js';
import { verifySpellProof, type SpellProofCheck } from './verify.js';
import { publicValuesFor } from './public-values.js';

export interface SpellAndProof {
  spell: NormalizedSpell;
  proof: Uint8Array;
}

/** Decodes the on-chain CBOR pair `(NormalizedSpell, Proof)`. */
export function decodeSpellAndProof(payload: Uint8Array): SpellAndProof {
  // ciborium reads the pair as a 2-tuple: tags in front skipped, items after the second not read
  const v = asArray(untag(decodeCbor(payload, { allowTrailing: true })), 'spell payload');
  if (v.length < 2) throw new CharmsError('CBOR_DECODE', 'spell payload: expected a (spell, proof) pair');
  return { spell: spellFromValue(v[0]!, false), proof: bytesFromBinary(ciboriumByteSeq(v[1]!, 'proof'), 'proof') };
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
