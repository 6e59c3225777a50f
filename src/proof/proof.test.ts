import { test } from 'node:test';
import assert from 'node:assert/strict';
import { verifySpellProof, committedValuesDigest } from './verify.js';
import { proveMock, verifyMockProof, mockPublicInput } from './mock.js';
import { spellVkFor, groth16KeyFor } from './constants.js';
import { readSharedJson, sharedOrSkip } from '../testing/shared.js';
import { fromHex, toHex } from '../util/bytes.js';
import { CharmsError } from '../errors.js';

test('real SP1 Groth16 proofs verify; any flipped bit of proof or public values fails', (t) => {
  if (!sharedOrSkip(t)) return;
  const vectors = readSharedJson<{ version: string; public_values_hex: string; proof_hex: string; committed_values_digest: string }[]>('vectors', 'groth16-real-btc.json');
  for (const v of vectors) {
    const version = Number(v.version);
    const publicValues = fromHex(v.public_values_hex);
    const proof = fromHex(v.proof_hex);
    assert.equal(toHex(committedValuesDigest(publicValues)), v.committed_values_digest);
    verifySpellProof({ version, publicValues, proof, mock: false });
    for (const i of [0, 3, 4, 40, 70, 110, 150, 200, proof.length - 1]) {
      const bad = Uint8Array.from(proof);
      bad[i]! ^= 0x01;
      assert.throws(() => verifySpellProof({ version, publicValues, proof: bad, mock: false }), CharmsError, `proof byte ${i}`);
    }
    const badPv = Uint8Array.from(publicValues);
    badPv[badPv.length - 1]! ^= 0x80;
    assert.throws(() => verifySpellProof({ version, publicValues: badPv, proof, mock: false }), /pairing check failed/);
    // another version's key does not accept it
    const other = version >= 12 ? 8 : 12;
    assert.throws(() => verifySpellProof({ version: other, publicValues, proof, mock: false }), CharmsError);
  }
});

test('malformed proofs are rejected without crashing', (t) => {
  if (!sharedOrSkip(t)) return;
  const v = readSharedJson<{ version: string; public_values_hex: string; proof_hex: string }[]>('vectors', 'groth16-real-btc.json')[1]!;
  const proof = fromHex(v.proof_hex);
  const pv = fromHex(v.public_values_hex);
  const withPoint = (at: number, bytes: Uint8Array) => {
    const p = Uint8Array.from(proof);
    p.set(bytes, at);
    return p;
  };
  const cases = [
    proof.subarray(0, 200),
    withPoint(4, new Uint8Array(64)), // A = (0, 0)
    withPoint(4, new Uint8Array(32).fill(0xff)), // A.x ≥ p
    withPoint(4 + 64, new Uint8Array(32).fill(0x11)), // B off curve
  ];
  for (const c of cases) assert.throws(() => verifySpellProof({ version: 8, publicValues: pv, proof: c, mock: false }), (e: unknown) => e instanceof CharmsError && e.code === 'PROOF_INVALID');
});

test('mock proofs: made here, verified strictly, bound to their public values; historical ones accepted', (t) => {
  const pv = new TextEncoder().encode('public values');
  const proof = proveMock(pv);
  assert.equal(proof.length, 192);
  assert.ok(verifyMockProof(proof, pv));
  assert.equal(verifyMockProof(proof, new TextEncoder().encode('other values')), false);
  assert.notEqual(toHex(proveMock(pv)), toHex(proof), 'fresh randomness per proof');
  assert.throws(() => verifySpellProof({ version: 15, publicValues: pv, proof, mock: false }), CharmsError);
  verifySpellProof({ version: 15, publicValues: pv, proof, mock: true });
  assert.ok(mockPublicInput(pv) < 1n << 248n);
  if (!sharedOrSkip(t)) return;
  const h = readSharedJson('vectors', 'groth16-mock.json').historical_rust_mock_spell;
  assert.ok(verifyMockProof(fromHex(h.rust_made_proof_hex), fromHex(h.pv_with_unprefixed_vk_string_hex)));
  assert.equal(verifyMockProof(fromHex(h.rust_made_proof_hex), fromHex(h.pv_with_0x_vk_string_hex)), false);
});

test('constants: spell vks and key selection per version', () => {
  assert.equal(toHex(spellVkFor(15, false)), '00425796f4c4fa050043eee14d801b4f935244e44aad6a28de0cd5cb3de0ae52');
  assert.equal(toHex(spellVkFor(12, false)), '00cd44537c67da0dc50b88e794deed43c4507a862070ed83c99941789811a6a0');
  assert.equal(toHex(spellVkFor(3, true)), '7c38e8639a2eac0074cee920982b92376513e8940f4a7ca6859f17a728af5b0e');
  assert.deepEqual([0, 2, 7, 12, 13, 14, 15].map(groth16KeyFor), ['v0', 'v1', 'v4', 'v12', 'v12', 'v14', 'v14']);
  assert.throws(() => spellVkFor(16, false), /unsupported spell version: 16/);
});
