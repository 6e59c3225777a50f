import { BITCOIN_NETWORKS } from '../model/network.js';
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, TestEngines, type TestEngine } from '../testing/index-stores.js';
import { dumpIndex } from '../testing/index-dump.js';
import { sharedOrSkip } from '../testing/shared.js';
import { MemoryChain, txidOf } from '../testing/memory-chain.js';
import { bitcoinVectors, burnTx, crashChain, replayDump, vectorChain, verifiedByLibrary, VECTOR_BLOCKS } from '../testing/index-vectors.js';
import { charmOutputs, librarySpellCheck, type SpellCheck } from './block-write.js';
import { CharmsError } from '../errors.js';
import { toHex } from '../util/bytes.js';
import { Follower } from './follower.js';
import { MempoolOverlay } from './mempool.js';
import type { IndexWriter } from './store.js';
import { indexApiHandler } from './api.js';
import { handlerAnswer as answer } from '../testing/http.js';
import { FakeBitcoind } from '../testing/fake-bitcoind.js';
import { createLogger } from '../infra/log.js';
import { blockSourceFromConfig } from '../sources/chain-sources.js';

const engines = new TestEngines();
after(() => engines.close());

async function setup(e: TestEngine, chain: MemoryChain, o: { maxReorgDepth?: number; mock?: boolean } = {}): Promise<{ store: IndexWriter; f: Follower }> {
  const store = await e.open(await e.newDb(), { mock: o.mock ?? false });
  const f = new Follower(store, chain, { startHeight: 1, check: librarySpellCheck(o.mock ?? false), maxReorgDepth: o.maxReorgDepth });
  return { store, f };
}

async function synced(f: Follower): Promise<void> {
  await f.syncOnce();
  assert.equal(f.status.error, undefined, f.status.error?.message);
}

