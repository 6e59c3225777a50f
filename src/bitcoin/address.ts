/**
 * Bitcoin addresses ↔ scriptPubKeys as rust-bitcoin 0.32 reads and writes them: p2pkh, p2sh and
 * every witness version (p2wpkh, p2wsh, p2tr, future versions) on mainnet, testnet/testnet4/
 * signet and regtest. Browser-safe.
 *
 * Parsing follows `Address::from_str`: a string that decodes as a segwit address (bech32 for v0,
 * bech32m for v1+, ≤ 90 chars, one case, program 2..40 bytes, v0 program 20 or 32 bytes) must have
 * the hrp `bc`, `tb` or `bcrt`; anything else is read as base58check (≤ 50 chars, 21 bytes,
 * prefix 0x00/0x05 main or 0x6f/0xc4 test).
 */
import { base58check, bech32, bech32m } from '@scure/base';
import { sha256 } from '../util/sha256.js';
import { CharmsError } from '../errors.js';
import { concatBytes } from '../util/bytes.js';
import { BITCOIN_NETWORKS, type BitcoinNetwork } from '../model/network.js';
import { pushData } from './script.js';

/** Every bitcoind `-chain` name (`Network::from_core_arg`): the one Network type's `coreChain`. */
export type BitcoinChainName = BitcoinNetwork['coreChain'];
export const BITCOIN_CHAIN_NAMES: readonly BitcoinChainName[] = ['main', 'test', 'testnet4', 'signet', 'regtest'];

/** What an address string says about its network: a base58 prefix kind, or a bech32 hrp. */
export type AddressNetworkTag = { kind: 'base58'; net: BitcoinNetwork['base58'] } | { kind: 'segwit'; hrp: BitcoinNetwork['hrp'] };

export interface DecodedAddress {
  script: Uint8Array;
  tag: AddressNetworkTag;
  /** The address as rust-bitcoin displays it (bech32 in lower case). */
  canonical: string;
}

const b58 = base58check(sha256);
const bad = (addr: string, why: string, cause?: unknown) =>
  new CharmsError('INVALID_INPUT', `invalid Bitcoin address ${JSON.stringify(addr)}: ${why}`, cause === undefined ? undefined : { cause });

const SEGWIT_MAX_LENGTH = 90;
const LEGACY_MAX_LENGTH = 50;
const KNOWN_HRPS = new Set(['bc', 'tb', 'bcrt']);

function witnessScript(version: number, program: Uint8Array): Uint8Array {
  return concatBytes(Uint8Array.of(version === 0 ? 0 : 0x50 + version), pushData(program));
}
const p2pkh = (h: Uint8Array) => concatBytes(Uint8Array.of(0x76, 0xa9, 0x14), h, Uint8Array.of(0x88, 0xac));
const p2sh = (h: Uint8Array) => concatBytes(Uint8Array.of(0xa9, 0x14), h, Uint8Array.of(0x87));

/** bech32 `segwit::decode`: hrp, witness version and program, or undefined if not a segwit string. */
function decodeSegwit(addr: string): { hrp: string; version: number; program: Uint8Array } | undefined {
  if (addr.length > SEGWIT_MAX_LENGTH) return undefined;
  if (addr !== addr.toLowerCase() && addr !== addr.toUpperCase()) return undefined; // mixed case
  const lower = addr.toLowerCase() as `${string}1${string}`;
  const sep = lower.lastIndexOf('1');
  // The witness version is the first data character; it picks the checksum.
  const versionChar = sep > 0 ? lower[sep + 1] : undefined;
  if (versionChar === undefined) return undefined;
  const wantM = versionChar !== 'q'; // 'q' is 0 in the bech32 alphabet
  let decoded: { prefix: string; words: number[] };
  try {
    decoded = (wantM ? bech32m : bech32).decode(lower, SEGWIT_MAX_LENGTH);
  } catch {
    return undefined;
  }
  const [version, ...rest] = decoded.words;
  if (version === undefined || version > 16) return undefined;
  let program: Uint8Array;
  try {
    program = bech32.fromWords(rest); // rejects non-zero or over-long padding
  } catch {
    return undefined;
  }
  if (program.length < 2 || program.length > 40) return undefined;
  if (version === 0 && program.length !== 20 && program.length !== 32) return undefined;
  return { hrp: decoded.prefix, version, program };
}

