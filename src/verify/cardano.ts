/** Cardano read side (browser-safe). */
import type { NormalizedSpell } from '../model/spell.js';
import { extractAndVerifyCardanoTx } from '../cardano/extract.js';

export function extractAndVerifyCardano(tx: Uint8Array, mock: boolean): NormalizedSpell {
  return extractAndVerifyCardanoTx(tx, mock);
}
