import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { createHash } from 'node:crypto';
import { fromHex, utf8 } from '../util/bytes.js';
import { ChaCha12Rng } from './chacha-rng.js';
import { FUEL_VECTORS } from './fixtures/fuel-vectors.js';
import { compileWatFixture } from './fixtures/wat.js';
import { THREAD_MODULE_MAX_BYTES, configureRunner, runApp, shutdownRunner } from './index.js';
import { runnerSettingsOf } from '../settings/runner.js';

after(() => shutdownRunner());

const u16 = (n: number) => new Uint8Array([n & 0xff, n >> 8]);
const loopSum = fromHex(FUEL_VECTORS[0]!.hex);

/** The process (and the pool) still work: a known-good module runs with its exact fuel. */
async function assertRunnerAlive(): Promise<void> {
  const r = await runApp({ wasm: loopSum, stdin: new Uint8Array(0) });
  assert.equal(r.ok, true, r.error);
  assert.equal(r.cycles, 4310n);
}

test('runs in a worker and returns the same result as in-thread', async () => {
  const worker = await runApp({ wasm: loopSum, stdin: new Uint8Array(0) });
  const inline = await runApp({ wasm: loopSum, stdin: new Uint8Array(0), inThread: true });
  assert.deepEqual(worker, inline);
  assert.equal(worker.ok, true);
});

test('an infinite loop is stopped by fuel', async () => {
  const wasm = await compileWatFixture('infinite-loop');
  const r = await runApp({ wasm, stdin: new Uint8Array(0), fuelLimit: 5_000_000n });
  assert.equal(r.ok, false);
  assert.match(r.error ?? '', /out of fuel: the app needs more than 5000000 cycles/);
  assert.ok(r.cycles <= 5_000_000n && r.cycles > 4_999_000n, `cycles ${r.cycles}`);
  await assertRunnerAlive();
});

test('an infinite loop with an unreachable budget is stopped by the wall-clock timeout', async () => {
  const wasm = await compileWatFixture('infinite-loop');
  const r = await runApp({ wasm, stdin: new Uint8Array(0), fuelLimit: 2n ** 62n, timeoutMs: 300 });
  assert.equal(r.ok, false);
  assert.match(r.error ?? '', /timed out after 300 ms/);
  await assertRunnerAlive();
});

test('a trap fails the run with the engine message', async () => {
  const r = await runApp({ wasm: await compileWatFixture('trap-div-zero'), stdin: new Uint8Array(0) });
  assert.equal(r.ok, false);
  assert.match(r.error ?? '', /^error running wasm: .*divi/i);
  await assertRunnerAlive();
});

test('call depth: 1000 frames pass, 1001 fail cleanly (wasmi limit)', async () => {
  const wasm = await compileWatFixture('recursion');
  const okRun = await runApp({ wasm, stdin: u16(998) });
  assert.equal(okRun.ok, true, okRun.error);
  const deep = await runApp({ wasm, stdin: u16(999) });
  assert.equal(deep.ok, false);
  assert.match(deep.error ?? '', /call stack exhausted: more than 1000 nested calls/);
  const veryDeep = await runApp({ wasm, stdin: u16(60000) });
  assert.equal(veryDeep.ok, false);
  assert.match(veryDeep.error ?? '', /call stack exhausted/);
  await assertRunnerAlive();
});

test('stdin reaches the app through fd_read and its stderr comes back; stdout is refused', async () => {
  const wasm = await compileWatFixture('echo-stderr');
  const text = 'ok: ' + 'charms '.repeat(40); // several 16-byte fd_read calls
  const r = await runApp({ wasm, stdin: utf8(text) });
  assert.equal(r.ok, true, r.error);
  assert.equal(r.stderr, `${text}error: can only write to stderr\n`);
  const bad = await runApp({ wasm, stdin: utf8('no') });
  assert.equal(bad.ok, false);
  assert.ok(bad.stderr.startsWith('no'));
});

test('proc_exit returns (the reference no-op), so exiting with 0 still fails the contract', async () => {
  const r = await runApp({ wasm: await compileWatFixture('proc-exit'), stdin: new Uint8Array(0) });
  assert.equal(r.ok, false);
  assert.equal(r.exitCode, 0);
  assert.match(r.error ?? '', /unreachable/);
});

