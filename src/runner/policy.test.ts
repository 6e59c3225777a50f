import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CharmsError } from '../errors.js';
import { fromHex } from '../util/bytes.js';
import { FUEL_VECTORS } from './fixtures/fuel-vectors.js';
import { compileWatFixture } from './fixtures/wat.js';
import { runApp, validateAppModule } from './index.js';

function refused(wasm: Uint8Array, code: string, pattern: RegExp): void {
  assert.throws(
    () => validateAppModule(wasm),
    (e: unknown) => e instanceof CharmsError && e.code === code && pattern.test(e.message),
  );
}

test('validateAppModule accepts the vector modules and a module using all six WASI imports', async () => {
  for (const v of FUEL_VECTORS) validateAppModule(fromHex(v.hex));
  validateAppModule(await compileWatFixture('random-and-env'));
});

test('a WASI import the reference does not link is refused at load, naming it', async () => {
  refused(await compileWatFixture('forbidden-import'), 'UNSUPPORTED', /clock_time_get is not provided/);
});

test('a linked WASI name with the wrong signature is refused', async () => {
  refused(await compileWatFixture('wrong-signature'), 'UNSUPPORTED', /fd_write has type \(i32, i32\) -> \(i32\)/);
});

test('threads (shared memory, atomics) are refused', async () => {
  refused(await compileWatFixture('atomics'), 'UNSUPPORTED', /shared memory \(threads\/atomics\)/);
});

test('SIMD is refused', async () => {
  refused(await compileWatFixture('simd'), 'UNSUPPORTED', /SIMD/);
});

test('exception handling is refused', async () => {
  refused(await compileWatFixture('exceptions'), 'UNSUPPORTED', /exception handling/);
});

test('a module without `_start` or with a non-() -> () `_start` is refused', () => {
  // loop_sum with its `_start` export renamed to `_stArt`
  const v = FUEL_VECTORS[0]!.hex.replace('065f7374617274', '065f7374417274');
  refused(fromHex(v), 'INVALID_INPUT', /no exported function `_start`/);
  const versioned = FUEL_VECTORS[1]!.hex.replace('065f737461727400010a', '065f737461727400000a');
  refused(fromHex(versioned), 'INVALID_INPUT', /`_start` must have type \(\) -> \(\), got \(i32\) -> \(i32\)/);
});

test('malformed bytes are reported as INVALID_INPUT', () => {
  refused(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]), 'INVALID_INPUT', /magic/);
  refused(fromHex(FUEL_VECTORS[0]!.hex).subarray(0, 40), 'INVALID_INPUT', /past the end|malformed/);
});

test('runApp reports a refused module as a failed run instead of throwing', async () => {
  const r = await runApp({ wasm: await compileWatFixture('forbidden-import'), stdin: new Uint8Array(0), inThread: true });
  assert.equal(r.ok, false);
  assert.match(r.error ?? '', /clock_time_get/);
  assert.equal(r.cycles, 0n);
});
