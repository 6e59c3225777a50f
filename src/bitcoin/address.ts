/**
 * Bitcoin addresses ↔ scriptPubKeys for every standard kind (p2pkh, p2sh, segwit v0, taproot and
 * other witness versions) on mainnet, testnet/testnet4/signet and regtest.
 */
import { base58check, bech32, bech32m } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2.js';
import { CharmsError } from '../errors.js';
import { concatBytes } from '../util/bytes.js';
import { pushData } from './script.js';

/** The network names the reference derives from a change address (bitcoind `-chain` names). */
export type BitcoinNetwork = 'main' | 'testnet4' | 'regtest';

const b58 = base58check(sha256);
const bad = (addr: string, why: string) => new CharmsError('INVALID_INPUT', `invalid Bitcoin address ${JSON.stringify(addr)}: ${why}`);

const HRP: Record<string, BitcoinNetwork> = { bc: 'main', tb: 'testnet4', bcrt: 'regtest' };

export function witnessScript(version: number, program: Uint8Array): Uint8Array {
  return concatBytes(Uint8Array.of(version === 0 ? 0 : 0x50 + version), pushData(program));
}

export function addressToScript(addr: string): { script: Uint8Array; network: BitcoinNetwork } {
  const lower = addr.toLowerCase();
  const sep = lower.lastIndexOf('1');
  const hrp = sep > 0 ? lower.slice(0, sep) : '';
  if (HRP[hrp] && addr.length >= 14) {
    if (addr !== lower && addr !== addr.toUpperCase()) throw bad(addr, 'mixed case');
    let decoded: { prefix: string; words: number[] } | undefined;
    let isM = false;
    try {
      decoded = bech32.decode(lower as `${string}1${string}`, 90);
    } catch {
      try {
        decoded = bech32m.decode(lower as `${string}1${string}`, 90);
        isM = true;
      } catch {
        throw bad(addr, 'bad bech32 checksum or encoding');
      }
    }
    const [version, ...rest] = decoded.words;
    if (version === undefined || version > 16) throw bad(addr, 'bad witness version');
    if (version === 0 && isM) throw bad(addr, 'segwit v0 must use bech32');
    if (version > 0 && !isM) throw bad(addr, 'segwit v1+ must use bech32m');
    let program: Uint8Array;
    try {
      program = bech32.fromWords(rest);
    } catch {
      throw bad(addr, 'bad witness program padding');
    }
    if (program.length < 2 || program.length > 40) throw bad(addr, 'bad witness program length');
    if (version === 0 && program.length !== 20 && program.length !== 32) throw bad(addr, 'bad v0 witness program length');
    return { script: witnessScript(version, program), network: HRP[hrp]! };
  }
  let raw: Uint8Array;
  try {
    raw = b58.decode(addr);
  } catch {
    throw bad(addr, 'not bech32 or base58check');
  }
  if (raw.length !== 21) throw bad(addr, 'bad base58 payload length');
  const hash = raw.subarray(1);
  switch (raw[0]) {
    case 0x00:
      return { script: p2pkh(hash), network: 'main' };
    case 0x05:
      return { script: p2sh(hash), network: 'main' };
    case 0x6f:
      return { script: p2pkh(hash), network: 'testnet4' };
    case 0xc4:
      return { script: p2sh(hash), network: 'testnet4' };
    default:
      throw bad(addr, `unknown version byte ${raw[0]}`);
  }
}

const p2pkh = (h: Uint8Array) => concatBytes(Uint8Array.of(0x76, 0xa9, 0x14), h, Uint8Array.of(0x88, 0xac));
const p2sh = (h: Uint8Array) => concatBytes(Uint8Array.of(0xa9, 0x14), h, Uint8Array.of(0x87));

/** True iff the script is one an address can pay to (what `Address::from_script` accepts). */
export function isStandardScript(s: Uint8Array): boolean {
  if (s.length === 25 && s[0] === 0x76 && s[1] === 0xa9 && s[2] === 0x14 && s[23] === 0x88 && s[24] === 0xac) return true;
  if (s.length === 23 && s[0] === 0xa9 && s[1] === 0x14 && s[22] === 0x87) return true;
  const v = s[0];
  if (v !== undefined && (v === 0 || (v >= 0x51 && v <= 0x60)) && s.length >= 4 && s.length <= 42 && s[1] === s.length - 2) {
    if (v === 0) return s.length === 22 || s.length === 34;
    return true;
  }
  return false;
}

/** The address of a standard script on a network (`undefined` for non-standard scripts). */
export function scriptToAddress(s: Uint8Array, network: BitcoinNetwork): string | undefined {
  if (!isStandardScript(s)) return undefined;
  const testish = network !== 'main';
  if (s[0] === 0x76) return b58.encode(concatBytes(Uint8Array.of(testish ? 0x6f : 0x00), s.subarray(3, 23)));
  if (s[0] === 0xa9) return b58.encode(concatBytes(Uint8Array.of(testish ? 0xc4 : 0x05), s.subarray(2, 22)));
  const version = s[0] === 0 ? 0 : s[0]! - 0x50;
  const hrp = network === 'main' ? 'bc' : network === 'regtest' ? 'bcrt' : 'tb';
  const words = [version, ...bech32.toWords(s.subarray(2))];
  return version === 0 ? bech32.encode(hrp, words, 90) : bech32m.encode(hrp, words, 90);
}
