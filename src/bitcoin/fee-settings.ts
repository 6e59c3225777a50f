/**
 * The protocol fee settings (YAML file named by `CHARMS_FEE_SETTINGS`, read once at start):
 *
 *   fee_addresses: {bitcoin: {<bitcoind chain>: <address>}, cardano: {mainnet: <address>}}
 *   fee_rate: <sats per million app cycles>
 *   fee_base: <sats>
 *
 * Validated as the reference does at start-up (it panics; here every defect is a CONFIG error):
 * serde_yaml's shape rules for the `CharmsFee` struct, a mandatory `bitcoin` entry, every Bitcoin
 * key a bitcoind `-chain` name and its address valid for that chain. Reading the file and the
 * environment is the caller's job.
 */
import { CharmsError } from '../errors.js';
import { parseYaml } from '../codec/yaml.js';
import { ValueMap, type Value } from '../codec/value.js';
import type { BitcoinNetwork } from '../model/network.js';
import { BITCOIN_CHAIN_NAMES, decodeAddress, isTagValidFor, type BitcoinChainName } from './address.js';

export interface FeeSettings {
  /** Fee scriptPubKeys by bitcoind chain name (main, test, testnet4, signet, regtest). */
  bitcoin: Map<string, Uint8Array>;
  /** Cardano fee addresses by network name (looked up as `mainnet`). */
  cardano: Map<string, string>;
  /** Sats per million app cycles. */
  feeRate: bigint;
  /** Sats added to every fee. */
  feeBase: bigint;
}

const U64_MAX = (1n << 64n) - 1n;
const cfg = (msg: string, cause?: unknown) => new CharmsError('CONFIG', `fee settings: ${msg}`, cause === undefined ? undefined : { cause });

const kindOf = (v: Value | undefined): string =>
  v === null || v === undefined
    ? 'null'
    : v instanceof ValueMap
      ? 'a map'
      : Array.isArray(v)
        ? 'a sequence'
        : typeof v === 'bigint'
          ? 'an integer'
          : typeof v === 'number'
            ? 'a float'
            : typeof v === 'boolean'
              ? 'a boolean'
              : typeof v;

/** A YAML map with text keys and no key twice (serde rejects duplicate struct fields). */
function stringMap(v: Value | undefined, where: string): Map<string, Value> {
  if (!(v instanceof ValueMap)) throw cfg(`${where}: expected a map, found ${kindOf(v)}`);
  const out = new Map<string, Value>();
  for (const [k, x] of v.entries) {
    if (typeof k !== 'string') throw cfg(`${where}: keys must be strings, found ${kindOf(k)}`);
    if (out.has(k)) throw cfg(`${where}: duplicate key \`${k}\``);
    out.set(k, x);
  }
  return out;
}

function u64Field(top: Map<string, Value>, key: string): bigint {
  if (!top.has(key)) throw cfg(`missing field \`${key}\``);
  const x = top.get(key);
  if (typeof x !== 'bigint' || x < 0n || x > U64_MAX)
    throw cfg(`${key}: expected an integer from 0 to ${U64_MAX}, found ${typeof x === 'bigint' ? x : kindOf(x)}`);
  return x;
}

/** Parses and validates the fee settings YAML. CONFIG error on any defect. */
export function parseFeeSettings(yamlText: string): FeeSettings {
  let doc: Value;
  try {
    doc = parseYaml(yamlText);
  } catch (e) {
    const m = e instanceof Error ? e.message : String(e);
    throw cfg(/\bYAML\b/.test(m) ? m : `not valid YAML: ${m}`, e); // parseYaml's messages mostly say "invalid YAML: …" already
  }
  const top = stringMap(doc, 'top level');
  if (!top.has('fee_addresses')) throw cfg('missing field `fee_addresses`');
  const byChain = stringMap(top.get('fee_addresses'), 'fee_addresses');
  for (const chain of byChain.keys())
    if (chain !== 'bitcoin' && chain !== 'cardano') throw cfg(`fee_addresses: unknown chain \`${chain}\`, expected \`bitcoin\` or \`cardano\``);

  const addressesOf = (chain: string): Map<string, string> => {
    const out = new Map<string, string>();
    for (const [network, addr] of stringMap(byChain.get(chain), `fee_addresses.${chain}`)) {
      if (typeof addr !== 'string') throw cfg(`fee_addresses.${chain}.${network}: expected an address string, found ${kindOf(addr)}`);
      out.set(network, addr);
    }
    return out;
  };

  if (!byChain.has('bitcoin')) throw cfg('fee_addresses.bitcoin is required');
  const bitcoin = new Map<string, Uint8Array>();
  for (const [chain, addr] of addressesOf('bitcoin')) {
    if (!(BITCOIN_CHAIN_NAMES as readonly string[]).includes(chain))
      throw cfg(`fee_addresses.bitcoin: \`${chain}\` is not a bitcoind -chain name (use ${BITCOIN_CHAIN_NAMES.join(', ')})`);
    let decoded;
    try {
      decoded = decodeAddress(addr);
    } catch (e) {
      throw cfg(`fee_addresses.bitcoin.${chain}: ${e instanceof Error ? e.message : String(e)}`, e);
    }
    if (!isTagValidFor(decoded.tag, chain as BitcoinChainName)) throw cfg(`fee_addresses.bitcoin.${chain}: address ${addr} is not valid for ${chain}`);
    bitcoin.set(chain, decoded.script);
  }
  const cardano = byChain.has('cardano') ? addressesOf('cardano') : new Map<string, string>();
  return { bitcoin, cardano, feeRate: u64Field(top, 'fee_rate'), feeBase: u64Field(top, 'fee_base') };
}

/**
 * The Charms fee in sats for the apps' total cycles: `cycles × fee_rate / 10^6 + fee_base` in u64
 * arithmetic. Where the reference would overflow (and abort), INVALID_INPUT.
 */
export function charmsFee(s: FeeSettings, totalCycles: bigint): bigint {
  const product = totalCycles * s.feeRate;
  if (product > U64_MAX) throw new CharmsError('INVALID_INPUT', `charms fee: ${totalCycles} cycles × fee_rate ${s.feeRate} overflows u64`);
  const fee = product / 1_000_000n + s.feeBase;
  if (fee > U64_MAX) throw new CharmsError('INVALID_INPUT', `charms fee: ${fee} sats overflows u64`);
  return fee;
}

/** The Charms fee scriptPubKey for the change address's network, if one is configured. */
export const feeScriptFor = (s: FeeSettings, network: BitcoinNetwork): Uint8Array | undefined => s.bitcoin.get(network.coreChain);
