/**
 * Extract the spell from a Bitcoin transaction and verify its proof, as the reference's
 * `extract_and_verify_spell` does for every protocol version on chain (0 to 15).
 */
import { CharmsError } from '../errors.js';
import type { NormalizedSpell } from '../model/spell.js';
import { decodeSpellAndProof, verifyFilledSpell, type SpellAndProof } from '../groth16/spell.js';
import { parseTx, type BitcoinTx } from './tx.js';
import { opReturnSpellPayload, witnessSpellPayload } from './spell-location.js';

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
  if (spell.tx.ins !== undefined) throw new CharmsError('INVALID_SPELL', 'spell must inherit inputs from the enchanted tx');
  if (spell.tx.outs.length > tx.outputs.length) throw new CharmsError('INVALID_SPELL', 'spell tx outs mismatch');
  let inputs = tx.inputs.map((i) => ({ txid: i.txid, vout: i.vout }));
  if (spell.version < 10) inputs = inputs.slice(0, -1); // the old funding input is not a spell input
  const filled: NormalizedSpell = { ...spell, tx: { ...spell.tx, ins: inputs } };
  if (spell.version > 7) filled.tx.coins = tx.outputs.slice(0, spell.tx.outs.length).map((o) => ({ amount: o.value, dest: o.script }));
  return filled;
}

/** Parse, extract, fill: the filled spell and its proof, not verified yet. */
export function extractBitcoinSpell(txBytes: Uint8Array): SpellAndProof {
  const tx = parseTx(txBytes);
  const { spell, proof } = findBitcoinSpell(tx);
  return { spell: fillFromBitcoinTx(spell, tx), proof };
}

/** The whole read side for one Bitcoin transaction: parse, extract, fill, verify. */
export function extractAndVerifyBitcoin(txBytes: Uint8Array, mock: boolean): NormalizedSpell {
  const { spell, proof } = extractBitcoinSpell(txBytes);
  verifyFilledSpell(spell, proof, mock);
  return spell;
}