/** Decodes an address with rust-bitcoin 0.32's rules; INVALID_INPUT naming the defect otherwise. */
export function decodeAddress(addr: string): DecodedAddress {
  const segwit = decodeSegwit(addr);
  if (segwit) {
    if (!KNOWN_HRPS.has(segwit.hrp)) throw bad(addr, `tried to parse an unknown hrp: ${segwit.hrp}`);
    return {
      script: witnessScript(segwit.version, segwit.program),
      tag: { kind: 'segwit', hrp: segwit.hrp as 'bc' | 'tb' | 'bcrt' },
      canonical: addr.toLowerCase(),
    };
  }
  // A segwit prefix that did not decode is a typo in a bech32 address, not a base58 one.
  const hrp = /^(bc|tb|bcrt)1/i.exec(addr)?.[1]?.toLowerCase();
  if (hrp)
    throw bad(
      addr,
      `not a valid ${hrp}1… (bech32) address: its checksum or format does not match, so a character is probably mistyped or missing; copy the address again from the wallet`,
    );
  const cardano = /^(addr|addr_test|stake|stake_test)1/i.exec(addr)?.[1]?.toLowerCase();
  if (cardano)
    throw bad(
      addr,
      `this is a Cardano address (${cardano}1…), not a Bitcoin one: give a Bitcoin address (bc1…, tb1…, 1…, 3…), or pass --chain cardano for a Cardano spell`,
    );
  if (addr.length > LEGACY_MAX_LENGTH) throw bad(addr, `legacy address base58 string: too long (${addr.length} characters, max ${LEGACY_MAX_LENGTH})`);
  let raw: Uint8Array;
  try {
    raw = b58.decode(addr);
  } catch (e) {
    throw bad(addr, `base58 error (${e instanceof Error ? e.message : String(e)})`, e);
  }
  if (raw.length !== 21) throw bad(addr, `legacy address base58 data: ${raw.length} bytes, expected 21`);
  const hash = raw.subarray(1);
  const prefix = raw[0]!;
  const base58 = (net: 'main' | 'test', script: Uint8Array): DecodedAddress => ({
    script,
    tag: { kind: 'base58', net },
    canonical: addr,
  });
  if (prefix === 0x00) return base58('main', p2pkh(hash));
  if (prefix === 0x05) return base58('main', p2sh(hash));
  if (prefix === 0x6f) return base58('test', p2pkh(hash));
  if (prefix === 0xc4) return base58('test', p2sh(hash));
  throw bad(addr, `legacy address base58 prefix: unknown version byte ${prefix}`);
}

/** rust-bitcoin `Address::is_valid_for_network` for a bitcoind chain name. */
export function isTagValidFor(tag: AddressNetworkTag, chain: BitcoinChainName): boolean {
  if (tag.kind === 'base58') return chain === 'main' ? tag.net === 'main' : tag.net === 'test';
  const hrp = chain === 'main' ? 'bc' : chain === 'regtest' ? 'bcrt' : 'tb';
  return tag.hrp === hrp;
}

/** The network of a change address: the first of mainnet, testnet4, regtest it is valid for. */
function networkOfTag(tag: AddressNetworkTag): BitcoinNetwork {
  for (const n of [BITCOIN_NETWORKS.mainnet, BITCOIN_NETWORKS.testnet4, BITCOIN_NETWORKS.regtest]) if (isTagValidFor(tag, n.coreChain)) return n;
  throw new CharmsError('INTERNAL', 'unreachable: every address is valid for one of main, testnet4, regtest');
}

/** An address's scriptPubKey and the network the reference derives from it (`tb1`, m/n/2 → testnet4). */
export function addressToScript(addr: string): { script: Uint8Array; network: BitcoinNetwork } {
  const d = decodeAddress(addr);
  return { script: d.script, network: networkOfTag(d.tag) };
}

/** True iff `addr` parses and rust-bitcoin deems it valid for the bitcoind chain `chain`. */
export function isAddressValidFor(addr: string, chain: BitcoinChainName): boolean {
  try {
    return isTagValidFor(decodeAddress(addr).tag, chain);
  } catch {
    return false;
  }
}

/** True iff the script is one an address can pay to (rust-bitcoin `Address::from_script` accepts it). */
export function isStandardScript(s: Uint8Array): boolean {
  if (s.length === 25 && s[0] === 0x76 && s[1] === 0xa9 && s[2] === 0x14 && s[23] === 0x88 && s[24] === 0xac) return true;
  if (s.length === 23 && s[0] === 0xa9 && s[1] === 0x14 && s[22] === 0x87) return true;
  // Witness program: OP_0 or OP_1..OP_16, then one direct push of 2..40 bytes filling the script.
  const v = s[0];
  if (v === undefined || !(v === 0 || (v >= 0x51 && v <= 0x60))) return false;
  if (s.length < 4 || s.length > 42 || s[1] !== s.length - 2) return false;
  return v !== 0 || s.length === 22 || s.length === 34;
}

/**
 * The server preflight's "valid for the network" test (`Address::from_script(script, network)
 * .is_ok()`): in rust-bitcoin 0.32 it depends only on the script's shape, not on the network.
 */
export const isStandardScriptFor = (script: Uint8Array, _network: BitcoinNetwork): boolean => isStandardScript(script);

/** The address of a standard script on a network (`undefined` for scripts no address pays to). */
export function scriptToAddress(s: Uint8Array, network: BitcoinNetwork): string | undefined {
  if (!isStandardScript(s)) return undefined;
  const test = network.base58 === 'test';
  if (s[0] === 0x76) return b58.encode(concatBytes(Uint8Array.of(test ? 0x6f : 0x00), s.subarray(3, 23)));
  if (s[0] === 0xa9) return b58.encode(concatBytes(Uint8Array.of(test ? 0xc4 : 0x05), s.subarray(2, 22)));
  const version = s[0] === 0 ? 0 : s[0]! - 0x50;
  const hrp = network.hrp;
  const words = [version, ...bech32.toWords(s.subarray(2))];
  return version === 0 ? bech32.encode(hrp, words, SEGWIT_MAX_LENGTH) : bech32m.encode(hrp, words, SEGWIT_MAX_LENGTH);
}