for (const name of ENGINES) {
  test(`${name}: linear sync of the vector chain indexes exactly what the library verifies`, async (t) => {
    if (!sharedOrSkip(t)) return;
    const e = await engines.engine(name, t);
    if (!e) return;
    const v = bitcoinVectors();
    const chain = vectorChain(v);
    const { store, f } = await setup(e, chain);
    try {
      await synced(f);
      assert.equal((await store.tip())?.height, chain.height);
      const all = VECTOR_BLOCKS.flat().map((n) => v.get(n)!);
      const ok = verifiedByLibrary(all);
      assert.ok(ok.size >= 10, 'the vectors hold at least ten valid spells');
      for (const tx of all) {
        const row = await store.spellTx(tx.txid);
        assert.equal(row !== undefined, ok.has(tx.txid), `${tx.name}: indexed iff the library verifies it`);
        const expected = ok.has(tx.txid) ? charmOutputs((await librarySpellCheck(false)([tx.raw]))[0]!, tx.raw, tx.txid, 0).length : 0;
        assert.equal((await store.outputsOf(tx.txid)).length, expected, `${tx.name}: one row per (output, app)`);
      }
      // the six synthetic v15 txs (dummy proofs) are rejected; 8d70833a's beamed output 0 holds nothing
      assert.equal(await store.spellTx(v.get('88690370')!.txid), undefined);
      const beam = v.get('8d70833a')!.txid;
      assert.deepEqual(
        (await store.outputsOf(beam)).map((r) => r.vout),
        [1],
      );
      assert.equal(await store.spellTx(v.get('74ea380c')!.txid), undefined, 'a mock spell is not indexed without --mock');
    } finally {
      await store.close();
    }
  });

  test(`${name}: spend, burn, a 1-block reorg un-spends, same-height replacement is caught`, async (t) => {
    if (!sharedOrSkip(t)) return;
    const e = await engines.engine(name, t);
    if (!e) return;
    const v = bitcoinVectors();
    const chain = vectorChain(v);
    const nft = v.get('1acee7fb')!.txid;
    const { store, f } = await setup(e, chain);
    try {
      await synced(f);
      const burn = burnTx(nft, 0, 1);
      chain.mine([burn]);
      await synced(f);
      const spent = (await store.output(nft, 0))[0]!;
      assert.equal(spent.spent?.height, 5, 'spent by a tx without a spell: burned');
      // a reorg replaces the spending block by an empty one: unspent again
      chain.reorg(1, [[]]);
      await synced(f);
      assert.equal((await store.tip())?.hash, chain.best[5]);
      assert.equal((await store.output(nft, 0))[0]!.spent, null, 'the orphaned spend is undone');
      assert.equal((await store.lastReorg())?.depth, 1);
      assert.equal(await dumpIndex(store), await replayDump(e, chain));
      // same-height replacement with the spend back in it
      chain.reorg(1, [[burn]]);
      await synced(f);
      assert.equal((await store.tip())?.hash, chain.best[5]);
      assert.equal((await store.output(nft, 0))[0]!.spent?.height, 5);
      assert.equal(await dumpIndex(store), await replayDump(e, chain));
    } finally {
      await store.close();
    }
  });

  test(`${name}: double spends across forks and the synthetic v15 conflict set`, async (t) => {
    if (!sharedOrSkip(t)) return;
    const e = await engines.engine(name, t);
    if (!e) return;
    const v = bitcoinVectors();
    const chain = vectorChain(v);
    const token = v.get('2efcde0d')!.txid;
    const { store, f } = await setup(e, chain);
    try {
      const a = burnTx(token, 0, 11);
      const b = burnTx(token, 0, 12);
      chain.mine([a, v.get('9ac2c6e1')!.raw]);
      chain.mine([]);
      await synced(f);
      assert.equal((await store.output(token, 0))[0]!.spent?.txid, txidOf(a));
      chain.reorg(2, [[], [b, v.get('4d91f5a6')!.raw], []]);
      await synced(f);
      const row = (await store.output(token, 0))[0]!;
      assert.equal(row.spent?.height, 6);
      assert.equal(row.spent?.txid, txidOf(b));
      for (const n of ['88690370', '9ac2c6e1', '4d91f5a6']) assert.equal(await store.spellTx(v.get(n)!.txid), undefined, `${n} is unverified`);
      assert.equal(await dumpIndex(store), await replayDump(e, chain));
    } finally {
      await store.close();
    }
  });

  test(`${name}: a reorg deeper than the cap stops writing; faults write nothing and recover`, async (t) => {
    if (!sharedOrSkip(t)) return;
    const e = await engines.engine(name, t);
    if (!e) return;
    const chain = vectorChain();
    const { store, f } = await setup(e, chain, { maxReorgDepth: 2 });
    try {
      await synced(f);
      const before = await dumpIndex(store);
      for (const fault of ['down', 'garbage', 'wrong-block'] as const) {
        chain.mine([]);
        chain.fault = fault;
        await f.syncOnce();
        assert.ok(f.status.error, `${fault}: reported`);
        assert.equal(f.status.error.code, fault === 'down' ? 'UPSTREAM_UNAVAILABLE' : 'UPSTREAM_FAILED');
        assert.equal(await dumpIndex(store), before, `${fault}: nothing written`);
        chain.fault = undefined;
        chain.reorg(1, []); // back to the indexed tip
      }
      chain.mine([]);
      chain.serveUnlinked(chain.height);
      await f.syncOnce();
      assert.match(f.status.error?.message ?? '', /does not link/);
      assert.equal(await dumpIndex(store), before);
      chain.mine([]);
      await synced(f);
      assert.equal((await store.tip())?.height, chain.height, 'resumes when the source is sane again');

      const tip = await dumpIndex(store);
      chain.reorg(3, [[], [], [], []]);
      await f.syncOnce();
      assert.ok(f.status.unrecoverable, 'over-cap reorg reported');
      assert.equal(f.status.unrecoverable.depth, 3);
      assert.equal(await dumpIndex(store), tip, 'no writes');
      await f.syncOnce();
      assert.equal(await dumpIndex(store), tip, 'still no writes');
    } finally {
      await store.close();
    }
  });

  test(`${name}: random fork trees — the incremental index equals a replay of the final best chain`, async (t) => {
    if (!sharedOrSkip(t)) return;
    const e = await engines.engine(name, t);
    if (!e) return;
    const v = bitcoinVectors();
    const pool = [...v.values()];
    let seed = 12345;
    // an LCG's high bits (its low bits cycle with short periods)
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), Math.floor((seed / 2147483648) * n));
    let reorged = 0;
    for (let trial = 0; trial < 3; trial++) {
      const chain = new MemoryChain();
      const { store, f } = await setup(e, chain, { maxReorgDepth: 10 });
      let salt = trial * 1000;
      try {
        for (let step = 0; step < 12; step++) {
          // a branch block: vector txs not yet on the best chain, maybe a burn of a mined one
          const used = new Set<string>();
          const pick = () => {
            const onChain = chain.bestTxids();
            const txs: Uint8Array[] = [];
            for (let k = rnd(3); k > 0; k--) {
              const tx = pool[rnd(pool.length)]!;
              if (!onChain.has(tx.txid) && !used.has(tx.txid)) {
                used.add(tx.txid);
                txs.push(tx.raw);
              }
            }
            const mined = pool.filter((p) => onChain.has(p.txid));
            if (rnd(2) && mined.length) txs.push(burnTx(mined[rnd(mined.length)]!.txid, rnd(2), ++salt));
            return txs;
          };
          if (chain.height > 2 && rnd(3) === 0) {
            const depth = 1 + rnd(Math.min(3, chain.height - 1));
            chain.reorg(depth, Array.from({ length: depth + rnd(2) }, pick));
          } else chain.mine(pick());
          if (rnd(3) > 0) await synced(f); // sometimes several changes between polls
        }
        await synced(f);
        assert.equal(await dumpIndex(store), await replayDump(e, chain), `trial ${trial}`);
        if (await store.lastReorg()) reorged++;
      } finally {
        await store.close();
      }
    }
    assert.ok(reorged > 0, 'the random trees made the index follow reorgs');
  });

  test(`${name}: mempool overlay — pending receive, RBF, mined, returned by a reorg`, async (t) => {
    if (!sharedOrSkip(t)) return;
    const e = await engines.engine(name, t);
    if (!e) return;
    const v = bitcoinVectors();
    const chain = new MemoryChain();
    chain.mine([]);
    const { store, f } = await setup(e, chain);
    const pool = new MempoolOverlay(librarySpellCheck(false));
    try {
      await synced(f);
      const spellTx = v.get('7269cf1b')!;
      chain.mempoolAdd(spellTx.raw);
      await pool.refresh(chain);
      const out = pool.get(spellTx.txid)!.outputs;
      assert.equal(out.length, 1, 'a verified pending receive');
      assert.equal((await store.outputsOf(spellTx.txid)).length, 0, 'never in the confirmed tables');
      assert.equal(pool.receivesOf(out[0]!.script).length, 1);
      // a conflicting spend of the same input replaces it (RBF)
      chain.mempoolDrop(spellTx.txid);
      chain.mempoolAdd(v.get('neg-4')!.raw);
      await pool.refresh(chain);
      assert.equal(pool.get(spellTx.txid), undefined, 'replaced: gone');
      assert.equal(pool.receivesOf(out[0]!.script).length, 0);
      // it comes back and is mined
      chain.mempoolDrop(v.get('neg-4')!.txid);
      chain.mempoolAdd(spellTx.raw);
      await pool.refresh(chain);
      chain.mine([spellTx.raw]);
      await synced(f);
      await pool.refresh(chain);
      assert.equal(pool.size, 0, 'mined: moved over');
      assert.equal((await store.outputsOf(spellTx.txid)).length, 1);
      // a reorg returns it to the mempool: pending again, not confirmed
      chain.reorg(1, [[], []], true);
      await synced(f);
      await pool.refresh(chain);
      assert.equal((await store.outputsOf(spellTx.txid)).length, 0);
      assert.equal(pool.get(spellTx.txid)?.outputs.length, 1);
      // a pending spend of a confirmed charm output
      chain.mine([spellTx.raw]);
      await synced(f);
      chain.mempoolAdd(burnTx(spellTx.txid, 0, 7));
      await pool.refresh(chain);
      assert.ok(pool.spender(spellTx.txid, 0));
    } finally {
      await store.close();
    }
  });

  test(`${name}: a block's verification that fails ahead of its turn (threads busy) is tried again, not reported`, async (t) => {
    if (!sharedOrSkip(t)) return;
    const e = await engines.engine(name, t);
    if (!e) return;
    const { chain } = crashChain(10);
    const store = await e.open(await e.newDb());
    const inner = librarySpellCheck(false);
    const refused = new Set<string>();
    let refusals = 0;
    // every batch of candidates is refused the first time it is asked for, as a full pool would
    const busyOnce: SpellCheck = async (raws) => {
      const key = raws.map((r) => toHex(r)).join();
      if (!refused.has(key)) {
        refused.add(key);
        refusals++;
        throw new CharmsError('SERVER_BUSY', 'spell verification is busy');
      }
      return inner(raws);
    };
    const f = new Follower(store, chain, { startHeight: 1, check: busyOnce, fetchAhead: 4, commitBlocks: 8 });
    try {
      await synced(f);
      assert.ok(refusals > 0, 'some verification was refused');
      assert.equal((await store.tip())?.hash, chain.best[chain.height], 'at the node tip');
      assert.equal(await dumpIndex(store), await replayDump(e, chain), 'equals a one-block-at-a-time replay');
    } finally {
      await store.close();
    }
  });

  test(`${name}: a reorg found while blocks wait uncommitted in a batch (no fetch ahead) rolls back to the real fork`, async (t) => {
    if (!sharedOrSkip(t)) return;
    const e = await engines.engine(name, t);
    if (!e) return;
    const { chain } = crashChain(40);
    const store = await e.open(await e.newDb());
    // once block 30 is asked for, blocks 25.. are replaced: the follower holds 25..30 of the old
    // branch in its batch (far behind: several blocks per transaction) when 31 stops linking
    const hashAt = chain.hashAt.bind(chain);
    const charm = [...bitcoinVectors().values()][0]!.txid;
    const oldTip = { height: 0, hash: '' };
    chain.hashAt = async (h) => {
      const r = await hashAt(h);
      if (h === 30 && !oldTip.hash) {
        Object.assign(oldTip, { height: chain.height, hash: chain.best[chain.height]! });
        chain.reorg(
          chain.height - 24,
          Array.from({ length: chain.height - 22 }, (_, i) => [burnTx(charm, i % 2, 7000 + i)]),
        );
      }
      return r;
    };
    const f = new Follower(store, chain, { startHeight: 1, check: librarySpellCheck(false), fetchAhead: 1, commitBlocks: 8 });
    try {
      await synced(f);
      assert.ok(oldTip.hash, 'the node reorganised under the sync');
      assert.equal((await store.tip())?.hash, chain.best[chain.height], 'at the node tip');
      assert.equal(await dumpIndex(store), await replayDump(e, chain), 'equals a one-block-at-a-time replay');
      const last = await store.lastReorg();
      assert.equal(last?.forkHeight, 24, `the recorded reorg is the real one: ${JSON.stringify(last)}`);
    } finally {
      await store.close();
    }
  });

  test(`${name}: pipelined sync — blocks fetched ahead, several per transaction far from the tip, one near it; a reorg under the fetches`, async (t) => {
    if (!sharedOrSkip(t)) return;
    const e = await engines.engine(name, t);
    if (!e) return;
    const { chain } = crashChain(40); // 44 blocks: the vector blocks, then burns and payments
    const store = await e.open(await e.newDb());
    const batches: number[][] = [];
    const apply = store.applyBlocks.bind(store);
    store.applyBlocks = async (bs) => {
      await apply(bs);
      batches.push(bs.map((b) => b.height));
    };
    // once block 30 is asked for, the node replaces blocks 25..44 by 21 others: blocks fetched
    // ahead from the old branch stop linking and must be fetched again, the reorg rolled back
    const hashAt = chain.hashAt.bind(chain);
    const charm = [...bitcoinVectors().values()][0]!.txid;
    let reorged = false;
    chain.hashAt = async (h) => {
      const r = await hashAt(h);
      if (h === 30 && !reorged) {
        reorged = true;
        chain.reorg(
          20,
          Array.from({ length: 21 }, (_, i) => [burnTx(charm, i % 2, 5000 + i)]),
        );
      }
      return r;
    };
    const f = new Follower(store, chain, { startHeight: 1, check: librarySpellCheck(false), fetchAhead: 4, commitBlocks: 8 });
    try {
      await synced(f);
      await synced(f);
      assert.ok(reorged);
      assert.equal((await store.tip())?.hash, chain.best[chain.height], 'at the node tip');
      assert.equal(await dumpIndex(store), await replayDump(e, chain), 'equals a one-block-at-a-time replay');
      const heights = batches.flat();
      assert.ok(batches.some((b) => b.length > 1) && batches.every((b) => b.length <= 8), `batches ${JSON.stringify(batches)}`);
      assert.deepEqual(
        batches.filter((b) => b.length > 1).flatMap((b) => b.slice(1).map((h, i) => h - b[i]!)),
        batches.filter((b) => b.length > 1).flatMap((b) => b.slice(1).map(() => 1)),
        'a batch is consecutive blocks',
      );
      // the last commitBlocks blocks below the node tip were committed one by one
      const last = batches.slice(-8);
      assert.ok(
        last.every((b) => b.length === 1),
        `near the tip: ${JSON.stringify(last)}`,
      );
      assert.equal(heights.at(-1), chain.height);
      assert.ok(f.status.reorgs >= 1 || (await store.lastReorg()) !== undefined, 'the reorg under the fetches was followed');
    } finally {
      await store.close();
    }
  });
}

