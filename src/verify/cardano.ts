/**
 * Cardano read side (browser-safe): find the spell in the transaction's inline datum, recover
 * the input order (bijective permutation required) and the per-output coins/content, check the
 * native-token rules, and verify the proof. Throws a CharmsError on any failure.
 */
import type { NormalizedSpell } from '../model/spell.js';
import { extractAndVerifyCardanoTx } from '../cardano/extract.js';

export function extractAndVerifyCardano(tx: Uint8Array, mock: boolean): NormalizedSpell {
  return extractAndVerifyCardanoTx(tx, mock);
}