test('random_get is ChaCha12 seeded with SHA-256(stdin); start function and environ work', async () => {
  const wasm = await compileWatFixture('random-and-env');
  const stdin = utf8('payload');
  const r = await runApp({ wasm, stdin });
  assert.equal(r.ok, true, r.error);
  const expected = new Uint8Array(40);
  new ChaCha12Rng(new Uint8Array(createHash('sha256').update(stdin).digest())).fillBytes(expected);
  // stderr is returned decoded as (lossy) UTF-8, so compare with the same decoding
  assert.equal(r.stderr, new TextDecoder().decode(expected));
  const other = await runApp({ wasm, stdin: utf8('payload2') });
  assert.notEqual(other.stderr, r.stderr);
});

test('versioned apps: __app_version must match the expected version', async () => {
  const wasm = await compileWatFixture('versioned');
  assert.equal((await runApp({ wasm, stdin: new Uint8Array(0), expectedVersion: 3 })).ok, true);
  const wrong = await runApp({ wasm, stdin: new Uint8Array(0), expectedVersion: 4 });
  assert.equal(wrong.ok, false);
  assert.match(wrong.error ?? '', /`__app_version` \(3\) does not match the spell version \(4\)/);
  const missing = await runApp({ wasm: loopSum, stdin: new Uint8Array(0), expectedVersion: 1 });
  assert.match(missing.error ?? '', /does not export `__app_version`/);
});

test('parallel runs through the pool all complete', async () => {
  const runs = await Promise.all(Array.from({ length: 8 }, () => runApp({ wasm: loopSum, stdin: new Uint8Array(0) })));
  assert.ok(runs.every((r) => r.ok && r.cycles === 4310n));
});

/** `wasm` with a custom section appended that makes it `size` bytes or more. */
function padded(wasm: Uint8Array, size: number): Uint8Array {
  const name = utf8('pad');
  const payload = size - wasm.length;
  const len = [];
  for (let v = name.length + 1 + payload; ; ) {
    const b = v & 0x7f;
    v >>>= 7;
    len.push(v ? b | 0x80 : b);
    if (!v) break;
  }
  const out = new Uint8Array(wasm.length + 1 + len.length + 1 + name.length + payload);
  out.set(wasm);
  out.set([0, ...len, name.length, ...name], wasm.length);
  return out;
}

test("isolation 'thread' (the CLI's): runs on the calling thread, bounded by fuel; a module over 4 MiB still gets a worker and its wall-clock guard", async () => {
  await configureRunner({ isolation: 'thread' });
  try {
    const r = await runApp({ wasm: loopSum, stdin: new Uint8Array(0) });
    assert.deepEqual(r, await runApp({ wasm: loopSum, stdin: new Uint8Array(0), inThread: false }));
    const loop = await compileWatFixture('infinite-loop');
    const fuel = await runApp({ wasm: loop, stdin: new Uint8Array(0), fuelLimit: 5_000_000n });
    assert.match(fuel.error ?? '', /out of fuel: the app needs more than 5000000 cycles/);
    const big = padded(loop, THREAD_MODULE_MAX_BYTES + 1);
    const guarded = await runApp({ wasm: big, stdin: new Uint8Array(0), fuelLimit: 2n ** 62n, timeoutMs: 300 });
    assert.equal(guarded.ok, false);
    assert.match(guarded.error ?? '', /timed out after 300 ms/);
  } finally {
    await configureRunner({ isolation: 'worker' });
  }
  await assertRunnerAlive();
});

test('APP_RUN_ISOLATION: worker or thread; anything else is a CONFIG error', async () => {
  assert.deepEqual(runnerSettingsOf({ APP_RUN_ISOLATION: 'thread' }), { isolation: 'thread' });
  assert.deepEqual(runnerSettingsOf({ APP_RUN_ISOLATION: 'worker' }), { isolation: 'worker' });
  assert.deepEqual(runnerSettingsOf({ APP_RUN_ISOLATION: '' }), {});
  assert.throws(() => runnerSettingsOf({ APP_RUN_ISOLATION: 'process' }), { code: 'CONFIG' });
  await assert.rejects(configureRunner({ isolation: 'none' as 'thread' }), { code: 'CONFIG' });
});
