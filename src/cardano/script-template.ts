/**
 * The parameterized Charms app proxy script (Plutus V3). Applying one 32-byte `Data.B` parameter
 * to the published proxy script always yields `PREFIX ‖ param ‖ 00 01` (CBOR-wrapped flat), so no
 * UPLC evaluator is needed at run time; the prefix is embedded in `scripts-data.ts`.
 */
import { blake2b } from '@noble/hashes/blake2.js';
import { CharmsError } from '../errors.js';
import { concatBytes, fromHex } from '../util/bytes.js';
import { PROXY_SCRIPT_PREFIX_HEX } from './scripts-data.js';

const PREFIX = fromHex(PROXY_SCRIPT_PREFIX_HEX);
const SUFFIX = Uint8Array.of(0x00, 0x01);

/** The applied proxy script (CBOR-wrapped flat, as on chain inside the witness-set bytes). */
export function appliedProxyScript(param: Uint8Array): Uint8Array {
  if (param.length !== 32) throw new CharmsError('INVALID_INPUT', `proxy script parameter: expected 32 bytes, got ${param.length}`);
  return concatBytes(PREFIX, param, SUFFIX);
}

/** Plutus V3 script hash: blake2b-224(0x03 ‖ CBOR-wrapped flat script). */
export const scriptHash = (script: Uint8Array): Uint8Array => blake2b(concatBytes(Uint8Array.of(0x03), script), { dkLen: 28 });
