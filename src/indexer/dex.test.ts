import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { blockTxRaw } from '../bitcoin/block.js';
import { parseTx } from '../bitcoin/tx.js';
import { appToString } from '../model/primitives.js';
import { ValueMap } from '../codec/value.js';
import { encodeSpellCbor, type NormalizedSpell } from '../model/spell.js';
import { extractAndVerifySpell } from '../verify/index.js';
import { ENGINES, sqlOn, TestEngines } from '../testing/index-stores.js';
import { sharedOrSkip } from '../testing/shared.js';
import { h1 } from '../testing/http.js';
import { dumpIndex } from '../testing/index-dump.js';
import { bitcoinVectors, burnTx, replayDump, vectorChain, type VectorTx } from '../testing/index-vectors.js';
import type { MemoryChain } from '../testing/memory-chain.js';
import { TEST_INDEX_SERVICE } from '../testing/index-fake-node.js';
import { charmOutputs } from './block-write.js';
import * as q from './query.js';
import { startIndexService } from './service.js';
import type { BlockWrite, IndexWriter } from './store.js';

const engines = new TestEngines();
after(() => engines.close());

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const json = (b: Buffer): Any => JSON.parse(b.toString('utf8'));

// the Cast apps and $BRO, written out here (not taken from dex.ts)
const CAST = [
  `b/${'0'.repeat(64)}/a471d3fcc436ae7cbc0e0c82a68cdc8e003ee21ef819e1acf834e11c43ce47d8`,
  `b/${'0'.repeat(64)}/ce0c45fe29f26ff197bf9288e62ad7513941294d513e724854d97bee53e03a45`,
];
const BRO = 't/3d7fe7e4cea6121947af73d70e5119bebd8aa5b7edfe74bfaf6e779a1847bd9b/c975d4e0c292fb95efbda5c13312d6ac1d8b5aeff7f0f1e5578645a2da70ff5f';
const BRO_IDS = ['3d7fe7e4cea6121947af73d70e5119bebd8aa5b7edfe74bfaf6e779a1847bd9b', '6274399ab68d4a35e5193394aded0bed548453f6ebb7ea46dd2ca0c251f74580'];

/** The two real Cast orders of the vectors, as their spells write them (vectors/chain: v8 ask, v10 bid). */
const ASK = {
  order_id: '2efcde0d11cca5c23a415de6cb917e6da5b747975911e7855eb29d0737a68873:0',
  maker: 'bc1qvlxzrdx5q8e56vpf45hae85kg8vjrze9qceada',
  side: 'ask',
  exec_type: 'all_or_none',
  price_num: 1,
  price_den: 500000,
  price_per_token: 200,
  amount: 10000,
  quantity: 5000000000,
  asset_app_id: BRO,
  parent_order_id: null,
};
const BID = {
  order_id: '7269cf1b2bc9e513440224ebebabcbd3a4a544d0adb6c5d8ca302953958bc4af:0',
  maker: 'bc1pc2u8wm8tqjhe0l9ajthhdfa0shays0vg4k2gn5au9walmdxqvgssfnn0xt',
  side: 'bid',
  exec_type: 'partial',
  price_num: 5000,
  price_den: 1,
  price_per_token: 500000000000,
  amount: 10000,
  quantity: 2,
  asset_app_id: BRO,
  parent_order_id: null,
};

/**
 * The status page's tag counts the chain's best chain implies, computed here: the charm outputs of
 * every verified spell naming a Cast app, and of every one moving $BRO or holding an order of it.
 */
