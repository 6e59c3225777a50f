/**
 * The Cardano index end to end against the fake Ogmios (src/testing/fake-ogmios.ts) on both
 * engines: blocks built from the real Cardano charms transactions of vectors/ and fabricated ones
 * that move the learned token without a spell (split, merge, burn) and spend a non-token charm
 * without one; rollbacks equal a from-scratch replay (learned tokens un-learned too), the same
 * answers at pipelining depth 1 and 8, the reorg cap, transactions without CBOR.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { assetNameForApp, policyIdForApp } from '../cardano/assets.js';
import { CARDANO_NETWORKS } from '../model/network.js';
import { appFromString } from '../model/primitives.js';
import { OgmiosFollower } from '../sources/ogmios.js';
import type { PointOrOrigin } from '../sources/ogmios-protocol.js';
import { conwayTx, conwayTxId, realCardanoVectors } from '../testing/cardano-txs.js';
import { FakeOgmios, fakeBlockId, praosBlocks, type FakeBlock, type FakeTx, type OgmiosVersion } from '../testing/fake-ogmios.js';
import { dumpIndex, unspentOfApp } from '../testing/index-dump.js';
import { ENGINES, TestEngines, type TestEngine } from '../testing/index-stores.js';
import { skipOrFail } from '../testing/require.js';
import { hasShared } from '../testing/shared.js';
import { waitFor } from '../testing/wait.js';
import { toHex } from '../util/bytes.js';
import { CardanoFollower, slotTime } from './cardano-follow.js';
import type { IndexWriter } from './store.js';

const network = CARDANO_NETWORKS.preprod;
const engines = new TestEngines();
after(() => engines.close());

const V10 = '28bbfea24dc7c74db73a5c02da45df0415d279cc29f09eb4736cbe0faf75457b'; // learns a token, 100000000 on vout 0
const V11_BEAM = '361927aed267ef049a5b9315aa7296493b385938d73340146b0af5d4637a02cf'; // beams 3 outputs, a c/ charm on vout 0
const V11_TWIN = '712fcb00421d163794c22eef627c5e49f3d3f19ea95953871f90286e1bf6f66c'; // the same inputs: a fork's other side

const START = { slot: 980, id: fakeBlockId(99) } satisfies PointOrOrigin;
/** The block of the start point (the fake serves it; the index starts after it). */
const ROOT: FakeBlock = { type: 'praos', era: 'conway', id: START.id, ancestor: fakeBlockId(98), height: 99, slot: START.slot, txs: [] };
/** A fake Ogmios whose chain holds the start point's block; the index's blocks follow from index 1. */
async function startOgmios(o: { version?: OgmiosVersion } = {}): Promise<FakeOgmios> {
  const f = await FakeOgmios.start(o);
  f.extend(ROOT);
  return f;
}
const addr = (b: number) => new Uint8Array(29).fill(b).map((x, i) => (i === 0 ? 0x60 : x));
const fab = (spec: Parameters<typeof conwayTx>[0]): FakeTx => {
  const cbor = conwayTx(spec);
  return { cbor, id: conwayTxId(cbor) };
};
const real = (txid: string): FakeTx => {
  const v = realCardanoVectors().get(txid)!;
  return { cbor: v.bytes, id: v.txid };
};

/** The learned token's app (read from the index after the spell) and its native asset. */
function tokenAsset(app: string): [string, string] {
  const a = appFromString(app);
  return [toHex(policyIdForApp(a)), toHex(assetNameForApp(a))];
}

interface Scenario {
  blocks: FakeTx[][];
  token: string;
}

/**
 * Blocks 100-105: the v10 spell (learns the token), a virtual split, an empty block, a virtual
 * merge, the v11 beaming spell, and a spell-less spend of its c/ charm plus a burn of the token.
 */
