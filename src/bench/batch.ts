/**
 * Batch verification: real-spell verifications per second with one worker thread per core, for
 * batches of 64 through verifySpells, next to the baseline measured in the same run (one
 * extractAndVerifySpell call per transaction, the same transactions and workers). mcl-wasm both.
 */
import { availableParallelism, loadavg } from 'node:os';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { readdirSync } from 'node:fs';
import { extractAndVerifySpell } from '../verify/index.js';
import { hasShared, readSharedText, sharedPath } from '../testing/shared.js';
import { median } from './measure.js';

const BATCH = 64;

/** Runs `rounds` batches of `txs` in each of `workers` threads; returns verifications per second. */
async function throughput(txs: string[], mode: 'single' | 'batch', workers: number, rounds: number): Promise<number> {
  const workerSrc = `
    const { parentPort, workerData: w } = require('node:worker_threads');
    Promise.all([import(w.mod), import(w.proof)]).then(async ([m, p]) => {
      await p.initPairingBackend('mcl-wasm');
      const txs = w.txs.map((hex) => ({ bitcoin: hex }));
      const once = () => {
        if (w.mode === 'batch') { if (m.verifySpells(txs, false).some((v) => !v.ok)) throw new Error('batch failed'); }
        else for (const tx of txs) m.extractAndVerifySpell(tx, false);
      };
      once(); // warm-up (JIT, keys)
      parentPort.postMessage('ready');
      parentPort.once('message', () => {
        for (let i = 0; i < w.rounds; i++) once();
        parentPort.postMessage('done');
      });
    });`;
  const mod = fileURLToPath(new URL('../verify/index.js', import.meta.url));
  const proof = fileURLToPath(new URL('../groth16/verify.js', import.meta.url));
  const ws = Array.from({ length: workers }, () => new Worker(workerSrc, { eval: true, workerData: { mod, proof, txs, mode, rounds } }));
  const next = (w: Worker) =>
    new Promise<void>((resolve, reject) => {
      w.once('message', () => resolve());
      w.once('error', reject);
    });
  await Promise.all(ws.map(next)); // all warm before the clock starts
  const t0 = performance.now();
  const done = Promise.all(ws.map(next));
  for (const w of ws) w.postMessage('go');
  await done;
  const secs = (performance.now() - t0) / 1000;
  await Promise.all(ws.map((w) => w.terminate()));
  return (workers * rounds * txs.length) / secs;
}

export async function run(): Promise<void> {
  if (!hasShared) return console.log('skipped: test vectors not found (CHARMS_SHARED_DIR)');
  const dir = sharedPath('vectors', 'chain');
  const good = readdirSync(dir)
    .filter((f) => f.endsWith('.bitcoin.hex'))
    .map((f) => readSharedText('vectors', 'chain', f).trim())
    .filter((hex) => {
      try {
        extractAndVerifySpell({ bitcoin: hex }, false);
        return true;
      } catch {
        return false;
      }
    });
  const txs = Array.from({ length: BATCH }, (_, i) => good[i % good.length]!);
  const workers = availableParallelism();
  const load = loadavg()[0]!.toFixed(1);
  const single: number[] = [];
  const batch: number[] = [];
  const n = 3;
  for (let i = 0; i < n; i++) {
    // interleaved, so both see the same machine load
    single.push(await throughput(txs, 'single', workers, 2));
    batch.push(await throughput(txs, 'batch', workers, 2));
  }
  const s = median(single);
  const b = median(batch);
  console.log(
    `real-spell verification, ${workers} worker(s), mcl-wasm, ${good.length} distinct real txs (v7–v12) cycled to ${BATCH}, load avg ${load} before:`,
  );
  console.log(`  baseline one call per tx: median ${s.toFixed(0)} verifications/s (n=${n} runs of ${2 * BATCH * workers})`);
  console.log(`  verifySpells, batches of ${BATCH}: median ${b.toFixed(0)} verifications/s (n=${n}) — ${(b / s).toFixed(2)}× the baseline (target ≥ 500/s)`);
}
