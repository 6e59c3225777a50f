import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeCbor, encodeCbor, CborWriter } from './cbor.js';
import { ValueMap, Tagged, valueEquals, type Value } from './value.js';
import { fromHex, toHex } from '../util/bytes.js';
import { CharmsError } from '../errors.js';

const hex = (v: Value) => toHex(encodeCbor(v));

test('integers use the shortest head, negatives major 1, beyond u64 bignum tags', () => {
  assert.equal(hex(0n), '00');
  assert.equal(hex(23n), '17');
  assert.equal(hex(24n), '1818');
  assert.equal(hex(255n), '18ff');
  assert.equal(hex(256n), '190100');
  assert.equal(hex(69420n), '1a00010f2c');
  assert.equal(hex(11600000000n), '1b00000002b369f400');
  assert.equal(hex((1n << 64n) - 1n), '1bffffffffffffffff');
  assert.equal(hex(-1n), '20');
  assert.equal(hex(-25n), '3818');
  assert.equal(hex(1n << 64n), 'c249010000000000000000');
  assert.equal(hex(-(1n << 64n) - 1n), 'c349010000000000000000');
});

test('floats take the shortest width that round-trips (ciborium)', () => {
  assert.equal(hex(2.0), 'f94000');
  assert.equal(hex(1.5), 'f93e00');
  assert.equal(hex(100000.0), 'fa47c35000');
  assert.equal(hex(0.1), 'fb3fb999999999999a');
  assert.equal(hex(0), 'f90000');
  assert.equal(hex(-0), 'f98000');
  assert.equal(hex(65504), 'f97bff');
  assert.equal(hex(2 ** -24), 'f90001');
  assert.equal(hex(Infinity), 'f97c00');
  for (const x of [2.0, 1.5, 100000.0, 0.1, -3.25, 1e300, 2 ** -24, 65504, 1 / 3]) assert.equal(decodeCbor(encodeCbor(x)), x);
});

test('maps keep their entry order; text, bytes, tags, simple values', () => {
  const m = new ValueMap([
    ['b', 1n],
    ['1', 2n],
    [0n, null],
  ]);
  assert.equal(hex(m), 'a3616201613102 00f6'.replace(/ /g, ''));
  assert.equal(hex(new Uint8Array([1, 2])), '420102');
  assert.equal(hex(new Tagged(24n, 'x')), 'd8186178');
  assert.equal(hex([true, false, null, undefined]), '84f5f4f6f7');
  assert.ok(valueEquals(decodeCbor(encodeCbor(m)), m));
});

test('uint arrays: bytes >= 24 take two bytes', () => {
  const w = new CborWriter();
  w.uintArray(new Uint8Array([0, 23, 24, 255]));
  assert.equal(toHex(w.finish()), '840017181818ff');
});

test('decoder accepts indefinite lengths and rejects malformed input with CharmsError', () => {
  assert.deepEqual(decodeCbor(fromHex('9f0102ff')), [1n, 2n]);
  assert.deepEqual(decodeCbor(fromHex('5f42010241 03ff'.replace(/ /g, ''))), new Uint8Array([1, 2, 3]));
  for (const bad of ['', '18', '5a0000ffff', 'ff', '1c', '62c328', '0000', '9b00000000ffffffff']) {
    assert.throws(
      () => decodeCbor(fromHex(bad)),
      (e: unknown) => e instanceof CharmsError && e.code === 'CBOR_DECODE',
      bad,
    );
  }
  assert.equal(decodeCbor(fromHex('0000'), { allowTrailing: true }), 0n);
});

test('an indefinite-length string of 150 000 chunks decodes without exhausting the stack', () => {
  for (const major of [0x5f, 0x7f]) {
    const n = 150_000;
    const bytes = new Uint8Array(n * 2 + 2);
    bytes[0] = major;
    for (let i = 0; i < n; i++) {
      bytes[1 + i * 2] = major === 0x5f ? 0x41 : 0x61; // one-byte chunk
      bytes[2 + i * 2] = 0x61; // 'a'
    }
    bytes[bytes.length - 1] = 0xff;
    const v = decodeCbor(bytes);
    const len = major === 0x5f ? (v as Uint8Array).length : (v as string).length;
    assert.equal(len, n);
  }
});

test('nesting is bounded: 100 000 nested arrays and tags are a CBOR_DECODE error, not a stack overflow', () => {
  for (const head of [0x81, 0x9f, 0xc1, 0xa1]) {
    const bytes = new Uint8Array(100_000).fill(head);
    assert.throws(
      () => decodeCbor(bytes),
      (e: unknown) => e instanceof CharmsError && e.code === 'CBOR_DECODE',
    );
  }
});

test('each chunk of an indefinite text string is UTF-8 on its own (a character split across chunks is refused)', () => {
  assert.equal(decodeCbor(fromHex('7f62c3a96121ff')), 'é!');
  assert.throws(() => decodeCbor(fromHex('7f61c361a9ff')), /text chunk is not valid UTF-8/);
});