// ------------------------------------------------------------------ following: status, progress, polling

/** Runs the event loop's pending work until `cond` holds (bounded by turns, not by the clock: the tests below mock setTimeout). */
async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200_000 && !cond(); i++) await new Promise((r) => setImmediate(r));
  assert.ok(cond(), `waiting for ${what}`);
}

test('status: 503 past 6 blocks of lag and 200 at 6; progress (height, blocks/s, ETA) on the progress lines and in /v1/status', async () => {
  const e = engines.sqlite();
  const store = await e.open(await e.newDb());
  const chain = new MemoryChain();
  for (let i = 0; i < 30; i++) chain.mine();
  let clock = 1_000_000;
  const lines: string[] = [];
  let stopped = false;
  const f = new Follower(store, chain, {
    startHeight: 1,
    fetchAhead: 1,
    commitBlocks: 1,
    check: librarySpellCheck(false),
    now: () => (clock += 250),
    progress: (line) => {
      lines.push(line);
      // the node starts answering garbage once a line with a rate was printed: the sync stops half-way
      if (!stopped && / [1-9][\d.]* blocks\/s/.test(line)) [stopped, chain.fault] = [true, 'garbage'];
    },
  });
  // the API reads the follower's clock (its node's silence is measured on it)
  const h = indexApiHandler({ store, follower: f, network: 'regtest', version: 'test', now: () => clock });
  try {
    await f.syncOnce();
    const line = lines.map((l) => /^index: block (\d+) of 30, ([\d.]+) blocks\/s, ETA (\d+) s$/.exec(l)).find((m) => m && Number(m[2]) > 0);
    assert.ok(line, `a progress line with height, rate and ETA: ${lines.join(' | ')}`);
    let st = await answer(h, '/v1/status');
    assert.equal(st.status, 503, 'far behind the node');
    assert.ok(st.json.lag_blocks > 6);
    assert.equal(st.json.node.height, 30);
    assert.equal(st.json.lag_blocks, 30 - st.json.index.height);
    assert.ok(st.json.sync.rate_blocks_per_s > 0, 'the sync rate in the status');
    assert.ok(st.json.sync.eta_seconds > 0, 'the ETA in the status');
    assert.equal(st.json.error.code, 'UPSTREAM_FAILED', 'the node fault in the status');
    assert.equal(st.json.synced, false);

    chain.fault = undefined;
    await f.syncOnce();
    st = await answer(h, '/v1/status');
    assert.equal(st.status, 200);
    assert.deepEqual([st.json.lag_blocks, st.json.synced, st.json.sync.eta_seconds, st.json.error], [0, true, 0, null]);

    // the node moves on while its blocks cannot be read: 6 behind is still healthy, 7 is not
    chain.fault = 'garbage';
    for (let i = 0; i < 6; i++) chain.mine();
    await f.syncOnce();
    st = await answer(h, '/v1/status');
    assert.deepEqual([st.status, st.json.lag_blocks], [200, 6]);
    chain.mine();
    await f.syncOnce();
    st = await answer(h, '/v1/status');
    assert.deepEqual([st.status, st.json.lag_blocks], [503, 7]);
  } finally {
    await store.close();
  }
});

