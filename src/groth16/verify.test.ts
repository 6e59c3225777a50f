import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bn254 } from '@noble/curves/bn254.js';
import { committedValuesDigest, initPairingBackend, proofBackend, verifySpellProof, type PairingBackendName } from './verify.js';
import { spellVkFor } from './constants.js';
import { BN254_P } from './gnark.js';
import { CharmsError } from '../errors.js';
import { concatBytes, fromHex, toHex } from '../util/bytes.js';
import { readSharedJson, sharedOrSkip } from '../testing/shared.js';

interface RealVector {
  version: number;
  public_values_hex: string;
  committed_values_digest: string;
  public_inputs_be_hex: string[];
  proof_hex: string;
}

const realVectors = () =>
  readSharedJson<RealVector[]>('vectors', 'groth16-real-btc.json').map((v) => ({
    ...v,
    version: Number(v.version),
    publicValues: fromHex(v.public_values_hex),
    proof: fromHex(v.proof_hex),
  }));

const rejects = (f: () => void, message: string, pattern?: RegExp) =>
  assert.throws(f, (e: unknown) => e instanceof CharmsError && e.code === 'PROOF_INVALID' && (!pattern || pattern.test(e.message)), message);

const be32 = (v: bigint) => fromHex(v.toString(16).padStart(64, '0'));

/** A point on the BN254 twist that is not in the prime-order subgroup, gnark-encoded (A1 first). */
function nonSubgroupG2(): Uint8Array {
  const { Fp2 } = bn254.fields;
  const b = Fp2.div(Fp2.fromBigTuple([3n, 0n]), Fp2.fromBigTuple([9n, 1n]));
  for (let i = 1n; ; i++) {
    const x = Fp2.fromBigTuple([i, 7n]);
    let y;
    try {
      y = Fp2.sqrt(Fp2.add(Fp2.pow(x, 3n), b));
    } catch {
      continue; // not a square: no point with this x
    }
    assert.throws(() => bn254.G2.Point.fromAffine({ x, y }).assertValidity()); // really outside G2
    return concatBytes(be32(x.c1), be32(x.c0), be32(y.c1), be32(y.c0));
  }
}

const BACKENDS: PairingBackendName[] = ['noble', 'mcl-wasm'];

