import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { bigEndianToBigInt, reversed } from './bytes.js';

test('bigEndianToBigInt: empty is 0, leading zeros are kept out, and it agrees with a shift per byte (sizes 1–64)', () => {
  assert.equal(bigEndianToBigInt(new Uint8Array(0)), 0n);
  assert.equal(bigEndianToBigInt(Uint8Array.of(0, 0, 1, 0)), 256n);
  assert.equal(bigEndianToBigInt(reversed(Uint8Array.of(1, 2))), 0x0201n);
  for (let n = 1; n <= 64; n++) {
    const b = randomBytes(n);
    let v = 0n;
    for (const x of b) v = (v << 8n) | BigInt(x);
    assert.equal(bigEndianToBigInt(b), v, `${n} bytes`);
  }
});