test('without ZMQ the follower polls the node every 5 s by default', async (t) => {
  const e = engines.sqlite();
  const store = await e.open(await e.newDb());
  const chain = new MemoryChain();
  chain.mine();
  let polls = 0;
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const f = new Follower(store, chain, { startHeight: 1, check: librarySpellCheck(false), afterSync: async () => void polls++ });
  try {
    f.start();
    await until(() => polls === 1, 'the first poll');
    for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r)); // the loop reaches its timer
    t.mock.timers.tick(4_999);
    for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
    assert.equal(polls, 1, 'no poll before 5 s');
    chain.mine();
    t.mock.timers.tick(1);
    await until(() => polls === 2, 'the poll at 5 s');
    assert.equal((await store.tip())?.height, 2, 'the new block, read by that poll');
  } finally {
    await f.stop();
    await store.close();
  }
});

for (const name of ENGINES) {
  test(`${name}: an over-cap reorg stays reported after a restart and by --api-only readers; an unreached node is a 503`, async (t) => {
    const e = await engines.engine(name, t);
    if (!e) return;
    const db = await e.newDb();
    const chain = new MemoryChain();
    for (let i = 0; i < 5; i++) chain.mine();
    const follower = (store: IndexWriter) => new Follower(store, chain, { startHeight: 1, maxReorgDepth: 2, check: librarySpellCheck(false) });
    let store = await e.open(db);
    const reader = await e.open(db, { mode: 'reader' });
    try {
      let f = follower(store);
      await f.syncOnce();
      const tip = await store.tip();
      chain.reorg(3, [[], [], [], []]);
      await f.syncOnce();
      assert.equal(f.status.unrecoverable?.depth, 3);
      // an --api-only reader of the same database (no follower of its own)
      const replica = indexApiHandler({ store: reader, network: 'regtest', version: 'test' });
      let st = await answer(replica, '/v1/status');
      assert.equal(st.status, 503, 'the reader reports the stopped index');
      assert.equal(st.json.reorg.unrecoverable.depth, 3);
      // the indexer restarted: still stopped, nothing written, 503 from the start
      await store.close();
      store = await e.open(db);
      f = follower(store);
      const h = indexApiHandler({ store, follower: f, network: 'regtest', version: 'test' });
      assert.equal((await answer(h, '/v1/status')).status, 503, 'before the first poll');
      await f.syncOnce();
      st = await answer(h, '/v1/status');
      assert.equal(st.status, 503);
      assert.equal(st.json.reorg.unrecoverable.depth, 3);
      assert.match(st.json.error.message, /--max-reorg-depth 2 .*reindex/);
      assert.deepEqual(await store.tip(), tip, 'no writes after the restart either');
    } finally {
      await reader.close();
      await store.close();
    }
    // a fresh index whose node is down: no node height known, so not healthy
    const down = new MemoryChain();
    down.fault = 'down';
    const s2 = await e.open(await e.newDb());
    try {
      const f = new Follower(s2, down, { startHeight: 1, check: librarySpellCheck(false) });
      await f.syncOnce();
      const st = await answer(indexApiHandler({ store: s2, follower: f, network: 'regtest', version: 'test' }), '/v1/status');
      assert.equal(st.status, 503);
      assert.deepEqual([st.json.node, st.json.error.code], [null, 'UPSTREAM_UNAVAILABLE']);
    } finally {
      await s2.close();
    }
    // a synced index whose node then went silent: healthy for a while, then not
    const lost = new MemoryChain();
    for (let i = 0; i < 3; i++) lost.mine();
    const s3 = await e.open(await e.newDb());
    try {
      let clock = 1_000_000;
      const f = new Follower(s3, lost, { startHeight: 1, check: librarySpellCheck(false), now: () => clock });
      const h = indexApiHandler({ store: s3, follower: f, network: 'regtest', version: 'test', now: () => clock, maxNodeSilenceMs: 60_000 });
      await f.syncOnce();
      let st = await answer(h, '/v1/status');
      assert.deepEqual([st.status, st.json.synced, st.json.node.answered_at], [200, true, 1_000_000]);
      lost.fault = 'down';
      clock += 30_000;
      await f.syncOnce();
      st = await answer(h, '/v1/status');
      assert.deepEqual([st.status, st.json.synced, st.json.error.code], [200, true, 'UPSTREAM_UNAVAILABLE'], 'a short outage');
      clock += 31_000;
      await f.syncOnce();
      st = await answer(h, '/v1/status');
      assert.deepEqual([st.status, st.json.synced, st.json.lag_blocks, st.json.node.answered_at], [503, false, 0, 1_000_000], 'silent past the limit');
      lost.fault = undefined;
      clock += 1_000;
      await f.syncOnce();
      st = await answer(h, '/v1/status');
      assert.deepEqual([st.status, st.json.synced, st.json.error, st.json.node.answered_at], [200, true, null, 1_062_000], 'back');
    } finally {
      await s3.close();
    }
  });
}

