import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { pureSha256, sha256, sha256Parts } from './sha256.js';
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
