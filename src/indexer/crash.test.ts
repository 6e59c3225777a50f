import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ENGINES, TestEngines } from '../testing/index-stores.js';
import { dumpIndex } from '../testing/index-dump.js';
import { sharedOrSkip } from '../testing/shared.js';
import { crashChain } from '../testing/index-vectors.js';
import { Follower } from './follower.js';
import { librarySpellCheck } from './block-write.js';

const engines = new TestEngines();
after(() => engines.close());

const CHILD = fileURLToPath(new URL('../testing/index-child.js', import.meta.url));

/**
 * Runs the child indexer; with `killAfter`, sends SIGKILL as soon as it reports that many applied
 * blocks (the kill lands while it works on the next ones).
 */
function runChild(db: string, killAfter: number | undefined): Promise<{ finished: boolean; killed: boolean; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CHILD, db], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let killed = false;
    p.stdout.on('data', (d) => {
      out += d;
      if (killAfter !== undefined && !killed && (out.match(/applied/g)?.length ?? 0) >= killAfter) {
        killed = true;
        p.kill('SIGKILL');
      }
    });
    p.stderr.on('data', (d) => (err += d));
    const guard = setTimeout(() => p.kill('SIGKILL'), 120_000);
    p.on('exit', () => {
      clearTimeout(guard);
      resolve({ finished: out.includes('done'), killed, stderr: err });
    });
  });
}

for (const name of ENGINES) {
  test(`${name}: kill -9 of the indexer at random points, then a restart, equals an uninterrupted run`, async (t) => {
    if (!sharedOrSkip(t)) return;
    const e = await engines.engine(name, t);
    if (!e) return;
    // the uninterrupted run, in process
    const ref = await e.open(await e.newDb());
    const { chain, reorg } = crashChain();
    // one block at a time; the child fetches ahead and commits several blocks per transaction
    const f = new Follower(ref, chain, { startHeight: 1, check: librarySpellCheck(false), fetchAhead: 1, commitBlocks: 1 });
    await f.syncOnce();
    reorg();
    await f.syncOnce();
    const expected = await dumpIndex(ref);
    await ref.close();

    const db = await e.newDb();
    let seed = 7;
    const rnd = () => ((seed = (seed * 48271) % 2147483647), seed / 2147483647);
    let kills = 0;
    for (let run = 0; run < 10; run++) {
      // kill after 1..30 more blocks (the chain has 124 blocks, then a 5-block reorg and 6 new ones)
      const r = await runChild(db, run < 8 ? 1 + Math.floor(rnd() * 30) : undefined);
      if (r.finished) break;
      assert.ok(r.killed, `the child failed: ${r.stderr}`);
      kills++;
    }
    t.diagnostic(`${kills} kills before the run completed`);
    assert.ok(kills > 0, 'at least one kill landed mid-run');
    const s = await e.open(db);
    try {
      assert.equal(await dumpIndex(s), expected);
    } finally {
      await s.close();
    }
  });
}