async function expectedTags(chain: MemoryChain): Promise<{ cast: number; bro: number }> {
  let cast = 0;
  let bro = 0;
  for (let h = 1; h <= chain.height; h++) {
    const block = await chain.block((await chain.hashAt(h))!);
    for (let i = 1; i < block.offsets.length - 1; i++) {
      const raw = blockTxRaw(block, i);
      let spell: NormalizedSpell;
      try {
        spell = extractAndVerifySpell({ bitcoin: raw });
      } catch {
        continue;
      }
      const apps = spell.app_public_inputs.map(([a]) => appToString(a));
      const outs = parseTx(raw).outputs.length;
      const rows: string[] = [];
      spell.tx.outs.forEach((charms, vout) => {
        if (vout < outs && !spell.tx.beamed_outs?.has(vout)) for (const k of charms.keys()) rows.push(apps[k]!);
      });
      if (apps.some((a) => CAST.includes(a))) cast += rows.length;
      const orderOfBro = spell.tx.outs.some((charms) =>
        [...charms.values()].some((d) => {
          const token = d instanceof ValueMap ? (d.get('asset') as ValueMap | undefined)?.get?.('token') : undefined;
          return typeof token === 'string' && BRO_IDS.some((id) => token.includes(id));
        }),
      );
      if (orderOfBro || rows.some((a) => BRO_IDS.some((id) => a.includes(id)))) bro += rows.length;
    }
  }
  return { cast, bro };
}