for (const kind of BACKENDS) {
  test(`[${kind}] real SP1 proofs verify with the inputs the vectors list`, async (t) => {
    if (!sharedOrSkip(t)) return;
    assert.equal(await initPairingBackend(kind), kind);
    assert.equal(proofBackend(), kind);
    for (const v of realVectors()) {
      const digest = committedValuesDigest(v.publicValues);
      assert.equal(toHex(digest), v.committed_values_digest);
      const expectedInputs = [toHex(spellVkFor(v.version, false)), v.committed_values_digest];
      if (v.version >= 12) for (let o = 4; o < 100; o += 32) expectedInputs.push(toHex(v.proof.subarray(o, o + 32)));
      assert.deepEqual(v.public_inputs_be_hex, expectedInputs, `inputs of v${v.version}`);
      verifySpellProof({ version: v.version, publicValues: v.publicValues, proof: v.proof, mock: false });
    }
  });

  test(`[${kind}] flipping any bit of a proof, or bits across the public values, fails`, async (t) => {
    if (!sharedOrSkip(t)) return;
    await initPairingBackend(kind);
    for (const v of realVectors()) {
      const { version, publicValues, proof } = v;
      for (let bit = 0; bit < proof.length * 8; bit++) {
        // the pure-JS backend is slow: every 8th nonce bit only (the nonce needs a full pairing)
        if (kind === 'noble' && bit >= 68 * 8 && bit < 100 * 8 && version >= 12 && bit % 8 !== 0) continue;
        const bad = Uint8Array.from(proof);
        bad[bit >> 3]! ^= 1 << (bit & 7);
        rejects(() => verifySpellProof({ version, publicValues, proof: bad, mock: false }), `v${version} proof bit ${bit}`);
      }
      const flips = kind === 'noble' ? 12 : 40; // spread over the whole public values
      for (let i = 0; i < flips; i++) {
        const byte = Math.floor((i * (publicValues.length - 1)) / (flips - 1));
        const bad = Uint8Array.from(publicValues);
        bad[byte]! ^= 1 << (i & 7);
        rejects(() => verifySpellProof({ version, publicValues: bad, proof, mock: false }), `v${version} pv byte ${byte}`, /pairing check failed/);
      }
      rejects(() => verifySpellProof({ version, publicValues: concatBytes(publicValues, new Uint8Array(1)), proof, mock: false }), 'pv + 1 byte');
    }
  });

  test(`[${kind}] a proof does not verify under another version's key or vk`, async (t) => {
    if (!sharedOrSkip(t)) return;
    await initPairingBackend(kind);
    for (const v of realVectors()) {
      for (let other = 0; other <= 15; other++) {
        if (other === v.version) continue;
        rejects(() => verifySpellProof({ version: other, publicValues: v.publicValues, proof: v.proof, mock: false }), `v${v.version} proof as v${other}`);
      }
      rejects(() => verifySpellProof({ version: 16, publicValues: v.publicValues, proof: v.proof, mock: false }), 'v16', /unsupported spell version: 16/);
      // real proofs are never accepted by the mock verifier
      rejects(
        () => verifySpellProof({ version: v.version, publicValues: v.publicValues, proof: v.proof, mock: true }),
        'mock path',
        /mock proof must be 192 bytes/,
      );
    }
  });

  test(`[${kind}] malformed points and lengths are rejected as PROOF_INVALID`, async (t) => {
    if (!sharedOrSkip(t)) return;
    await initPairingBackend(kind);
    const v12 = realVectors().find((v) => v.version === 12)!;
    const v8 = realVectors().find((v) => v.version === 8)!;
    for (const { version, publicValues, proof } of [v12, v8]) {
      const g = proof.length - 256; // gnark proof offset: A at g, B at g+64, C at g+192
      const coord = (at: number) => BigInt('0x' + toHex(proof.subarray(at, at + 32)));
      const withBytes = (at: number, bytes: Uint8Array) => {
        const p = Uint8Array.from(proof);
        p.set(bytes, at);
        return p;
      };
      const check = (bad: Uint8Array, what: string, pattern: RegExp) =>
        rejects(() => verifySpellProof({ version, publicValues, proof: bad, mock: false }), `v${version}: ${what}`, pattern);
      check(withBytes(g, new Uint8Array(64)), 'A = (0, 0)', /A is the point at infinity/);
      check(withBytes(g + 64, new Uint8Array(128)), 'B = 0', /B is the point at infinity/);
      check(withBytes(g, be32(coord(g) + BN254_P)), 'A.x + p (non-canonical)', /A\.x is not below the field modulus/);
      check(withBytes(g + 224, be32(coord(g + 224) + BN254_P)), 'C.y + p (non-canonical)', /C\.y is not below the field modulus/);
      check(withBytes(g + 64, be32(coord(g + 64) + BN254_P)), 'B.x.A1 + p (non-canonical)', /B\.x\.A1 is not below/);
      check(withBytes(g + 32, be32((coord(g + 32) + 1n) % BN254_P)), 'A off the curve', /A is not on the curve/);
      check(withBytes(g + 192, be32(3n)), 'C off the curve', /C is not on the curve/);
      check(withBytes(g + 64, concatBytes(proof.subarray(g + 96, g + 128), proof.subarray(g + 64, g + 96))), 'B.x halves swapped', /B is not a valid G2 point/);
      check(withBytes(g + 64, nonSubgroupG2()), 'B outside the G2 subgroup', /B is not a valid G2 point/);
      for (const len of [0, 4, proof.length - 1, proof.length + 1, 260 + 356]) {
        const bad = len <= proof.length ? proof.subarray(0, len) : concatBytes(proof, new Uint8Array(len - proof.length));
        check(bad, `length ${len}`, /proof must be \d+ bytes/);
      }
    }
    const exit = Uint8Array.from(v12.proof);
    exit[35] = 1;
    rejects(() => verifySpellProof({ version: 12, publicValues: v12.publicValues, proof: exit, mock: false }), 'exit code', /exit code is not zero/);
    const root = Uint8Array.from(v12.proof);
    root.set(fromHex('002f850ee998974d6cc00e50cd0814b098c05bfade466d28573240d057f25352'), 36); // the V14 root
    rejects(() => verifySpellProof({ version: 12, publicValues: v12.publicValues, proof: root, mock: false }), 'vk root', /vk root 002f850e/);
  });
}

test('initPairingBackend switches back to the pure-JS backend', async () => {
  assert.equal(await initPairingBackend('mcl-wasm'), 'mcl-wasm');
  assert.equal(await initPairingBackend('noble'), 'noble');
  assert.equal(proofBackend(), 'noble');
});
