import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CharmsError } from '../errors.js';
import { ByteReader, ByteWriter } from './byte-io.js';
import { toHex } from './bytes.js';

test('ByteWriter grows past its initial size and writes each integer form in its byte order', () => {
  const w = new ByteWriter(16);
  w.byte(0xab).u16be(0x0102).u32le(0x03040506).u32be(0x0708090a).u64le(0x1122334455667788n).u64be(-1n);
  w.f32be(1.5).f64be(-2);
  const big = new Uint8Array(1000).fill(7);
  w.bytes(big);
  const out = w.finish();
  assert.equal(out.length, 1 + 2 + 4 + 4 + 8 + 8 + 4 + 8 + 1000);
  assert.equal(w.length, out.length);
  assert.equal(toHex(out.subarray(0, 39)), 'ab' + '0102' + '06050403' + '0708090a' + '8877665544332211' + 'ffffffffffffffff' + '3fc00000' + 'c000000000000000');
  assert.deepEqual(out.subarray(39), big);
  // finish() is a copy: writing on does not change it
  w.byte(1);
  assert.equal(out.length, 1039);
});

test('ByteReader reads in bounds and throws the codec error, naming what and where, past the end', () => {
  const bytes = Uint8Array.from([1, 2, 0, 3, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 9, 9]);
  const r = new ByteReader(bytes, (what, at) => new CharmsError('INVALID_TX', `end reading ${what} at ${at}`));
  assert.equal(r.u8(), 1);
  assert.equal(r.u16le(), 2);
  assert.equal(r.u32le(), 3);
  assert.equal(r.pos, 7);
  assert.equal(r.u64le(), 4n);
  const view = r.take(1);
  const copy = r.copy(1);
  assert.equal(r.done, true);
  assert.equal(r.remaining, 0);
  bytes[15] = 0x55;
  bytes[16] = 0x66;
  assert.equal(view[0], 0x55, 'take() is a view into the input');
  assert.equal(copy[0], 9, 'copy() is a copy');
  assert.throws(
    () => r.u8('flag'),
    (e: unknown) => e instanceof CharmsError && e.code === 'INVALID_TX' && e.message === 'end reading flag at 17',
  );
  assert.throws(() => r.take(-1), CharmsError);
});

test('ByteReader reads a window of the input only', () => {
  const r = new ByteReader(Uint8Array.from([0, 1, 2, 3, 4]), (what, at) => new CharmsError('INVALID_INPUT', `${what}@${at}`), 1, 3);
  assert.equal(r.remaining, 2);
  assert.deepEqual([...r.take(2)], [1, 2]);
  assert.throws(() => r.u8(), /byte@3/);
  assert.throws(() => new ByteReader(new Uint8Array(2), (w) => new CharmsError('INVALID_INPUT', w), 0, 3), /range 0\.\.3 of 2 bytes/);
});
