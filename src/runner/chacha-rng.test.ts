import assert from 'node:assert/strict';
import { test } from 'node:test';
import { toHex } from '../util/bytes.js';
import { ChaCha12Rng } from './chacha-rng.js';

test('ChaCha12Rng matches rand StdRng: zero key keystream (Strombergson TC1, 12 rounds)', () => {
  const rng = new ChaCha12Rng(new Uint8Array(32));
  const out = new Uint8Array(32);
  rng.fillBytes(out);
  // rand's test expects u128 0xd583265f12ce1f8153f955076a9af49b first (little-endian bytes)
  assert.equal(toHex(out.subarray(0, 16)), '9bf49a6a0755f953811fce125f2683d5');
  assert.equal(toHex(out.subarray(16, 32)), '0429c3bb49e074147e0089a52eae155f');
});

test('ChaCha12Rng matches rand StdRng construction vector (next_u64)', () => {
  const seed = new Uint8Array(32);
  seed.set([1, 0, 0, 0, 23, 0, 0, 0, 200, 1, 0, 0, 210, 30, 0, 0]);
  assert.equal(new ChaCha12Rng(seed).nextU64(), 10719222850664546238n);
});

test('ChaCha12Rng fillBytes discards the unused bytes of a partly used word', () => {
  const a = new ChaCha12Rng(new Uint8Array(32));
  const b = new ChaCha12Rng(new Uint8Array(32));
  const first = new Uint8Array(3);
  a.fillBytes(first);
  const next = new Uint8Array(4);
  a.fillBytes(next);
  const all = new Uint8Array(8);
  b.fillBytes(all);
  assert.deepEqual(first, all.subarray(0, 3));
  assert.deepEqual(next, all.subarray(4, 8));
});

test('ChaCha12Rng crosses its 4-block buffer boundary seamlessly', () => {
  const a = new ChaCha12Rng(new Uint8Array(32).fill(9));
  const b = new ChaCha12Rng(new Uint8Array(32).fill(9));
  const big = new Uint8Array(300);
  a.fillBytes(big);
  const parts = new Uint8Array(300);
  for (let i = 0; i < 300; i += 20) b.fillBytes(parts.subarray(i, i + 20));
  assert.deepEqual(parts, big);
});