test('a block served with its spell witnesses stripped is refused through the follower, never written, and fetched again', async (t) => {
  if (!sharedOrSkip(t)) return;
  const e = engines.sqlite();
  const fake = await FakeBitcoind.start();
  const store = await e.open(await e.newDb());
  try {
    const v = bitcoinVectors();
    const [b1, b2] = VECTOR_BLOCKS.slice(0, 2).map((names) => fake.mine(names.map((n) => v.get(n)!.raw)));
    const source = blockSourceFromConfig({ rpcUrl: fake.rpcUrl, rpcCookie: fake.cookieFile, timeoutMs: 5000 }, { network: BITCOIN_NETWORKS.regtest })!;
    const f = new Follower(store, source, { startHeight: 1, check: librarySpellCheck(false), fetchAhead: 1 });
    const spells = VECTOR_BLOCKS[0]!.map((n) => v.get(n)!.txid);
    // block 1: every witness gone (the pre-v9 spells with them); block 2: one transaction's
    fake.faults.stripWitness.set(b1!.hash, (i) => i > 0);
    fake.faults.stripWitness.set(b2!.hash, (i) => i === 1);
    await f.syncOnce();
    assert.equal(f.status.error?.code, 'UPSTREAM_FAILED');
    assert.match(f.status.error!.message, /witness/);
    assert.equal(await store.tip(), undefined, 'nothing written');
    for (const txid of spells) assert.equal(await store.spellTx(txid), undefined);
    fake.faults.stripWitness.delete(b1!.hash);
    await f.syncOnce();
    assert.match(f.status.error?.message ?? '', /witness/, 'block 2 is refused in turn');
    assert.equal((await store.tip())?.hash, b1!.hash, 'block 1 as the node mined it');
    const ok = verifiedByLibrary(VECTOR_BLOCKS[0]!.map((n) => v.get(n)!));
    assert.ok(ok.size >= 2);
    for (const txid of spells) assert.equal((await store.spellTx(txid)) !== undefined, ok.has(txid));
    fake.faults.stripWitness.clear();
    await synced(f);
    assert.equal((await store.tip())?.hash, b2!.hash);
    const ok2 = verifiedByLibrary(VECTOR_BLOCKS[1]!.map((n) => v.get(n)!));
    for (const n of VECTOR_BLOCKS[1]!) assert.equal((await store.spellTx(v.get(n)!.txid)) !== undefined, ok2.has(v.get(n)!.txid), n);
  } finally {
    await store.close();
    await fake.stop();
  }
});

