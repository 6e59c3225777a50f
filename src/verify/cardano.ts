/** Cardano read side: placeholder until the Cardano issue lands. */
import { CharmsError } from '../errors.js';
import type { NormalizedSpell } from '../model/spell.js';

export function extractAndVerifyCardano(_tx: Uint8Array, _mock: boolean): NormalizedSpell {
  throw new CharmsError('UNSUPPORTED', 'Cardano transactions are not supported yet: use --chain bitcoin');
}
