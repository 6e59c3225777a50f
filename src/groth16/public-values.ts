/**
 * The public values a spell proof commits to, framed by hand around the already-encoded spell CBOR:
 *   V1–V14: CBOR array(2) [ text("0x" + lowercase hex(spell vk)), spell ]
 *   V15:    CBOR array(2) [ array(32) of uints (the vk bytes; serde's [u8; 32]), spell ]
 * V0 used SP1's bincode encoding of the typed spell, which cannot be built from CBOR bytes.
 * Browser-safe.
 */
import { CharmsError } from '../errors.js';
import { CborWriter } from '../codec/cbor.js';
import { toHex } from '../util/bytes.js';
import { spellVkFor } from './constants.js';

export function publicValuesFor(version: number, spellCbor: Uint8Array, mock: boolean): Uint8Array {
  const vk = spellVkFor(version, mock); // throws UNSUPPORTED for unknown versions
  if (version === 0) throw new CharmsError('UNSUPPORTED', 'public values of protocol version 0 spells (SP1 bincode) are not supported');
  const w = new CborWriter();
  w.arrayHeader(2);
  if (version >= 15) w.uintArray(vk);
  else w.text(`0x${toHex(vk)}`);
  w.raw(spellCbor);
  return w.finish();
}
