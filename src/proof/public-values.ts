/**
 * The public values a spell proof commits to, framed by hand around the already-encoded spell CBOR:
 *   V1–V14: CBOR array(2) [ text("0x" + lowercase hex(spell vk)), spell ]
 *   V15:    CBOR array(2) [ array(32) of uints (the vk bytes; serde's [u8; 32]), spell ]
 * V0 used SP1's bincode encoding of the typed spell, which cannot be built from CBOR bytes.
 * Browser-safe.
 */
import { CharmsError } from '../errors.js';
import { concatBytes, toHex, utf8 } from '../util/bytes.js';
import { spellVkFor } from './constants.js';

/** CBOR head for major type `major` and argument n < 2^16 (all this framing needs). */
function head(major: number, n: number): number[] {
  const m = major << 5;
  if (n < 24) return [m | n];
  if (n < 0x100) return [m | 24, n];
  return [m | 25, n >> 8, n & 0xff];
}

export function publicValuesFor(version: number, spellCbor: Uint8Array, mock: boolean): Uint8Array {
  const vk = spellVkFor(version, mock); // throws UNSUPPORTED for unknown versions
  if (version === 0)
    throw new CharmsError('UNSUPPORTED', 'public values of protocol version 0 spells (SP1 bincode) are not supported');
  if (version >= 15) {
    const first = head(4, 32);
    for (const b of vk) first.push(...head(0, b));
    return concatBytes(Uint8Array.of(...head(4, 2), ...first), spellCbor);
  }
  const text = utf8(`0x${toHex(vk)}`);
  return concatBytes(Uint8Array.of(...head(4, 2), ...head(3, text.length)), text, spellCbor);
}