/** A logger that keeps its lines (JSON objects). */
function capture(): { log: ReturnType<typeof createLogger>; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return { log: createLogger('debug', (l) => void lines.push(JSON.parse(l) as Record<string, unknown>)), lines };
}

test('a node 28 blocks behind on the same chain is waited for, not rolled back; it catches up; a real reorg still rolls back', async () => {
  const e = engines.sqlite();
  const chain = new MemoryChain();
  for (let i = 0; i < 40; i++) chain.mine([]);
  const store = await e.open(await e.newDb());
  const { log, lines } = capture();
  const f = new Follower(store, chain, { startHeight: 1, check: librarySpellCheck(false), maxReorgDepth: 10, log });
  try {
    await synced(f);
    const full = chain.best.slice();
    chain.best = full.slice(0, full.length - 28); // a reindexing node: a prefix of our chain
    await synced(f);
    assert.equal((await store.tip())?.height, 40, 'nothing rolled back');
    assert.equal(f.status.unrecoverable, undefined);
    assert.equal(await store.lastReorg(), undefined);
    assert.deepEqual({ ...f.status.nodeBehind, since: 0 }, { nodeHeight: 12, indexHeight: 40, since: 0 });
    await synced(f); // still behind: one log line, not one per poll
    assert.equal(lines.filter((l) => l.event === 'node_behind').length, 1);
    assert.equal(lines.find((l) => l.event === 'node_behind')!.node_height, 12);
    chain.best = full;
    chain.mine([]);
    await synced(f);
    assert.equal(f.status.nodeBehind, undefined);
    assert.equal((await store.tip())?.height, 41, 'resumed');
    assert.ok(lines.some((l) => l.event === 'node_caught_up'));
    // shorter AND different at a height we have: a real reorg
    chain.best = chain.best.slice(0, 39);
    chain.reorg(1, [[]]);
    await synced(f);
    assert.equal((await store.tip())?.hash, chain.best[38]);
    const r = lines.find((l) => l.event === 'reorg')!;
    assert.equal(r.fork_height, 37);
    assert.equal(r.new_tip, chain.best[38]);
    assert.equal((await store.lastReorg())?.newTip, chain.best[38], 'reorg.last names the new tip');
  } finally {
    await store.close();
  }
});

