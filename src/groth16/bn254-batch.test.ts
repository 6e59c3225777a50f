/**
 * The backends' batch check itself (not the per-proof fallback behind verifySpellProofs): a batch
 * of valid proofs passes in one random linear combination, and one false proof makes it fail.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nobleBackend, type Bn254Backend, type PreparedProof } from './bn254.js';
import { loadMclBackend } from './bn254-mcl.js';
import { GROTH16_VKS_HEX, groth16KeyFor } from './constants.js';
import { BN254_R, parseGnarkProof, parseGnarkVerifyingKey } from './gnark.js';
import { fromHex } from '../util/bytes.js';
import { readSharedJson, sharedOrSkip } from '../testing/shared.js';

interface RealVector {
  version: string;
  public_inputs_be_hex: string[];
  proof_hex: string;
}

for (const name of ['noble', 'mcl-wasm'] as const) {
  test(`[${name}] checkBatch accepts valid proofs together and rejects a batch with one false proof`, async (t) => {
    if (!sharedOrSkip(t)) return;
    const backend: Bn254Backend = name === 'noble' ? nobleBackend : await loadMclBackend();
    for (const v of readSharedJson<RealVector[]>('vectors', 'groth16-real-btc.json')) {
      const key = backend.prepareKey(parseGnarkVerifyingKey(fromHex(GROTH16_VKS_HEX[groth16KeyFor(Number(v.version))])));
      const bytes = fromHex(v.proof_hex);
      const proof = parseGnarkProof(bytes.subarray(bytes.length - 256));
      const inputs = v.public_inputs_be_hex.map((h) => BigInt(`0x${h}`) % BN254_R);
      const good = backend.prepareProof(key, proof, inputs);
      assert.equal(backend.check(key, good), true);
      // a false statement: the same proof for a different committed-values digest
      const wrong = backend.prepareProof(
        key,
        proof,
        inputs.map((x, i) => (i === 1 ? (x + 1n) % BN254_R : x)),
      );
      assert.equal(backend.check(key, wrong), false);
      const batch: PreparedProof[] = [good, good, good, good];
      assert.equal(backend.checkBatch(key, batch), true, `v${v.version}: valid batch`);
      assert.equal(backend.checkBatch(key, [good]), true);
      for (let at = 0; at < batch.length; at++) {
        const mixed = batch.map((p, i) => (i === at ? wrong : p));
        assert.equal(backend.checkBatch(key, mixed), false, `v${v.version}: false proof at ${at}`);
      }
      // two false proofs that would cancel in an unweighted sum do not cancel with random weights:
      // the proof of x+1 and of x−1 sum to twice the proof of x
      const wrong2 = backend.prepareProof(
        key,
        proof,
        inputs.map((x, i) => (i === 1 ? (x - 1n + BN254_R) % BN254_R : x)),
      );
      assert.equal(backend.checkBatch(key, [wrong, wrong2]), false, `v${v.version}: cancelling pair`);
    }
  });
}
