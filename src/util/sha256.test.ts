import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { pureSha256, sha256 } from './sha256.js';
import { toHex } from './bytes.js';

test('sha256: the native and the pure-JS hash give the same bytes (FIPS 180 vector, sizes around the block edges, 1 MiB)', () => {
  assert.equal(toHex(sha256(new TextEncoder().encode('abc'))), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  for (const n of [0, 1, 55, 56, 63, 64, 65, 1000, 1 << 20]) {
    const b = randomBytes(n);
    assert.deepEqual(sha256(b), pureSha256(b), `${n} bytes`);
  }
  assert.ok(sha256(new Uint8Array(1)) instanceof Uint8Array && !Buffer.isBuffer(sha256(new Uint8Array(1))));
});
