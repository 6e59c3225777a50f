/**
 * Read side: median time to extract and verify one real transaction (warm, keys prepared once),
 * the first call in a fresh process, and throughput with one worker thread per core.
 */
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { extractAndVerifySpell } from '../verify/index.js';
import { initPairingBackend, prepareProofKeys } from '../groth16/verify.js';
import { median, timeRuns } from './measure.js';
import { hasShared, readSharedJson, readSharedText } from '../testing/shared.js';

export async function run(): Promise<void> {
  if (!hasShared) return console.log('skipped: test vectors not found (CHARMS_SHARED_DIR)');
  const txs: [string, string][] = [
    ['v12 OP_RETURN', readSharedJson('vectors', 'bitcoin-v12-spell-tx-decoded.json').tx_hex],
    ['v8 witness', readSharedText('vectors', 'chain', '2efcde0d11cca5c23a415de6cb917e6da5b747975911e7855eb29d0737a68873.bitcoin.hex').trim()],
    ['v6 mock', readSharedJson('vectors', 'groth16-mock.json').historical_rust_mock_spell.tx_hex],
  ];
  prepareProofKeys();
  for (const backend of ['noble', 'mcl-wasm'] as const) {
    await initPairingBackend(backend);
    const hex = txs[0]![1];
    const times = timeRuns(30, () => extractAndVerifySpell({ bitcoin: hex }, false), 5);
    console.log(`extract+verify v12 with ${backend}: median ${median(times).toFixed(1)} ms (n=30)`);
  }
  for (const [name, hex] of txs) {
    const mock = name.includes('mock');
    const times = timeRuns(30, () => extractAndVerifySpell({ bitcoin: hex }, mock), 5);
    console.log(`extract+verify ${name}: median ${median(times).toFixed(1)} ms (min ${Math.min(...times).toFixed(1)}, n=30)`);
  }
  const mod = fileURLToPath(new URL('../verify/index.js', import.meta.url));
  const first: number[] = [];
  for (let i = 0; i < 3; i++) {
    const r = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const hex = ${JSON.stringify(txs[0]![1])}; const t0 = performance.now(); const m = await import(${JSON.stringify(mod)}); m.extractAndVerifySpell({ bitcoin: hex }, false); console.log(performance.now() - t0);`,
      ],
      { encoding: 'utf8' },
    );
    first.push(Number(r.stdout.trim()));
  }
  console.log(`first call in a fresh process (import + keys + verify): median ${median(first).toFixed(0)} ms`);
  const cores = availableParallelism();
  const perWorker = 40;
  const workerSrc = `
    const { parentPort, workerData } = require('node:worker_threads');
    Promise.all([import(workerData.mod), import(workerData.proof)]).then(async ([m, p]) => {
      await p.initPairingBackend('mcl-wasm');
      m.extractAndVerifySpell({ bitcoin: workerData.hex }, false);
      const t = performance.now();
      for (let i = 0; i < workerData.n; i++) m.extractAndVerifySpell({ bitcoin: workerData.hex }, false);
      parentPort.postMessage(performance.now() - t);
    });`;
  const t0 = performance.now();
  await Promise.all(
    Array.from(
      { length: cores },
      () =>
        new Promise((resolve, reject) => {
          const w = new Worker(workerSrc, {
            eval: true,
            workerData: { mod, proof: fileURLToPath(new URL('../groth16/verify.js', import.meta.url)), hex: txs[0]![1], n: perWorker },
          });
          w.once('message', resolve);
          w.once('error', reject);
        }),
    ),
  );
  const secs = (performance.now() - t0) / 1000;
  console.log(`throughput, ${cores} worker(s): ${((cores * perWorker) / secs).toFixed(1)} tx/s (v12 tx, includes worker start, mcl-wasm)`);
}
