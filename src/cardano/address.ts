/** Cardano Shelley addresses (bech32 / bech32m, any HRP): their raw bytes, validated. */
import { bech32, bech32m } from '@scure/base';
import { CharmsError } from '../errors.js';

const bad = (addr: string, why: string, cause?: unknown) =>
  new CharmsError('INVALID_INPUT', `invalid Cardano address ${JSON.stringify(addr)}: ${why}`, cause === undefined ? undefined : { cause });

function varUintEnd(b: Uint8Array, at: number): number {
  let i = at;
  while (i < b.length && b[i]! & 0x80) i++;
  if (i >= b.length) return -1;
  return i + 1;
}

/** Checks a Shelley address payload (base, pointer, enterprise, reward). */
export function validateShelleyAddress(b: Uint8Array): boolean {
  if (b.length === 0) return false;
  const type = b[0]! >> 4;
  if (type <= 3) return b.length === 57; // base: payment + stake credentials
  if (type === 4 || type === 5) {
    // pointer: payment credential + (slot, tx index, cert index) varints
    let at = 29;
    for (let k = 0; k < 3; k++) {
      at = varUintEnd(b, at);
      if (at < 0) return false;
    }
    return at === b.length;
  }
  if (type === 6 || type === 7) return b.length === 29; // enterprise
  if (type === 14 || type === 15) return b.length === 29; // reward
  return false;
}

export function cardanoAddressBytes(addr: string): Uint8Array {
  let words: number[];
  try {
    words = bech32.decode(addr as `${string}1${string}`, 1023).words;
  } catch {
    try {
      words = bech32m.decode(addr as `${string}1${string}`, 1023).words;
    } catch (e) {
      throw bad(addr, 'not bech32', e);
    }
  }
  let bytes: Uint8Array;
  try {
    bytes = bech32.fromWords(words);
  } catch (e) {
    throw bad(addr, 'bad bech32 padding', e);
  }
  if (!validateShelleyAddress(bytes)) throw bad(addr, 'not a Shelley base, pointer, enterprise or reward address');
  return bytes;
}
