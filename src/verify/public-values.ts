/**
 * The public values a spell proof commits to, per protocol version:
 * V1–V14 CBOR `[text "0x"+hex(spell vk), spell]`, V15+ `[spell vk as 32 uints, spell]`.
 * Mock proofs made by earlier provers committed to the vk string without the `0x` prefix, so
 * for mock spells that form is also a candidate (a strict pairing check decides).
 */
import { CborWriter } from '../codec/cbor.js';
import { toHex } from '../util/bytes.js';
import { spellVkFor } from '../proof/constants.js';
import { CharmsError } from '../errors.js';

function frame(first: (w: CborWriter) => void, spellCbor: Uint8Array): Uint8Array {
  const w = new CborWriter();
  w.arrayHeader(2);
  first(w);
  w.raw(spellCbor);
  return w.finish();
}

export function publicValues(version: number, spellCbor: Uint8Array, mock: boolean): Uint8Array {
  const vk = spellVkFor(version, mock);
  if (version === 0 && !mock) throw new CharmsError('UNSUPPORTED', 'version 0 public values (SP1 bincode) are not supported');
  if (version >= 15) return frame((w) => w.uintArray(vk), spellCbor);
  return frame((w) => w.text(`0x${toHex(vk)}`), spellCbor);
}

export function publicValuesCandidates(version: number, spellCbor: Uint8Array, mock: boolean): Uint8Array[] {
  const main = publicValues(version, spellCbor, mock);
  if (!mock || version >= 15) return [main];
  const vk = spellVkFor(version, mock);
  return [main, frame((w) => w.text(toHex(vk)), spellCbor)];
}
