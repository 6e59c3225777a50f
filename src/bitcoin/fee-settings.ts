/**
 * The protocol fee settings (`SVC_FEE_SETTINGS` / `CHARMS_FEE_SETTINGS` YAML):
 * `fee_addresses: {bitcoin: {<chain>: <addr>}, cardano: {mainnet: <addr>}}`, `fee_rate` (sats per
 * million app cycles), `fee_base` (sats). Invalid files are refused at start, as the reference does
 * (it panics); here it is a CONFIG error.
 */
import { CharmsError } from '../errors.js';
import { parseYaml } from '../codec/yaml.js';
import { ValueMap } from '../codec/value.js';
import { addressToScript, type BitcoinNetwork } from './address.js';

export interface FeeSettings {
  /** Bitcoin fee scripts by bitcoind chain name (main, test, testnet4, signet, regtest). */
  bitcoin: Map<string, Uint8Array>;
  cardano: Map<string, string>;
  feeRate: bigint;
  feeBase: bigint;
}

const CHAINS = ['main', 'test', 'testnet4', 'signet', 'regtest'];
const cfg = (msg: string) => new CharmsError('CONFIG', `fee settings: ${msg}`);

export function parseFeeSettings(text: string): FeeSettings {
  let v;
  try {
    v = parseYaml(text);
  } catch (e) {
    throw cfg((e as Error).message);
  }
  if (!(v instanceof ValueMap)) throw cfg('expected a map');
  const addrs = v.get('fee_addresses');
  if (!(addrs instanceof ValueMap)) throw cfg('missing fee_addresses');
  const btc = addrs.get('bitcoin');
  if (!(btc instanceof ValueMap)) throw cfg('fee_addresses.bitcoin is required');
  const bitcoin = new Map<string, Uint8Array>();
  for (const [k, a] of btc.entries) {
    if (typeof k !== 'string' || !CHAINS.includes(k)) throw cfg(`unknown Bitcoin chain ${String(k)} (use ${CHAINS.join(', ')})`);
    if (typeof a !== 'string') throw cfg(`fee_addresses.bitcoin.${k}: expected an address`);
    let parsed;
    try {
      parsed = addressToScript(a);
    } catch (e) {
      throw cfg(`fee_addresses.bitcoin.${k}: ${(e as Error).message}`);
    }
    const ok = k === 'main' ? parsed.network === 'main' : k === 'regtest' ? parsed.network !== 'main' : parsed.network === 'testnet4';
    if (!ok) throw cfg(`fee_addresses.bitcoin.${k}: address ${a} is not valid for ${k}`);
    bitcoin.set(k, parsed.script);
  }
  const cardano = new Map<string, string>();
  const ada = addrs.get('cardano');
  if (ada instanceof ValueMap) for (const [k, a] of ada.entries) if (typeof k === 'string' && typeof a === 'string') cardano.set(k, a);
  const num = (key: string): bigint => {
    const x = v.get(key);
    if (typeof x !== 'bigint' || x < 0n) throw cfg(`${key}: expected a non-negative integer`);
    return x;
  };
  return { bitcoin, cardano, feeRate: num('fee_rate'), feeBase: num('fee_base') };
}

/** Fee in sats for the apps' total cycles: cycles × fee_rate / 10^6 + fee_base. */
export const charmsFee = (s: FeeSettings, totalCycles: bigint): bigint => (totalCycles * s.feeRate) / 1_000_000n + s.feeBase;

/** The fee script for the network of the change address (lookups use main/testnet4/regtest). */
export const feeScriptFor = (s: FeeSettings, network: BitcoinNetwork): Uint8Array | undefined => s.bitcoin.get(network);
