/**
 * App-runner benchmark: metered (instrumented) vs unmetered run time of a CPU-heavy fixture,
 * instrumentation time, and per-run overhead of the worker pool.
 */
import { runApp, shutdownRunner, prepareApp, DEFAULT_RUNNER_LIMITS } from '../runner/index.js';
import { createWasiShim } from '../runner/wasi-shim.js';
import { checkAppModule } from '../runner/policy.js';
import { instrumentModule } from '../runner/instrument.js';
import { Wasm } from '../runner/wasm-api.js';
import { compileWatFixture } from '../runner/fixtures/wat.js';
import { median, timeMedian } from './measure.js';

const time = (n: number, f: () => void): number => timeMedian(n, f);

export async function run(): Promise<void> {
  const wasm = await compileWatFixture('compute');
  const rounds = 2000; // 2000 × 1024 words
  const stdin = new Uint8Array(new Uint32Array([rounds]).buffer);

  // unmetered: the original module with the same shim
  const plain = new Wasm.Module(wasm);
  const unmetered = time(9, () => {
    const shim = createWasiShim(stdin);
    const inst = new Wasm.Instance(plain, shim.imports);
    shim.bind(inst);
    (inst.exports['_start'] as () => void)();
  });
  const prepared = await prepareApp(wasm);
  let cycles = 0n;
  const metered = time(9, () => {
    const shim = createWasiShim(stdin);
    const inst = new Wasm.Instance(prepared.module, shim.imports);
    shim.bind(inst);
    (inst.exports['_start'] as () => void)();
    cycles = 1_000_000_000n - BigInt((inst.exports[prepared.meter.fuel] as { value: bigint }).value);
  });
  console.log(`runner: compute fixture (${rounds} rounds, ${cycles} cycles)`);
  console.log(`  unmetered median ${unmetered.toFixed(2)} ms, metered median ${metered.toFixed(2)} ms, ratio ${(metered / unmetered).toFixed(2)}`);

  // instrumentation cost on a synthetic module about the size of a real app (~300 KB)
  const parsed = checkAppModule(wasm);
  const small = time(21, () => instrumentModule(parsed, 1_000_000_000n, DEFAULT_RUNNER_LIMITS));
  console.log(`  instrument compute fixture (${wasm.length} B): median ${small.toFixed(3)} ms`);

  // end-to-end: in-thread vs worker pool, per run (module cached)
  const tiny = new Uint8Array(new Uint32Array([1]).buffer);
  const inThread: number[] = [];
  const pooled: number[] = [];
  await runApp({ wasm, stdin: tiny }); // warm the pool
  for (let i = 0; i < 31; i++) {
    let t = performance.now();
    await runApp({ wasm, stdin: tiny, inThread: true });
    inThread.push(performance.now() - t);
    t = performance.now();
    await runApp({ wasm, stdin: tiny });
    pooled.push(performance.now() - t);
  }
  console.log(`  small run end-to-end: in-thread median ${median(inThread).toFixed(3)} ms, worker pool median ${median(pooled).toFixed(3)} ms`);

  // wall-clock stop: an infinite loop with an unreachable fuel budget and a 300 ms timeout
  const loop = await compileWatFixture('infinite-loop');
  const t0 = performance.now();
  const stopped = await runApp({ wasm: loop, stdin: new Uint8Array(0), fuelLimit: 2n ** 62n, timeoutMs: 300 });
  console.log(`  infinite loop with timeoutMs 300: stopped after ${(performance.now() - t0).toFixed(0)} ms (${stopped.error ?? 'no error'})`);
  await shutdownRunner();
}
