import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { pureSha256, sha256, sha256Parts, sha256dInto } from './sha256.js';
import { toHex } from './bytes.js';

test('sha256: the native and the pure-JS hash give the same bytes (FIPS 180 vector, sizes around the block edges, 1 MiB)', () => {
  assert.equal(toHex(sha256(new TextEncoder().encode('abc'))), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  for (const n of [0, 1, 55, 56, 63, 64, 65, 1000, 1 << 20]) {
    const b = randomBytes(n);
    assert.deepEqual(sha256(b), pureSha256(b), `${n} bytes`);
  }
  assert.ok(sha256(new Uint8Array(1)) instanceof Uint8Array && !Buffer.isBuffer(sha256(new Uint8Array(1))));
});

test('sha256Parts hashes the concatenation of its parts, empty parts and no parts included', () => {
  const parts = [Uint8Array.of(1, 2, 3), new Uint8Array(0), new Uint8Array(1000).fill(7), Uint8Array.of(255)];
  const all = new Uint8Array([...parts[0]!, ...parts[2]!, ...parts[3]!]);
  assert.deepEqual(sha256Parts(parts), pureSha256(all));
  assert.deepEqual(sha256Parts([]), pureSha256(new Uint8Array(0)));
});

test('sha256dInto: the double hash of one, two or three ranges equals hashing their concatenation twice (sizes around the block edges and the native threshold)', () => {
  const src = randomBytes(6000);
  const out = new Uint8Array(40).fill(0xee);
  const twice = (b: Uint8Array) => pureSha256(pureSha256(b));
  for (const n of [0, 1, 31, 32, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 200, 1023, 1024, 1025, 5000]) {
    sha256dInto(src, out, 4, 3, 3 + n);
    assert.deepEqual(out.subarray(4, 36), twice(src.subarray(3, 3 + n)), `${n} bytes`);
    assert.equal(out[3], 0xee, 'nothing written before the offset');
    assert.equal(out[36], 0xee, 'nothing written after the digest');
  }
  // a segwit txid's three ranges: version, body, locktime; with parts of every size class
  for (const [a, b, c] of [
    [4, 100, 4],
    [4, 60, 4],
    [1, 0, 3],
    [64, 64, 64],
    [4, 1100, 4],
    [0, 56, 0],
  ] as const) {
    const s2 = 10 + a + 7;
    const s3 = s2 + b + 5;
    sha256dInto(src, out, 0, 10, 10 + a, s2, s2 + b, s3, s3 + c);
    const all = new Uint8Array([...src.subarray(10, 10 + a), ...src.subarray(s2, s2 + b), ...src.subarray(s3, s3 + c)]);
    assert.deepEqual(out.subarray(0, 32), twice(all), `${a}+${b}+${c} bytes`);
  }
  // output over its own input (merkle levels are computed in place)
  const level = Uint8Array.from(randomBytes(64));
  const expected = twice(level);
  sha256dInto(level, level, 0, 0, 64);
  assert.deepEqual(level.subarray(0, 32), expected);
});
