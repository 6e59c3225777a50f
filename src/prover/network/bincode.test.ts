import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { skipOrFail } from '../../testing/require.js';
import { toHex } from '../../util/bytes.js';
import {
  committedDigestDecimal,
  decodeGroth16Proof,
  encodeCompressedProof,
  encodeGroth16Proof,
  spliceCompressedProof,
  stdinWithInput,
  stdinWithProof,
} from './bincode.js';
import { readZstdRawFrame, zstdRawFrame } from './zstd.js';
import { PROOF_WRAPPER_VK_HASH, SPELL_CHECKER_VK_BIN, SPELL_CHECKER_VK_HASH, wordsFromBytes32, vkHashFromWords } from './charms.js';

const le64 = (n: number) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b.toString('hex');
};

test('SP1Stdin bincode for both stages', () => {
  const cbor = Uint8Array.of(0xa1, 0x61, 0x61, 0x01);
  assert.equal(toHex(stdinWithInput(cbor)), le64(1) + le64(4) + 'a1616101' + le64(0) + le64(0));
  const rp = Uint8Array.of(9, 9, 9);
  assert.equal(
    toHex(stdinWithProof(cbor, rp, SPELL_CHECKER_VK_BIN)),
    le64(1) + le64(4) + 'a1616101' + le64(0) + le64(1) + '090909' + toHex(SPELL_CHECKER_VK_BIN),
  );
  assert.throws(() => stdinWithProof(cbor, rp, new Uint8Array(103)));
});

test('program vk hashes follow from the published constants', () => {
  assert.equal(toHex(SPELL_CHECKER_VK_HASH), '236d14fd434c2c364f9a29b7439e2a2e4149e22b654bd417707a834e34974771');
  assert.equal(toHex(PROOF_WRAPPER_VK_HASH), '212bcb7a313e8140087ddc295801b4f91a9227222ab5a8a33c19ab963de0ae52');
  assert.equal(SPELL_CHECKER_VK_BIN.length, 104);
  // round trip: words → bytes32 → words
  const words = [1, 2, 3, 0x7fffffff, 5, 6, 7, 8];
  let v = 0n;
  for (const w of words) v = (v << 31n) | BigInt(w);
  assert.deepEqual(wordsFromBytes32(Buffer.from(v.toString(16).padStart(64, '0'), 'hex')), words);
  assert.equal(vkHashFromWords(words).length, 32);
});

test('Groth16 ProofFromNetwork decodes to the 356 on-chain bytes; malformed input is refused', () => {
  const encodedProof = randomBytes(352);
  const vkeyHash = randomBytes(32);
  const pv = Uint8Array.of(1, 2, 3);
  const bytes = encodeGroth16Proof({
    publicInputs: ['1', committedDigestDecimal(pv), '0', '4', '0'],
    encodedProof,
    rawProof: 'ab',
    vkeyHash,
    publicValues: pv,
    sp1Version: 'v6.1.0',
  });
  const g = decodeGroth16Proof(bytes);
  assert.equal(g.onChainBytes.length, 356);
  assert.equal(toHex(g.onChainBytes), toHex(vkeyHash.subarray(0, 4)) + toHex(encodedProof));
  assert.deepEqual(g.publicValues, pv);
  assert.equal(g.sp1Version, 'v6.1.0');
  for (const cut of [0, 3, 10, bytes.length - 1]) assert.throws(() => decodeGroth16Proof(bytes.subarray(0, cut)), /malformed/);
  assert.throws(() => decodeGroth16Proof(Uint8Array.from([...bytes, 0])), /after the proof/);
  const wrongTag = Uint8Array.from(bytes);
  wrongTag[0] = 1;
  assert.throws(() => decodeGroth16Proof(wrongTag), /tag/);
  // huge length prefixes do not allocate
  const huge = Uint8Array.from(bytes);
  huge.set([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f], 4);
  assert.throws(() => decodeGroth16Proof(huge), /length past the end/);
});

test('compressed proof splice: verbatim recursion proof for random pv, versions and adversarial bodies', () => {
  for (let i = 0; i < 200; i++) {
    const rp = randomBytes(i % 7 === 0 ? 0 : 1 + ((i * 131) % 2000));
    // adversarial: the recursion proof contains a copy of the expected tail
    const pv = randomBytes(1 + (i % 90));
    const version = ['v6.1.0', 'v6.2.0-rc1', 'x'][i % 3]!;
    const body = i % 5 === 0 ? Buffer.concat([rp, Buffer.from(le64(pv.length), 'hex'), pv]) : rp;
    const p = encodeCompressedProof(body, pv, version);
    const s = spliceCompressedProof(p, pv);
    assert.equal(toHex(s.recursionProof), toHex(body));
    assert.equal(s.sp1Version, version);
  }
  const pv = randomBytes(40);
  const p = encodeCompressedProof(randomBytes(100), pv, 'v6.1.0');
  const other = Uint8Array.from(pv);
  other[0]! ^= 1;
  assert.throws(
    () => spliceCompressedProof(p, other),
    (e: Error & { code?: string }) => e.code === 'PROVER_TRANSIENT' && /expected public values/.test(e.message),
  );
  assert.throws(
    () =>
      spliceCompressedProof(
        encodeGroth16Proof({
          publicInputs: ['', '', '', '', ''],
          encodedProof: new Uint8Array(),
          rawProof: '',
          vkeyHash: new Uint8Array(32),
          publicValues: pv,
          sp1Version: 'v',
        }),
        pv,
      ),
    /tag/,
  );
});

test('zstd raw frames decode with the zstd CLI (0, 1, 128 KiB, 128 KiB + 1, 1 MiB)', (t) => {
  const sizes = [0, 1, 128 * 1024, 128 * 1024 + 1, 1024 * 1024];
  for (const n of sizes) {
    const data = randomBytes(n);
    assert.deepEqual(Buffer.from(readZstdRawFrame(zstdRawFrame(data))), data);
  }
  if (spawnSync('zstd', ['--version']).status !== 0) return skipOrFail(t, 'zstd CLI not found (Debian zstd)');
  for (const n of sizes) {
    const data = randomBytes(n);
    const r = spawnSync('zstd', ['-d', '-c', '-q'], { input: zstdRawFrame(data), maxBuffer: 1 << 24 });
    assert.equal(r.status, 0, r.stderr.toString());
    assert.ok(Buffer.compare(r.stdout, data) === 0, `size ${n}`);
  }
});
