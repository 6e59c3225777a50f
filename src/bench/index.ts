/**
 * The charms index (issue 22 targets): a full block of ~3 000 transactions without spells
 * prefiltered and read into a BlockWrite (target ≤ 60 ms, ≥ 50 000 tx/s), the same block applied
 * to a SQLite index, and spell transactions verified through the index's batch check (target
 * ≥ 400 verified spell transactions/s, with the vectors of ../shared).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseBlock, serializeBlock, type Block } from '../bitcoin/block.js';
import { blockWrite, displayTxids, librarySpellCheck } from '../indexer/block-write.js';
import { Follower } from '../indexer/follower.js';
import { openIndexStore } from '../indexer/open.js';
import { SpellVerifyPool } from '../indexer/verify-pool.js';
import { useFastProofBackend } from '../groth16/init.js';
import { coinbase, plainTx, txidOf } from '../testing/memory-chain.js';
import { FakeBitcoind } from '../testing/fake-bitcoind.js';
import { blockSourceFromConfig } from '../sources/chain-sources.js';
import { hasShared } from '../testing/shared.js';
import { bitcoinVectors, verifiedByLibrary } from '../testing/index-vectors.js';
import { tableSizes } from './index-sync.js';
import { median, timeMedian } from './measure.js';

export async function run(): Promise<void> {
  const script = Uint8Array.from([0x51, 0x20, ...new Array(32).fill(7)]);
  const txs = Array.from({ length: 3000 }, (_, i) =>
    plainTx(
      [
        { txid: (i + 1).toString(16).padStart(64, '0'), vout: 0 },
        { txid: (i + 1).toString(16).padStart(64, 'f'), vout: 1 },
      ],
      [
        { script, sats: 1000n },
        { script, sats: BigInt(i) },
      ],
    ),
  );
  const bytes = serializeBlock({ prevHash: '00'.repeat(32), time: 1 }, [coinbase(1, 1), ...txs]);
  const never = () => {
    throw new Error('no transaction here may carry a spell');
  };
  // no candidate in the block: blockWrite runs to its end synchronously (never awaits)
  const ms = timeMedian(9, () => void blockWrite(parseBlock(bytes), 1, never), 2);
  console.log(
    `index: a block of 3 000 transactions without spells (${(bytes.length / 1e6).toFixed(2)} MB) checked and read: median ${ms.toFixed(1)} ms, ${Math.round(3000 / (ms / 1000))} tx/s (target <= 60 ms, >= 50 000 tx/s)`,
  );

  const dir = mkdtempSync(join(tmpdir(), 'charms-bench-index-'));
  try {
    await applyFigures(dir, never);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  if (!hasShared) return void console.log('index: spell verification skipped (../shared not found)');
  await useFastProofBackend(() => {});
  const ok = verifiedByLibrary([...bitcoinVectors().values()]);
  const spells = [...bitcoinVectors().values()].filter((t) => ok.has(t.txid)).map((t) => t.raw);
  const batch = Array.from({ length: 200 }, (_, i) => spells[i % spells.length]!);
  const label = `${batch.length} spell transactions (${spells.length} distinct, v2..v12) in one batch`;
  const inThread = librarySpellCheck(false);
  const a = await measured(5, () => inThread(batch), 1);
  console.log(`index: ${label} verified on the event loop: ${figures(a, batch.length)}`);
  const pool = new SpellVerifyPool({ mock: false });
  try {
    pool.warm();
    const b = await measured(5, () => pool.check(batch), 1);
    console.log(`index: ${label} verified on ${pool.size} worker threads: ${figures(b, batch.length)}`);
    await endToEnd(spells, pool);
  } finally {
    await pool.close();
  }
  console.log(
    `index: load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} on ${availableParallelism()} cores`,
  );
}

/**
 * Full blocks (3 000 plain transactions, distinct in every block) applied to SQLite one by one:
 * without their txids, with them kept in `recent_txs` (the follower's window near the tip), and
 * kept with a full block pruned below the window at every block (the steady state at the tip);
 * median apply time, and what the kept txids cost on disk.
 */
