/**
 * Extract the spell from a Bitcoin transaction and verify its proof, as the reference's
 * `extract_and_verify_spell` does for every protocol version on chain (0 to 15).
 */
import { CharmsError } from '../errors.js';
import { decodeCbor } from '../codec/cbor.js';
import { parseTx, type BitcoinTx } from '../bitcoin/tx.js';
import { opReturnSpellPayload, witnessSpellPayload } from '../bitcoin/spell-location.js';
import { asArray, bytesFromBinary } from '../model/primitives.js';
import { encodeSpellCbor, spellFromValue, type NormalizedSpell } from '../model/spell.js';
import { verifySpellProof } from '../proof/verify.js';
import { publicValuesFor } from '../proof/public-values.js';

export interface SpellAndProof {
  spell: NormalizedSpell;
  proof: Uint8Array;
}

/** Decodes the on-chain CBOR pair `(NormalizedSpell, Proof)`. */
export function decodeSpellAndProof(payload: Uint8Array): SpellAndProof {
  const v = asArray(decodeCbor(payload, { allowTrailing: true }), 'spell payload');
  if (v.length !== 2) throw new CharmsError('CBOR_DECODE', 'spell payload: expected a (spell, proof) pair');
  return { spell: spellFromValue(v[0]!, false), proof: bytesFromBinary(v[1]!, 'proof') };
}

/**
 * Finds and decodes the spell: the `OP_RETURN "spell"` output first; on any failure there
 * (including CBOR errors), the Taproot-witness envelope of the last input (protocol < 9).
 * Errors from the fallback are the ones reported, as in the reference.
 */
export function findBitcoinSpell(tx: BitcoinTx): SpellAndProof {
  try {
    return decodeSpellAndProof(opReturnSpellPayload(tx));
  } catch {
    return decodeSpellAndProof(witnessSpellPayload(tx));
  }
}

/** Fills `tx.ins` and `tx.coins` from the transaction per version (what the proof commits to). */
export function fillFromBitcoinTx(spell: NormalizedSpell, tx: BitcoinTx): NormalizedSpell {
  if (spell.tx.ins !== undefined)
    throw new CharmsError('INVALID_SPELL', 'spell must inherit inputs from the enchanted tx');
  if (spell.tx.outs.length > tx.outputs.length) throw new CharmsError('INVALID_SPELL', 'spell tx outs mismatch');
  let inputs = tx.inputs.map((i) => ({ txid: i.txid, vout: i.vout }));
  if (spell.version < 10) inputs = inputs.slice(0, -1); // the old funding input is not a spell input
  const filled: NormalizedSpell = { ...spell, tx: { ...spell.tx, ins: inputs } };
  if (spell.version > 7)
    filled.tx.coins = tx.outputs.slice(0, spell.tx.outs.length).map((o) => ({ amount: o.value, dest: o.script }));
  return filled;
}

/** Verifies the proof of an extracted, filled spell. `mock` allows mock spells. */
export function verifyFilledSpell(filled: NormalizedSpell, proof: Uint8Array, mock: boolean): void {
  if (filled.mock && !mock) throw new CharmsError('PROOF_INVALID', 'spell is a mock, but we are not in mock mode');
  // For mock spells verifySpellProof also tries the framing early mock provers used.
  const publicValues = publicValuesFor(filled.version, encodeSpellCbor(filled), filled.mock);
  verifySpellProof({ version: filled.version, publicValues, proof, mock: filled.mock });
}

/** The whole read side for one Bitcoin transaction: parse, extract, fill, verify. */
export function extractAndVerifyBitcoin(txBytes: Uint8Array, mock: boolean): NormalizedSpell {
  const tx = parseTx(txBytes);
  const { spell, proof } = findBitcoinSpell(tx);
  const filled = fillFromBitcoinTx(spell, tx);
  verifyFilledSpell(filled, proof, mock);
  return filled;
}
