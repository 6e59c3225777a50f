/** Cardano addresses: Shelley (bech32 / bech32m, any HRP) and Byron (base58), their raw bytes, validated. */
import { base58, bech32, bech32m } from '@scure/base';
import type { CardanoNetwork } from '../model/network.js';
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

/**
 * The raw bytes of an address of a Cardano network as the index stores an output's address: a
 * Shelley address in bech32 (`addr1…` on mainnet, `addr_test1…` on the testnets; its header's
 * network id must be the network's), or a Byron address in base58 as given (its bytes are the
 * output's). INVALID_INPUT otherwise.
 */
export function cardanoAddressOfNetwork(addr: string, network: CardanoNetwork): Uint8Array {
  if (/^[a-z_]+1/.test(addr)) {
    const b = cardanoAddressBytes(addr);
    if ((b[0]! & 0x0f) !== network.networkId) throw bad(addr, `not an address of Cardano ${network.name}`);
    return b;
  }
  let b: Uint8Array;
  try {
    b = base58.decode(addr);
  } catch (e) {
    throw bad(addr, 'neither bech32 nor base58', e);
  }
  // a Byron address is CBOR [#6.24(bytes), crc32]: an array of two
  if (b.length < 30 || b[0] !== 0x82) throw bad(addr, 'not a Shelley or Byron address');
  return b;
}

/**
 * The text of an output's raw address bytes: bech32 for Shelley, with the CIP-5 prefix its
 * header's network id names (`addr`/`stake` on mainnet, `addr_test`/`stake_test` on the
 * testnets), base58 for Byron; null for bytes that are neither.
 */
export function cardanoAddressText(b: Uint8Array): string | null {
  if (b.length > 0 && b[0] === 0x82) return base58.encode(b);
  if (!validateShelleyAddress(b)) return null;
  const type = b[0]! >> 4;
  const mainnet = (b[0]! & 0x0f) === 1;
  const hrp = type === 14 || type === 15 ? (mainnet ? 'stake' : 'stake_test') : mainnet ? 'addr' : 'addr_test';
  return bech32.encode(hrp, bech32.toWords(b), 1023);
}