async function applyFigures(dir: string, never: () => never): Promise<void> {
  const blocks = 14;
  const perBlock = 3000;
  const script = Uint8Array.from([0x51, 0x20, ...new Array(32).fill(9)]);
  let salt = 0;
  const made: Block[] = [];
  let prev = '00'.repeat(32);
  for (let h = 1; h <= blocks; h++) {
    const txs = Array.from({ length: perBlock }, () => {
      const i = ++salt;
      return plainTx(
        [
          { txid: i.toString(16).padStart(64, '0'), vout: 0 },
          { txid: i.toString(16).padStart(64, 'f'), vout: 1 },
        ],
        [
          { script, sats: 1000n },
          { script, sats: BigInt(i) },
        ],
      );
    });
    const b = parseBlock(serializeBlock({ prevHash: prev, time: h }, [coinbase(h, 1), ...txs]));
    made.push(b);
    prev = b.header.hash;
  }
  for (const [name, window] of [
    ['without their txids', 0],
    ['with their txids kept (recent_txs)', 1_000],
    ['with their txids kept and a block of them pruned each time (window 4)', 4],
  ] as const) {
    const file = join(dir, `apply-${window}.sqlite`);
    const store = await openIndexStore(file, { mode: 'writer', network: 'regtest', mock: false, startHeight: 1 });
    const ms: number[] = [];
    const cpu: number[] = [];
    for (const [i, b] of made.entries()) {
      const h = i + 1;
      const w = await blockWrite(b, h, never);
      if (window > 0) {
        w.txids = displayTxids(b);
        w.recentFrom = h - window + 1;
      }
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      await store.applyBlock(w);
      const c = process.cpuUsage(c0);
      if (i < 4) continue; // the first blocks warm up the JIT and the caches
      ms.push(performance.now() - t0);
      cpu.push((c.user + c.system) / 1000);
    }
    await store.close();
    const kept = window === 1_000 ? tableSizes(file)?.find(([t]) => t === 'recent_txs')?.[1] : undefined;
    console.log(
      `index: a block of ${perBlock} transactions (${2 * perBlock} inputs, no charm output among them) applied to SQLite ${name}: median ${median(ms).toFixed(1)} ms wall, ${median(cpu).toFixed(1)} ms CPU over ${ms.length} blocks` +
        (kept === undefined
          ? ''
          : `; recent_txs ${(kept / (blocks * (perBlock + 1))).toFixed(0)} bytes per transaction, ${(kept / blocks / 1e3).toFixed(0)} kB per block`),
    );
  }
}

interface Measured {
  /** Median wall milliseconds. */
  wall: number;
  /** Median CPU milliseconds of the whole process (all threads). */
  cpu: number;
  /** Median share of the wall time the event loop was busy. */
  loop: number;
}

/**
 * Wall time, CPU time (all threads) and event-loop use of `f`. On the shared machine the CPU
 * time is the steadier figure: transactions per CPU second times the idle cores is what an idle
 * machine would reach.
 */
async function measured(n: number, f: () => Promise<unknown>, warmup: number): Promise<Measured> {
  for (let i = 0; i < warmup; i++) await f();
  const wall: number[] = [];
  const cpu: number[] = [];
  const loop: number[] = [];
  for (let i = 0; i < n; i++) {
    const c0 = process.cpuUsage();
    const e0 = performance.eventLoopUtilization();
    const t = performance.now();
    await f();
    wall.push(performance.now() - t);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
    loop.push(performance.eventLoopUtilization(e0).utilization);
  }
  return { wall: median(wall), cpu: median(cpu), loop: median(loop) };
}

const figures = (m: Measured, txs: number): string =>
  `median ${m.wall.toFixed(0)} ms wall, ${Math.round(txs / (m.wall / 1000))} tx/s (target >= 400/s); ${m.cpu.toFixed(0)} ms CPU, ${Math.round(txs / (m.cpu / 1000))} tx per CPU second; event loop busy ${(m.loop * 100).toFixed(0)}%`;

/**
 * Initial sync end to end: a fake Bitcoin Core on loopback (JSON-RPC + REST) serving blocks of
 * spell transactions, read by the follower (fetch, block checks, prefilter, verification, SQLite
 * write), with verification on the event loop and on the threads. Each spell transaction is made
 * distinct (its locktime, which no spell commits to), so that every proof is verified once.
 */
async function endToEnd(spells: Uint8Array[], warmPool: SpellVerifyPool): Promise<void> {
  const perBlock = 100;
  const blocks = 6;
  const fake = await FakeBitcoind.start();
  try {
    const txids: string[] = [];
    for (let b = 0; b < blocks; b++) {
      const txs = Array.from({ length: perBlock }, (_, i) => withLocktime(spells[(b * perBlock + i) % spells.length]!, 500_000_000 + b * perBlock + i));
      txids.push(...txs.map(txidOf));
      fake.mine(txs);
    }
    for (const pool of [undefined, warmPool]) {
      const dir = mkdtempSync(join(tmpdir(), 'charms-bench-index-'));
      try {
        const source = blockSourceFromConfig({ rpcUrl: fake.rpcUrl, rpcCookie: fake.cookieFile })!;
        const store = await openIndexStore(join(dir, 'i.sqlite'), { mode: 'writer', network: 'regtest', mock: false, startHeight: 1 });
        const f = new Follower(store, source, { startHeight: 1, check: pool?.check ?? librarySpellCheck(false) });
        const m = await measured(1, () => f.syncOnce(), 0);
        if (f.status.error) throw new Error(f.status.error.message);
        let n = 0;
        for (const id of txids) if (await store.spellTx(id)) n++;
        if (n !== txids.length) throw new Error(`only ${n} of ${txids.length} spell transactions were indexed`);
        console.log(
          `index: initial sync over RPC+REST of ${blocks} blocks x ${perBlock} spell transactions (fetch, checks, prefilter, verify, SQLite), ${pool ? `${pool.size} verification threads` : 'verified on the event loop'}: ${figures(m, n)}`,
        );
        await store.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    await fake.stop();
  }
}

/** The transaction with another locktime (its last four bytes): another txid, the same spell. */
function withLocktime(raw: Uint8Array, locktime: number): Uint8Array {
  const out = Uint8Array.from(raw);
  new DataView(out.buffer).setUint32(out.length - 4, locktime, true);
  return out;
}