test('a node 5 blocks behind (below the reorg cap) on the same chain is waited for: no block rolled back, no reorg', async () => {
  const e = engines.sqlite();
  const chain = new MemoryChain();
  for (let i = 0; i < 20; i++) chain.mine([]);
  const store = await e.open(await e.newDb());
  const { log, lines } = capture();
  const f = new Follower(store, chain, { startHeight: 1, check: librarySpellCheck(false), maxReorgDepth: 10, log });
  try {
    await synced(f);
    const full = chain.best.slice();
    chain.best = full.slice(0, full.length - 5);
    await synced(f);
    await synced(f);
    assert.equal((await store.tip())?.hash, full.at(-1), 'nothing rolled back');
    assert.equal(await store.lastReorg(), undefined, 'no reorg recorded');
    assert.equal(lines.filter((l) => l.event === 'reorg').length, 0);
    assert.deepEqual({ ...f.status.nodeBehind, since: 0 }, { nodeHeight: 15, indexHeight: 20, since: 0 });
    chain.best = full;
    await synced(f);
    assert.equal(f.status.nodeBehind, undefined, 'caught up: no longer behind');
    assert.equal((await store.tip())?.hash, full.at(-1));
  } finally {
    await store.close();
  }
});

test('a node below the start height: waiting, said once in the log; indexing starts when it gets there', async () => {
  const e = engines.sqlite();
  const chain = new MemoryChain();
  for (let i = 0; i < 5; i++) chain.mine([]);
  const store = await e.open(await e.newDb(), { startHeight: 8 });
  const { log, lines } = capture();
  const f = new Follower(store, chain, { startHeight: 8, check: librarySpellCheck(false), log });
  try {
    await synced(f);
    await synced(f);
    assert.deepEqual(f.status.waitingForStart, { startHeight: 8, nodeHeight: 5 });
    const w = lines.filter((l) => l.event === 'waiting_for_start');
    assert.equal(w.length, 1);
    assert.equal(w[0]!.msg, 'waiting for the node to reach the start height 8 (node at 5)');
    assert.equal(await store.tip(), undefined);
    for (let i = 0; i < 4; i++) chain.mine([]);
    await synced(f);
    assert.equal(f.status.waitingForStart, undefined);
    assert.equal((await store.tip())?.height, 9);
  } finally {
    await store.close();
  }
});

