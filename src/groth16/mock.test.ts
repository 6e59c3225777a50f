import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { MOCK_PROOF_BYTES, mockPublicInput, mockPublicValuesVariants, proveMock, verifyMockProof } from './mock.js';
import { verifySpellProof } from './verify.js';
import { CharmsError } from '../errors.js';
import { fromHex, toHex, utf8 } from '../util/bytes.js';
import { readSharedJson, sharedOrSkip } from '../testing/shared.js';

const isInvalid = (e: unknown) => e instanceof CharmsError && e.code === 'PROOF_INVALID';

test('proveMock makes fresh proofs that verify strictly, only for their public values', () => {
  const pv = utf8('public values');
  const proof = proveMock(pv);
  assert.equal(proof.length, MOCK_PROOF_BYTES);
  assert.equal(verifyMockProof(proof, pv), true);
  assert.equal(verifyMockProof(proof, utf8('public valuez')), false);
  assert.notEqual(toHex(proveMock(pv)), toHex(proof), 'fresh (r, s) per proof');
  verifySpellProof({ version: 15, publicValues: pv, proof, mock: true });
  assert.throws(() => verifySpellProof({ version: 15, publicValues: utf8('other'), proof, mock: true }), /mock Groth16 pairing check failed/);
  // a mock proof never passes as a real one
  assert.throws(() => verifySpellProof({ version: 15, publicValues: pv, proof, mock: false }), isInvalid);
  assert.throws(() => verifySpellProof({ version: 16, publicValues: pv, proof, mock: true }), /unsupported spell version: 16/);
  assert.ok(mockPublicInput(pv) < 1n << 248n);
  // the public input is the first 31 bytes of SHA-256, little-endian
  assert.equal(
    mockPublicInput(utf8('abc')),
    BigInt('0x' + toHex(fromHex('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad').subarray(0, 31).reverse())),
  );
});

test('mock vectors: deterministic no-zk proofs match, the Rust-made proof verifies for the pv it was made for', (t) => {
  if (!sharedOrSkip(t)) return;
  const h = readSharedJson('vectors', 'groth16-mock.json').historical_rust_mock_spell;
  const unprefixed = fromHex(h.pv_with_unprefixed_vk_string_hex);
  const with0x = fromHex(h.pv_with_0x_vk_string_hex);
  assert.equal(mockPublicInput(unprefixed).toString(16).padStart(64, '0'), h.public_input_fr_unprefixed_hex);
  assert.equal(toHex(proveMock(unprefixed, { r: 0n, s: 0n })), h.ts_no_zk_proof_for_unprefixed_pv_hex);
  assert.equal(toHex(proveMock(with0x, { r: 0n, s: 0n })), h.ts_no_zk_proof_for_0x_pv_hex);
  const rust = fromHex(h.rust_made_proof_hex);
  assert.equal(verifyMockProof(rust, unprefixed), true);
  assert.equal(verifyMockProof(rust, with0x), false);
  // what HEAD computes is the 0x form; the older framing is tried as well
  assert.deepEqual(mockPublicValuesVariants(with0x).map(toHex), [h.pv_with_0x_vk_string_hex, h.pv_with_unprefixed_vk_string_hex]);
  assert.deepEqual(mockPublicValuesVariants(unprefixed).map(toHex), [h.pv_with_unprefixed_vk_string_hex]);
  verifySpellProof({ version: h.version, publicValues: with0x, proof: rust, mock: true });
  // mock proofs verify only through the mock path
  assert.throws(() => verifySpellProof({ version: h.version, publicValues: with0x, proof: rust, mock: false }), isInvalid);
  for (let i = 0; i < 48; i++) {
    const bit = Math.floor((i * (MOCK_PROOF_BYTES * 8 - 1)) / 47);
    const bad = Uint8Array.from(rust);
    bad[bit >> 3]! ^= 1 << (bit & 7);
    assert.throws(() => verifySpellProof({ version: h.version, publicValues: with0x, proof: bad, mock: true }), isInvalid, `bit ${bit}`);
  }
});

test('malformed mock proofs are rejected as PROOF_INVALID', () => {
  const pv = utf8('pv');
  const good = proveMock(pv);
  const q = bls12_381.fields.Fp.ORDER;
  const at = (offset: number, bytes: Uint8Array) => {
    const p = Uint8Array.from(good);
    p.set(bytes, offset);
    return p;
  };
  const be48 = (v: bigint) => fromHex(v.toString(16).padStart(96, '0'));
  // A.x + q with the compression flag: the same x, non-canonically encoded
  const ax = BigInt('0x' + toHex(good.subarray(0, 48))) & ((1n << 381n) - 1n);
  const nonCanonical = be48(ax + q);
  nonCanonical[0]! |= good[0]! & 0xe0;
  // an x on the curve y² = x³ + 4 but outside the prime-order subgroup
  const { Fp } = bls12_381.fields;
  const onCurve = (x: bigint) => {
    try {
      Fp.sqrt(Fp.add(Fp.pow(x, 3n), 4n));
      return true;
    } catch {
      return false;
    }
  };
  let x = 1n;
  while (!onCurve(x)) x++;
  const outside = be48(x);
  outside[0]! |= 0x80;
  const noCompressionFlag = Uint8Array.from(good.subarray(0, 48));
  noCompressionFlag[0]! &= 0x7f;
  const cases: [string, Uint8Array][] = [
    ['short', good.subarray(0, 191)],
    ['long', new Uint8Array(193)],
    ['zero bytes', new Uint8Array(192)],
    ['A.x + q', at(0, nonCanonical)],
    ['A outside the subgroup', at(0, outside)],
    ['A without compression flag', at(0, noCompressionFlag)],
    ['B.x.c0 = q', at(96, be48(q))],
    ['C infinity flag with data', at(144, Uint8Array.of(0xc0, 1))],
  ];
  for (const [what, bad] of cases) {
    assert.throws(() => verifySpellProof({ version: 15, publicValues: pv, proof: bad, mock: true }), isInvalid, what);
  }
});