function checkOrder(o: Any, want: Any, status: string, height: number): void {
  for (const [k, v] of Object.entries(want)) assert.deepEqual(o[k], v, `${want.order_id}.${k}`);
  assert.equal(o.txid, want.order_id.split(':')[0]);
  assert.equal(o.vout, 0);
  assert.equal(o.block_height, height);
  assert.equal(o.platform, 'charms-cast');
  assert.equal(o.status, status);
  assert.equal(o.filled_amount, status === 'filled' ? want.amount : 0);
  assert.equal(o.filled_quantity, status === 'filled' ? want.quantity : 0);
  assert.equal(o.scrolls_address, null);
  assert.equal(o.confirmed, true);
  assert.match(o.created_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  assert.equal(o.network, 'regtest');
  assert.equal(Object.keys(o).length, 22, 'the explorer’s 22 fields');
}

for (const name of ENGINES) {
  test(`${name}: the DEX routes answer the chain's Cast orders; a spend closes an order, a rollback reopens it`, async (t) => {
    if (!sharedOrSkip(t)) return;
    const e = await engines.engine(name, t);
    if (!e) return;
    const v = bitcoinVectors();
    const chain = vectorChain(v);
    const store = await e.open(await e.newDb());
    const svc = await startIndexService({ store, source: chain, ...TEST_INDEX_SERVICE, maxReorgDepth: 100 });
    const get = async (path: string) => {
      const r = await h1(svc.server.port, 'GET', path);
      assert.equal(r.status, 200, `${path} → ${r.status} ${r.body.toString('utf8').slice(0, 200)}`);
      return json(r.body);
    };
    const sync = async () => {
      await svc.follower!.syncOnce();
      await svc.follower!.syncOnce();
    };
    const tags = async () => (await get('/v1/status')).networks.regtest.tag_stats;
    try {
      await sync();
      // block 2 holds both orders (the bid later in it: newest first) and the v12 fulfill, whose
      // order (its input 0, 2d0e08d2…:0) is not in the chain: no activity row, as the explorer
      const all = await get('/v1/dex/orders?network=regtest');
      assert.equal(all.total, 2);
      assert.deepEqual(
        all.orders.map((o: Any) => o.order_id),
        [BID.order_id, ASK.order_id],
      );
      checkOrder(all.orders[0], BID, 'open', 2);
      checkOrder(all.orders[1], ASK, 'open', 2);
      assert.equal((await get('/v1/dex/orders/open')).total, 2);
      assert.deepEqual(
        (await get('/v1/dex/orders/open?side=bid')).orders.map((o: Any) => o.order_id),
        [BID.order_id],
      );
      assert.equal((await get(`/v1/dex/orders/open?asset=${encodeURIComponent(BRO)}`)).total, 2);
      assert.equal((await get(`/v1/dex/orders/by-asset/${encodeURIComponent(BRO)}?network=regtest`)).total, 2);
      assert.deepEqual(
        (await get(`/v1/dex/orders/by-maker/${ASK.maker}`)).orders.map((o: Any) => o.order_id),
        [ASK.order_id],
      );
      assert.equal((await get(`/v1/dex/orders/by-maker/${ASK.maker}?status=filled`)).total, 0);
      checkOrder(await get(`/v1/dex/orders/${encodeURIComponent(ASK.order_id)}`), ASK, 'open', 2);
      assert.equal(await get(`/v1/dex/orders/${'ab'.repeat(32)}:0`), null, 'an unknown order is null, as the explorer');
      assert.equal(await get('/v1/dex/orders/nonsense'), null);
      assert.deepEqual(await get('/v1/dex/orders?network=mainnet'), { total: 0, orders: [] });
      assert.deepEqual(await get('/v1/dex/orders/open?network=testnet4'), { total: 0, orders: [] });
      const page = await get('/v1/dex/orders?limit=1&page=2');
      assert.equal(page.total, 2);
      assert.deepEqual(
        page.orders.map((o: Any) => o.order_id),
        [ASK.order_id],
      );
      assert.equal((await h1(svc.server.port, 'GET', '/v1/dex/orders?limit=1001')).status, 400);
      const want = await expectedTags(chain);
      assert.ok(want.cast > 0 && want.bro > 0);
      assert.deepEqual(await tags(), { charms_cast_count: want.cast, bro_count: want.bro, dex_orders_count: 2 });

      // the ask's output burned (spent without a spell): no longer open
      chain.mine([burnTx(ASK.order_id.split(':')[0]!, 0, 9)]);
      await sync();
      checkOrder(await get(`/v1/dex/orders/${ASK.order_id}`), ASK, 'cancelled', 2);
      assert.deepEqual(
        (await get('/v1/dex/orders/open')).orders.map((o: Any) => o.order_id),
        [BID.order_id],
      );
      assert.equal((await get('/v1/dex/orders?status=cancelled')).total, 1);
      assert.equal((await tags()).dex_orders_count, 2);

      // the burn's block rolled back: open again, and the index equals one built from scratch
      chain.reorg(1, [[], []]);
      await sync();
      checkOrder(await get(`/v1/dex/orders/${ASK.order_id}`), ASK, 'open', 2);
      assert.equal((await get('/v1/dex/orders/open')).total, 2);
      assert.equal(await dumpIndex(store), await replayDump(e, chain));

      // the orders' block rolled back: no orders, the tags of the blocks left
      chain.reorg(chain.height - 1, [[], [], [], [], [], []]);
      await sync();
      assert.deepEqual(await get('/v1/dex/orders'), { total: 0, orders: [] });
      assert.equal(await get(`/v1/dex/orders/${ASK.order_id}`), null);
      const left = await expectedTags(chain);
      assert.deepEqual(await tags(), { charms_cast_count: left.cast, bro_count: left.bro, dex_orders_count: 0 });
      assert.equal(await dumpIndex(store), await replayDump(e, chain));
    } finally {
      await svc.close();
    }
  });

  test(`${name}: fulfills, cancels and remainders close orders as the explorer's rows say; rollback and back-fill are exact`, async (t) => {
    if (!sharedOrSkip(t)) return;
    const e = await engines.engine(name, t);
    if (!e) return;
    const v = bitcoinVectors();
    const h = (n: number) => n.toString(16).padStart(64, '0');
    const real = (x: VectorTx, txIndex: number) => {
      const spell = extractAndVerifySpell({ bitcoin: x.raw });
      return {
        spellTx: { txid: x.txid, txIndex, version: spell.version, spell: encodeSpellCbor(spell) },
        outputs: charmOutputs(spell, x.raw, x.txid, txIndex),
        spell,
      };
    };
    const ask = real(v.get('2efcde0d')!, 1);
    const bid = real(v.get('7269cf1b')!, 2);
    const fulfill = real(v.get('28355906')!, 1).spell; // 4 outs, outs[3] holds charms: a bid's fulfill
    // a cancel: a Cast spell of one output without an order (fabricated: the store checks no proof)
    const cancel: NormalizedSpell = { ...fulfill, tx: { ...fulfill.tx, outs: [fulfill.tx.outs[0]!] } };
    const spellTx = (txid: string, txIndex: number, s: NormalizedSpell) => ({ txid, txIndex, version: s.version, spell: encodeSpellCbor(s) });
    const block = (height: number, b: Partial<BlockWrite>): BlockWrite => ({
      height,
      hash: h(0x100 + height),
      prevHash: height === 1 ? h(0) : h(0x100 + height - 1),
      time: 1_700_000_000 + height,
      spellTxs: [],
      outputs: [],
      inputs: [],
      ...b,
    });
    const [F, C, R, B] = [h(0xf1), h(0xc1), h(0xe1), h(0xb1)];
    const url = await e.newDb();
    const s: IndexWriter = await e.open(url);
    const rows = () =>
      s.read(async (tx) => (await q.dexOrdersPage(tx, {}, { limit: 100, offset: 0 })).page.map((o) => `${o.orderId} ${o.status} ${o.parentOrderId}`));
    const dexDump = async () =>
      (await dumpIndex(s))
        .split('\n')
        .filter((l) => l.startsWith('dex ') || l.startsWith('meta '))
        .join('\n');
    try {
      await s.applyBlock(block(1, { spellTxs: [ask.spellTx, bid.spellTx], outputs: [...ask.outputs, ...bid.outputs] }));
      const opened = await dexDump();
      assert.deepEqual(await rows(), [`${BID.order_id} open null`, `${ASK.order_id} open null`]);
      // the fulfill spends the ask at its input 0: filled, with the explorer's activity row;
      // the cancel spends the bid at its input 1: cancelled, no activity row (the explorer's takes input 0)
      const b2 = block(2, {
        spellTxs: [spellTx(F, 1, fulfill), spellTx(C, 2, cancel)],
        inputs: [
          { txid: F, txIndex: 1, vin: 0, prevTxid: ask.spellTx.txid, prevVout: 0 },
          { txid: C, txIndex: 2, vin: 0, prevTxid: h(0xdead), prevVout: 0 },
          { txid: C, txIndex: 2, vin: 1, prevTxid: bid.spellTx.txid, prevVout: 0 },
        ],
      });
      await s.applyBlock(b2);
      assert.deepEqual(await rows(), [`${F}:0 filled ${ASK.order_id}`, `${BID.order_id} cancelled null`, `${ASK.order_id} filled null`]);
      const [activity, filledAsk] = await s.read((tx) => Promise.all([q.dexOrderById(tx, `${F}:0`), q.dexOrderById(tx, ASK.order_id)]));
      assert.equal(activity!.maker, ASK.maker);
      assert.equal(activity!.amount, 10000n);
      assert.equal(activity!.height, 2);
      assert.equal(filledAsk!.status, 'filled');
      assert.deepEqual(await s.read((tx) => q.tagStats(tx)), { charmsCast: 3, bro: 3, dexOrders: 3 });

      // rolled back: both open again, exactly the state after block 1
      await s.rollbackTo(1, { at: 1, depth: 1, oldTip: h(0x102), newTip: h(0x202) });
      assert.equal(await dexDump(), opened);
      assert.deepEqual(await s.read((tx) => q.tagStats(tx)), { charmsCast: 3, bro: 3, dexOrders: 2 });

      // another block 2: a remainder order (a create) spends the ask, a spell-less spend the bid
      await s.applyBlock(
        block(2, {
          hash: h(0x202),
          spellTxs: [spellTx(R, 1, bid.spell)],
          inputs: [
            { txid: R, txIndex: 1, vin: 0, prevTxid: ask.spellTx.txid, prevVout: 0 },
            { txid: B, txIndex: 2, vin: 0, prevTxid: bid.spellTx.txid, prevVout: 0 },
          ],
        }),
      );
      assert.deepEqual(await rows(), [`${R}:0 open null`, `${BID.order_id} cancelled null`, `${ASK.order_id} partial null`]);

      // a database from before V6: its DEX rows and tags come back from its spells on the next block
      const full = await dexDump();
      await s.close();
      await sqlOn(e, url, 'DELETE FROM dex_orders');
      await sqlOn(e, url, "DELETE FROM meta WHERE key IN ('dex_tag_charms_cast', 'dex_tag_bro', 'dex_orders_count')");
      await sqlOn(e, url, "UPDATE meta SET value = 'pending' WHERE key = 'dex_orders'");
      const again: IndexWriter = await e.open(url);
      try {
        await again.applyBlock(block(3, { prevHash: h(0x202) }));
        const back = (await dumpIndex(again))
          .split('\n')
          .filter((l) => l.startsWith('dex ') || l.startsWith('meta '))
          .join('\n');
        assert.equal(back, full);
      } finally {
        await again.close();
      }
    } finally {
      await s.close().catch(() => undefined);
    }
  });
}