function scenario(token: string): Scenario {
  const [P, N] = tokenAsset(token);
  const split = fab({
    inputs: [{ txid: V10, index: 0 }],
    outputs: [
      { address: addr(1), lovelace: 2_000_000n, assets: [[P, N, 60_000_000n]] },
      { address: addr(2), lovelace: 2_000_000n, assets: [[P, N, 40_000_000n]] },
    ],
  });
  const merge = fab({
    inputs: [
      { txid: split.id, index: 0 },
      { txid: split.id, index: 1 },
    ],
    outputs: [{ address: addr(3), lovelace: 3_000_000n, assets: [[P, N, 100_000_000n]] }],
  });
  const spendCharm = fab({ inputs: [{ txid: V11_BEAM, index: 0 }], outputs: [{ address: addr(4), lovelace: 1_000_000n }] });
  const burn = fab({ inputs: [{ txid: merge.id, index: 0 }], outputs: [{ address: addr(5), lovelace: 1_000_000n }], salt: 1 });
  return { token, blocks: [[real(V10)], [split], [], [merge], [real(V11_BEAM)], [spendCharm, burn]] };
}

const chainOf = (blocks: FakeTx[][], from = 0, branch?: string, ancestor = START.id): FakeBlock[] =>
  praosBlocks(blocks, { height: 100 + from, slot: 1000 + 20 * from, ancestor, ...(branch ? { branch } : {}) });

interface Run {
  store: IndexWriter;
  follower: CardanoFollower;
  close(): Promise<void>;
}

async function follow(
  e: TestEngine,
  ogmios: FakeOgmios,
  o: { pipeline?: number; maxReorgDepth?: number; commitBlocks?: number; db?: string } = {},
): Promise<Run> {
  const store = await e.open(o.db ?? (await e.newDb()), { chain: 'cardano', network: 'preprod', startHeight: 0 });
  const follower = new CardanoFollower(
    store,
    (points) => new OgmiosFollower({ url: ogmios.url, network, pipeline: o.pipeline ?? 8, points, backoffMs: { first: 10, max: 50 } }),
    { network, startPoint: START, mock: false, maxReorgDepth: o.maxReorgDepth, commitBlocks: o.commitBlocks },
  );
  follower.start();
  return {
    store,
    follower,
    async close() {
      await follower.stop();
      await store.close();
    },
  };
}

async function reach(r: Run, height: number, hash: string): Promise<void> {
  try {
    await waitFor(async () => (await r.store.tip())?.hash === hash && r.follower.status.indexHeight === height, `the index at ${height} ${hash}`);
  } catch (e) {
    throw new Error(`${(e as Error).message} (status error: ${r.follower.status.error?.message})`);
  }
}

/** The token app the v10 spell teaches (from the index, so the test does not restate it). */
async function learnedToken(e: TestEngine): Promise<string> {
  const ogmios = await startOgmios();
  const r = await follow(e, ogmios);
  try {
    ogmios.extend(...chainOf([[real(V10)]]));
    await reach(r, 100, fakeBlockId(100));
    const l = await r.store.learnedTokens();
    assert.equal(l.length, 1);
    assert.equal(l[0]!.height, 100);
    return l[0]!.app;
  } finally {
    await r.close();
    await ogmios.close();
  }
}

