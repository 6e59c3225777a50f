/**
 * Verifies a spell proof against its serialized public values, choosing the verifying key and
 * proof layout by protocol version (SP1 v5 shape up to protocol 11, v6 shape from 12) or the
 * mock verifier for mock spells. Browser-safe.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { CharmsError } from '../errors.js';
import { equalBytes, fromHex, toHex } from '../util/bytes.js';
import { groth16KeyFor, spellVkFor, vkRootFor, type Groth16KeyName } from './constants.js';
import { GROTH16_VKS_HEX } from './keys-data.js';
import { parseGnarkVk, verifyGnarkProof, type GnarkVerifyingKey } from './bn254.js';
import { verifyMockProof } from './mock.js';

const keys = new Map<Groth16KeyName, { vk: GnarkVerifyingKey; prefix: Uint8Array }>();
function key(name: Groth16KeyName) {
  let k = keys.get(name);
  if (!k) {
    const bytes = fromHex(GROTH16_VKS_HEX[name]);
    k = { vk: parseGnarkVk(bytes), prefix: sha256(bytes).subarray(0, 4) };
    keys.set(name, k);
  }
  return k;
}

/** SHA-256 with the top 3 bits cleared: SP1's committed-values digest as a BN254 scalar. */
export function committedValuesDigest(publicValues: Uint8Array): Uint8Array {
  const h = Uint8Array.from(sha256(publicValues));
  h[0]! &= 0x1f;
  return h;
}

const fail = (msg: string): never => {
  throw new CharmsError('PROOF_INVALID', `could not verify spell proof: ${msg}`);
};

export function verifySpellProof(args: { version: number; publicValues: Uint8Array; proof: Uint8Array; mock: boolean }): void {
  const { version, publicValues, proof, mock } = args;
  if (mock) {
    if (!verifyMockProof(proof, publicValues)) fail('mock proof does not verify for these public values');
    return;
  }
  const vkRoot = vkRootFor(version);
  const expectedLen = vkRoot ? 356 : 260;
  if (proof.length !== expectedLen) fail(`invalid proof (expected ${expectedLen} bytes, got ${proof.length})`);
  const k = key(groth16KeyFor(version));
  if (!equalBytes(proof.subarray(0, 4), k.prefix)) fail('groth16 vkey hash mismatch');
  const spellVk = spellVkFor(version, false);
  const digest = committedValuesDigest(publicValues);
  let inputs: Uint8Array[];
  let gnark: Uint8Array;
  if (vkRoot) {
    const exitCode = proof.subarray(4, 36);
    const root = proof.subarray(36, 68);
    const nonce = proof.subarray(68, 100);
    if (!equalBytes(root, vkRoot)) fail(`vk root mismatch: ${toHex(root)}`);
    if (exitCode.some((b) => b !== 0)) fail('non-zero exit code');
    inputs = [spellVk, digest, exitCode, root, nonce];
    gnark = proof.subarray(100);
  } else {
    inputs = [spellVk, digest];
    gnark = proof.subarray(4);
  }
  if (!verifyGnarkProof(k.vk, gnark, inputs)) fail('groth16 pairing check failed');
}

/** Parses every verifying key now (so the first verification is not slower than the rest). */
export function prepareProofKeys(): void {
  for (const name of Object.keys(GROTH16_VKS_HEX) as Groth16KeyName[]) key(name);
}
