/**
 * Hostile app modules and contracts: malformed modules are refused with a CharmsError naming the
 * problem, valid edge cases run, memory/tables/host calls are bounded, and the work of preparing
 * a module happens off the calling thread.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { CharmsError } from '../errors.js';
import { fromHex } from '../util/bytes.js';
import { compileWatFixture } from './fixtures/wat.js';
import { DEFAULT_RUNNER_LIMITS, runApp, shutdownRunner, validateAppModule } from './index.js';
import { instrumentationsInThisThread } from './instrument.js';
import { WasmWriter } from './wasm-bytes.js';

after(() => shutdownRunner());

/** Modules found by fuzzing that made the parser throw TypeError/RangeError. */
const MALFORMED = [
  // code entry longer than the code section
  '0061736d010000000104016000000302010005030100010606017f0141000b071302066d656d6f72790200065f737461727400000a0a011800410123006e1a0b',
  '0061736d01000000010401600000030201000503010001071302066d656c6b72790200065f737461727400000a0901180003400c000b0b',
  // function type index out of range
  '0061736d010000000108026000017f6000000303025e010503010001072303066d656d6f727902000d5f5f6170705f76657273696f6e0000065f737461727400010a0902040041030b02000b',
  // export pointing past the function index space
  '0061736d010000000104016000000302010005030100010606017f0141000b071302066d656d6f72790200065f737461727400050a0901070041011a0b',
];

test('malformed modules are INVALID_INPUT CharmsErrors naming the problem, and runApp resolves as failed', async () => {
  for (const hex of MALFORMED) {
    const wasm = fromHex(hex);
    assert.throws(
      () => validateAppModule(wasm),
      (e: unknown) => e instanceof CharmsError && e.code === 'INVALID_INPUT' && /^wasm module: /.test(e.message),
      hex,
    );
    const r = await runApp({ wasm, stdin: new Uint8Array(0) });
    assert.equal(r.ok, false);
    assert.match(r.error ?? '', /^wasm module: /);
  }
});

/** `_start` with `n` i32 locals (and a `memory` export) that reads its last local. */
function moduleWithLocals(n: number): Uint8Array {
  const w = new WasmWriter();
  w.bytes(Uint8Array.of(0, 0x61, 0x73, 0x6d, 1, 0, 0, 0));
  w.section(1, new WasmWriter().u32(1).byte(0x60).u32(0).u32(0).finish());
  w.section(3, new WasmWriter().u32(1).u32(0).finish());
  w.section(5, new WasmWriter().u32(1).byte(0).u32(1).finish());
  w.section(7, new WasmWriter().u32(2).name('memory').byte(2).u32(0).name('_start').byte(0).u32(0).finish());
  const body = new WasmWriter()
    .u32(1)
    .u32(n)
    .byte(0x7f)
    .byte(0x20)
    .u32(n - 1)
    .byte(0x1a)
    .byte(0x0b)
    .finish();
  w.section(10, new WasmWriter().u32(1).u32(body.length).bytes(body).finish());
  return w.finish();
}

test('a valid module with 50 000 locals (V8’s limit) runs: metering adds no locals', async () => {
  const r = await runApp({ wasm: moduleWithLocals(50_000), stdin: new Uint8Array(0) });
  assert.equal(r.error, undefined);
  assert.equal(r.ok, true);
  assert.ok(r.cycles > 0n);
});

test('linear memory is capped per run: growing towards 4 GiB stops at the limit', async () => {
  assert.equal(DEFAULT_RUNNER_LIMITS.memoryPages, 2048);
  const wasm = await compileWatFixture('memory-hog');
  const r = await runApp({ wasm, stdin: Uint8Array.of(0) });
  assert.equal(r.error, undefined);
  assert.equal(r.ok, true);
});

test('tables are capped and table.grow is charged like wasmi (8 bytes per element, 64 bytes per fuel)', async () => {
  const wasm = await compileWatFixture('memory-hog');
  const huge = await runApp({ wasm, stdin: Uint8Array.of(1) });
  assert.equal(huge.error, undefined);
  assert.equal(huge.ok, true, 'a table.grow of 70 million elements is refused (-1)');
  const grown = await runApp({ wasm, stdin: Uint8Array.of(2) });
  assert.equal(grown.ok, true);
  // same path apart from the successful grow of 50 000 elements: 50 000 × 8 / 64 fuel more
  assert.equal(grown.cycles - huge.cycles, 6250n);
});

test('host calls bound their work before doing it', async () => {
  const wasm = await compileWatFixture('host-abuse');
  const manyIovecs = await runApp({ wasm, stdin: Uint8Array.of(0) });
  assert.equal(manyIovecs.error, undefined);
  assert.equal(manyIovecs.ok, true, 'fd_write with 10^8 iovecs is refused with an errno');
  const huge = await runApp({ wasm, stdin: Uint8Array.of(1) });
  assert.equal(huge.error, undefined);
  assert.equal(huge.ok, true);
  assert.match(huge.stderr, /stderr truncated/);
  const random = await runApp({ wasm, stdin: Uint8Array.of(2) });
  assert.equal(random.ok, false);
  assert.match(random.error ?? '', /random_get/);
  const reads = await runApp({ wasm, stdin: Uint8Array.of(3) });
  assert.equal(reads.error, undefined);
  assert.equal(reads.ok, true, 'fd_read with 10^8 iovecs is refused with an errno');
});

test('preparing (validating, instrumenting, compiling) a module happens in the runner worker, not on the calling thread', async () => {
  const before = instrumentationsInThisThread();
  const r = await runApp({ wasm: moduleWithLocals(3), stdin: new Uint8Array(0) });
  assert.equal(r.ok, true);
  assert.equal(instrumentationsInThisThread(), before);
});