for (const name of ENGINES)
  for (const version of ['v6', 'v7'] as OgmiosVersion[])
    test(`${name}, Ogmios ${version}: spells, virtual split/merge/burn, beams, a spell-less spend; pipelining 1 = 8`, async (t) => {
      if (!hasShared) return skipOrFail(t, 'test vectors not found (CHARMS_SHARED_DIR)');
      const e = await engines.engine(name, t);
      if (!e) return;
      const token = await learnedToken(e);
      const s = scenario(token);
      const dumps: string[] = [];
      for (const pipeline of [1, 8]) {
        const ogmios = await startOgmios({ version });
        const r = await follow(e, ogmios, { pipeline });
        try {
          const chain = chainOf(s.blocks);
          ogmios.extend(...chain);
          await reach(r, 105, chain[5]!.id);
          // after the split: 60 + 40 at addr 1 and 2; after the merge: 100 at addr 3; burned at 105
          assert.deepEqual(await unspentOfApp(r.store, token), [], 'the burn spent the merged token without carrying it');
          const txs = s.blocks.flat();
          const [, split, merge, , spendCharm, burn] = txs;
          const splitRows = await r.store.outputsOf(split!.id);
          assert.deepEqual(
            splitRows.map((o) => [o.vout, o.app, o.amount, o.spent?.txid]),
            [
              [0, token, 60_000_000n, merge!.id],
              [1, token, 40_000_000n, merge!.id],
            ],
          );
          assert.deepEqual(
            (await r.store.outputsOf(merge!.id)).map((o) => [o.amount, o.spent?.txid]),
            [[100_000_000n, burn!.id]],
          );
          assert.deepEqual(await r.store.outputsOf(burn!.id), []);
          // the v10 spell's output spent by the split (a virtual move carries it on)
          assert.equal((await r.store.outputsOf(V10))[0]!.spent?.txid, split!.id);
          // the beaming spell: its held c/ charm spent without a spell (burned), its beamed outputs recorded
          const beamTx = await r.store.outputsOf(V11_BEAM);
          assert.ok(beamTx.length > 0 && beamTx.every((o) => o.spent?.txid === spendCharm!.id));
          const beamed = await r.store.beamedOf(V11_BEAM);
          assert.equal(new Set(beamed.map((b) => `${b.vout} ${b.app}`)).size, 3);
          assert.ok(beamed.every((b) => /^[0-9a-f]{64}$/.test(b.beamedTo) && b.createdHeight === 104));
          assert.deepEqual(await r.store.outputsOf(spendCharm!.id), []);
          const spells = await Promise.all([V10, V11_BEAM].map((id) => r.store.spellTx(id)));
          assert.deepEqual(
            spells.map((x) => [x?.height, x?.version]),
            [
              [100, 10],
              [104, 11],
            ],
          );
          const tip = await r.store.tip();
          assert.equal(tip?.slot, 1100);
          assert.equal(tip?.time, slotTime(network, 1100));
          assert.equal(r.follower.status.nodeSlot, 1100);
          dumps.push(await dumpIndex(r.store));
        } finally {
          await r.close();
          await ogmios.close();
        }
      }
      assert.equal(dumps[0], dumps[1], 'the same index whatever the pipelining depth');
    });

for (const name of ENGINES)
  test(`${name}: rollbacks undo every later block in one transaction and equal a replay; learned tokens un-learned`, async (t) => {
    if (!hasShared) return skipOrFail(t, 'test vectors not found (CHARMS_SHARED_DIR)');
    const e = await engines.engine(name, t);
    if (!e) return;
    const token = await learnedToken(e);
    const s = scenario(token);
    const ogmios = await startOgmios();
    const r = await follow(e, ogmios);
    const replay = async (chain: FakeBlock[]): Promise<string> => {
      const o2 = await startOgmios();
      const r2 = await follow(e, o2, { pipeline: 3 });
      try {
        o2.extend(...chain);
        await reach(r2, chain[chain.length - 1]!.height, chain[chain.length - 1]!.id);
        return await dumpIndex(r2.store);
      } finally {
        await r2.close();
        await o2.close();
      }
    };
    try {
      const main = chainOf(s.blocks);
      ogmios.extend(...main);
      await reach(r, 105, main[5]!.id);
      // fork 1: from block 104 on, the twin spell (same inputs) in place of the beaming one
      const f1 = chainOf([[real(V11_TWIN)], [], []], 4, 'f1', main[3]!.id);
      ogmios.fork(5, f1);
      await reach(r, 106, f1[2]!.id);
      assert.equal(r.follower.status.reorgs, 1);
      assert.deepEqual(await r.store.beamedOf(V11_BEAM), [], 'the rolled-back beams are gone');
      assert.equal((await r.store.beamedOf(V11_TWIN)).length, 3);
      assert.equal(await dumpIndex(r.store), await replay([...main.slice(0, 4), ...f1]));
      const last = await r.store.lastReorg();
      assert.deepEqual([last?.forkHeight, last?.depth, last?.oldTip], [103, 2, main[5]!.id]);
      // fork 2: from block 100 on, without the spell that taught the token: the split moves nothing
      const f2 = chainOf([[], s.blocks[1]!, [], s.blocks[3]!], 0, 'f2');
      ogmios.fork(1, f2);
      await reach(r, 103, f2[3]!.id);
      assert.deepEqual(await r.store.learnedTokens(), [], 'un-learned with the block that taught it');
      assert.deepEqual(await r.store.outputsOf(s.blocks[1]![0]!.id), []);
      assert.equal(await dumpIndex(r.store), await replay(f2));
      // and again with the spell: learned at its new height
      const f3 = chainOf([[], s.blocks[1]!, [real(V10)]], 1, 'f3', f2[0]!.id);
      ogmios.fork(2, f3);
      await reach(r, 103, f3[2]!.id);
      assert.deepEqual(await r.store.learnedTokens(), [{ app: token, height: 103 }]);
      assert.equal(await dumpIndex(r.store), await replay([f2[0]!, ...f3]));
    } finally {
      await r.close();
      await ogmios.close();
    }
  });

