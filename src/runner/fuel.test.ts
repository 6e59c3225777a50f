import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fromHex } from '../util/bytes.js';
import { FUEL_VECTORS } from './fixtures/fuel-vectors.js';
import { compileWatFixture } from './fixtures/wat.js';
import { runApp } from './index.js';

for (const v of FUEL_VECTORS) {
  test(`cycles match wasmi 1.1.0 exactly for ${v.name} (${v.fuel})`, async () => {
    const r = await runApp({ wasm: fromHex(v.hex), stdin: new Uint8Array(0), inThread: true });
    assert.equal(r.ok, v.ok, r.error);
    assert.equal(r.cycles, BigInt(v.fuel));
  });
}

test('fuel is per run: a second run of a cached module costs the same (compile fuel included)', async () => {
  const v = FUEL_VECTORS[1]!;
  const a = await runApp({ wasm: fromHex(v.hex), stdin: new Uint8Array(0), inThread: true });
  const b = await runApp({ wasm: fromHex(v.hex), stdin: new Uint8Array(0), inThread: true });
  assert.equal(a.cycles, b.cycles);
});

test('a budget one below the need runs out of fuel; exactly the need succeeds', async () => {
  const v = FUEL_VECTORS[0]!;
  const exact = await runApp({ wasm: fromHex(v.hex), stdin: new Uint8Array(0), fuelLimit: BigInt(v.fuel), inThread: true });
  assert.equal(exact.ok, true, exact.error);
  assert.equal(exact.cycles, BigInt(v.fuel));
  const short = await runApp({
    wasm: fromHex(v.hex),
    stdin: new Uint8Array(0),
    fuelLimit: BigInt(v.fuel - 1),
    inThread: true,
  });
  assert.equal(short.ok, false);
  assert.match(short.error ?? '', /out of fuel/);
});

test('memory.grow is charged 1024 fuel per page only when it succeeds', async () => {
  // bulk_memory grows by 2 pages; the same module with a max of 1 page cannot grow
  const v = FUEL_VECTORS[2]!;
  const capped = v.hex.replace('05030100010713', '0504010101010713'); // memory 1 → memory 1 1
  assert.notEqual(capped, v.hex);
  const r = await runApp({ wasm: fromHex(capped), stdin: new Uint8Array(0), inThread: true });
  // the grow fails → no 2048 grow fuel; the load at 24999 then still reads the filled byte
  assert.equal(r.ok, true, r.error);
  assert.equal(r.cycles, BigInt(v.fuel - 2048));
});

test('the compute fixture is metered deterministically and scales with work', async () => {
  const wasm = await compileWatFixture('compute');
  const stdin = (n: number) => new Uint8Array(new Uint32Array([n]).buffer);
  const one = await runApp({ wasm, stdin: stdin(1), inThread: true });
  const two = await runApp({ wasm, stdin: stdin(2), inThread: true });
  const again = await runApp({ wasm, stdin: stdin(2), inThread: true });
  assert.equal(one.ok && two.ok, true);
  assert.equal(two.cycles, again.cycles);
  const perRound = two.cycles - one.cycles;
  assert.ok(perRound > 1024n * 5n, `per-round fuel ${perRound}`);
});
