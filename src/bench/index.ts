/**
 * The charms index (issue 22 targets): a full block of ~3 000 transactions without spells
 * prefiltered and read into a BlockWrite (target ≤ 60 ms, ≥ 50 000 tx/s), the same block applied
 * to a SQLite index, and spell transactions verified through the index's batch check (target
 * ≥ 400 verified spell transactions/s, with the vectors of ../shared).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseBlock, serializeBlock } from '../bitcoin/block.js';
import { blockWrite, librarySpellCheck } from '../indexer/block-write.js';
import { openIndexStore } from '../indexer/open.js';
import { useFastProofBackend } from '../proof/init.js';
import { coinbase, plainTx } from '../testing/memory-chain.js';
import { hasShared } from '../testing/shared.js';
import { bitcoinVectors, verifiedByLibrary } from '../testing/index-vectors.js';
import { timeMedian } from './measure.js';

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
  const ms = timeMedian(9, () => void blockWrite(parseBlock(bytes), 1, never), 2);
  console.log(
    `index: a block of 3 000 transactions without spells (${(bytes.length / 1e6).toFixed(2)} MB) checked and read: median ${ms.toFixed(1)} ms, ${Math.round(3000 / (ms / 1000))} tx/s (target <= 60 ms, >= 50 000 tx/s)`,
  );

  const dir = mkdtempSync(join(tmpdir(), 'charms-bench-index-'));
  try {
    const store = await openIndexStore(join(dir, 'i.sqlite'), { mode: 'writer', network: 'regtest', mock: false, startHeight: 1 });
    const w = blockWrite(parseBlock(bytes), 1, never);
    const t0 = performance.now();
    await store.applyBlock(w);
    console.log(`index: the same block applied to SQLite (${w.inputs.length} inputs, no charm output among them): ${(performance.now() - t0).toFixed(1)} ms`);
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  if (!hasShared) return void console.log('index: spell verification skipped (../shared not found)');
  await useFastProofBackend(() => {});
  const ok = verifiedByLibrary([...bitcoinVectors().values()]);
  const spells = [...bitcoinVectors().values()].filter((t) => ok.has(t.txid)).map((t) => t.raw);
  const batch = Array.from({ length: 200 }, (_, i) => spells[i % spells.length]!);
  const check = librarySpellCheck(false);
  const vms = timeMedian(3, () => void check(batch), 1);
  console.log(
    `index: ${batch.length} spell transactions (${spells.length} distinct, v2..v12) verified in one batch: median ${vms.toFixed(0)} ms, ${Math.round(batch.length / (vms / 1000))} tx/s (target >= 400/s)`,
  );
}