for (const name of ENGINES)
  test(`${name}: a rollback deeper than --max-reorg-depth stops writing, recorded for a restart`, async (t) => {
    const e = await engines.engine(name, t);
    if (!e) return;
    const ogmios = await startOgmios();
    const db = await e.newDb();
    const r = await follow(e, ogmios, { maxReorgDepth: 2, db });
    try {
      const main = chainOf([[], [], [], [], []]);
      ogmios.extend(...main);
      await reach(r, 104, main[4]!.id);
      ogmios.fork(2, chainOf([[], [], [], [], []], 1, 'deep', main[0]!.id));
      await waitFor(() => r.follower.status.unrecoverable, 'the over-cap rollback');
      await waitFor(() => r.follower.status.error, 'the error in the status');
      assert.match(r.follower.status.error!.message, /deeper than --max-reorg-depth 2/);
      assert.equal((await r.store.tip())?.height, 104, 'nothing rolled back or written');
      assert.ok(await r.store.unrecoverable());
    } finally {
      await r.close();
    }
    const again = await follow(e, ogmios, { maxReorgDepth: 2, db });
    try {
      await waitFor(() => again.follower.status.unrecoverable, 'the recorded over-cap rollback after a restart');
      assert.equal((await again.store.tip())?.height, 104);
    } finally {
      await again.close();
      await ogmios.close();
    }
  });

test('transactions without cbor stop the index with an error naming --include-transaction-cbor', async (t) => {
  const e = await engines.engine('sqlite', t);
  if (!e) return;
  const ogmios = await startOgmios();
  const r = await follow(e, ogmios);
  try {
    const tx = fab({ inputs: [{ txid: 'ab'.repeat(32), index: 0 }], outputs: [{ address: addr(1), lovelace: 1n }] });
    ogmios.misbehave.push('no-cbor');
    ogmios.extend(...chainOf([[tx]]));
    await waitFor(() => r.follower.status.error, 'the error');
    assert.equal(r.follower.status.error!.code, 'CONFIG');
    assert.match(r.follower.status.error!.message, /--include-transaction-cbor/);
    assert.equal(await r.store.tip(), undefined);
  } finally {
    await r.close();
    await ogmios.close();
  }
});

test('a Bitcoin index is refused as a Cardano one and the other way round, saying what to do', async (t) => {
  const e = await engines.engine('sqlite', t);
  if (!e) return;
  const btc = await e.newDb();
  await (await e.open(btc)).close();
  await assert.rejects(e.open(btc, { chain: 'cardano', network: 'preprod' }), /the index is of bitcoin:regtest, not cardano:preprod; .*another --db/);
  const ada = await e.newDb();
  await (await e.open(ada, { chain: 'cardano', network: 'preprod' })).close();
  await assert.rejects(e.open(ada), /the index is of cardano:preprod, not bitcoin:regtest/);
  await assert.rejects(e.open(ada, { chain: 'cardano', network: 'preview' }), /network preprod, not preview/);
});

test('slot times: Shelley slots 1 s from the hard fork, Byron slots 20 s before it', () => {
  assert.equal(slotTime(CARDANO_NETWORKS.mainnet, 4_492_800), 1_596_059_091);
  assert.equal(slotTime(CARDANO_NETWORKS.mainnet, 0), 1_506_203_091); // mainnet systemStart 2017-09-23T21:44:51Z
  assert.equal(slotTime(CARDANO_NETWORKS.preprod, 0), Date.UTC(2022, 5, 1) / 1000);
  assert.equal(slotTime(CARDANO_NETWORKS.preview, 10), Date.UTC(2022, 9, 25) / 1000 + 10);
});