test('logs: the node unreachable and back once each, "synced at height N" once at the tip, a final progress line, an over-cap stop', async () => {
  const e = engines.sqlite();
  const chain = new MemoryChain();
  for (let i = 0; i < 10; i++) chain.mine([]);
  const store = await e.open(await e.newDb());
  const { log, lines } = capture();
  const progress: string[] = [];
  let clock = 1_000_000;
  const f = new Follower(store, chain, {
    startHeight: 1,
    fetchAhead: 1,
    commitBlocks: 1,
    maxReorgDepth: 3,
    check: librarySpellCheck(false),
    now: () => (clock += 700),
    progress: (l) => void progress.push(l),
    log,
  });
  const events = (name: string) => lines.filter((l) => l.event === name);
  try {
    await synced(f);
    assert.ok(progress.length >= 2, progress.join(' | '));
    assert.match(progress.at(-1)!, /^index: block 10 of 10, [\d.]+ blocks\/s, ETA 0 s$/, 'the last line is final');
    assert.deepEqual(
      events('synced').map((l) => [l.level, l.msg, l.height, l.hash]),
      [['info', 'synced at height 10', 10, chain.best[10]]],
    );
    // at the tip, a block at a time: no more "synced" lines, no progress lines
    const printed = progress.length;
    await synced(f);
    chain.mine([]);
    await synced(f);
    assert.equal(events('synced').length, 1, 'once when reaching the tip, not per poll or per block');
    assert.equal(progress.length, printed);

    // the node goes away for three polls, then comes back: one line each
    chain.fault = 'down';
    for (let i = 0; i < 3; i++) await f.syncOnce();
    assert.equal(f.status.error?.code, 'UPSTREAM_UNAVAILABLE');
    assert.deepEqual(
      events('node_unreachable').map((l) => [l.level, l.source, l.code]),
      [['warn', 'memory chain', 'UPSTREAM_UNAVAILABLE']],
    );
    assert.equal(events('node_back').length, 0);
    chain.fault = undefined;
    for (let i = 0; i < 5; i++) chain.mine([]);
    await synced(f);
    await synced(f);
    const back = events('node_back');
    assert.deepEqual(
      back.map((l) => [l.level, l.node_height]),
      [['info', 16]],
    );
    assert.ok((back[0]!.down_ms as number) > 0);
    // caught up after falling behind: said again
    assert.deepEqual(
      events('synced').map((l) => l.height),
      [10, 16],
    );
    assert.match(progress.at(-1)!, /^index: block 16 of 16, /);

    // a reorg deeper than the cap: one error line with its depth, fork height and old tip
    const old = chain.best[16]!;
    chain.reorg(5, [[], [], [], [], [], []]);
    await f.syncOnce();
    await f.syncOnce();
    const cap = events('reorg_over_cap');
    assert.equal(cap.length, 1);
    assert.deepEqual([cap[0]!.level, cap[0]!.depth, cap[0]!.old_tip, cap[0]!.max_reorg_depth], ['error', 4, old, 3]);
    assert.equal(typeof cap[0]!.fork_height, 'number');
  } finally {
    await store.close();
  }
});
