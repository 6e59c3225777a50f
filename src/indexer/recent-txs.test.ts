/**
 * `recent_txs`: the txids of the last blocks with their heights (schema 4), on both engines —
 * written with their block, pruned below the window, removed exactly by a rollback, read by an
 * `--api-only` reader — and the migration of an index from before it.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, sqlOn, TestEngines } from '../testing/index-stores.js';
import { dumpIndex } from '../testing/index-dump.js';
import type { BlockWrite, IndexReader, IndexWriter } from './store.js';
import { MIGRATIONS, SCHEMA_VERSION } from './schema.js';
import { startIndexService, type IndexService } from './service.js';
import { FakeBitcoind } from '../testing/fake-bitcoind.js';
import { TEST_INDEX_SERVICE } from '../testing/index-fake-node.js';
import { fillerTx } from '../testing/vector-chain.js';
import { h1 } from '../testing/http.js';
import { blockSourceFromConfig, btcSourceFromConfig } from '../sources/chain-sources.js';
import { BITCOIN_NETWORKS } from '../model/network.js';

const engines = new TestEngines();
after(() => engines.close());

const h = (n: number) => n.toString(16).padStart(64, '0');
const hash = (height: number, branch = 0) => h(0x1000 * (branch + 1) + height);
/** The txid of transaction `i` of block `height` (of `branch`). */
const txid = (height: number, i: number, branch = 0) => h(0x1000000 * (branch + 1) + 0x10000 * height + i);
const idsOf = (list: string[]) => Uint8Array.from(Buffer.from(list.join(''), 'hex'));

/** A block of `n` plain transactions, its txids kept, rows below `window` blocks dropped. */
function block(height: number, o: { n?: number; txids?: string[]; window?: number; branch?: number; prevBranch?: number; keep?: boolean } = {}): BlockWrite {
  const list = o.txids ?? Array.from({ length: o.n ?? 3 }, (_, i) => txid(height, i, o.branch));
  return {
    height,
    hash: hash(height, o.branch),
    prevHash: height === 1 ? h(0) : hash(height - 1, o.prevBranch ?? o.branch),
    time: 1000 + height,
    spellTxs: [],
    outputs: [],
    inputs: [],
    ...(o.keep === false ? {} : { txids: idsOf(list) }),
    recentFrom: height - (o.window ?? 1000) + 1,
  };
}

/** The heights `store` answers for `ids` (undefined: not kept). */
const heights = (store: IndexReader, ids: string[]) => Promise.all(ids.map((t) => store.recentTxHeight(t)));

for (const name of ENGINES) {
  test(`${name}: recent txids are written with their block, pruned below the window, rolled back exactly, read by a reader`, async (t) => {
    const e = await engines.engine(name, t);
    if (!e) return;
    const db = await e.newDb();
    const store = await e.open(db);
    const reader = await e.open(db, { mode: 'reader' });
    try {
      // a window of 3 blocks; block 1 is outside the node's window (not kept), 2..6 are kept
      await store.applyBlock(block(1, { window: 3, keep: false }));
      // 450 transactions: multi-row statements and their remainder (SQLite), one statement (PostgreSQL)
      await store.applyBlock(block(2, { window: 3, n: 450 }));
      assert.deepEqual(await heights(store, [txid(1, 0), txid(2, 0), txid(2, 449), txid(2, 450)]), [undefined, 2, 2, undefined]);
      for (let b = 3; b <= 5; b++) await store.applyBlock(block(b, { window: 3 }));
      // blocks 3..5 kept, block 2 pruned by block 5's transaction
      assert.deepEqual(await heights(store, [txid(2, 0), txid(2, 449), txid(3, 0), txid(4, 2), txid(5, 1)]), [undefined, undefined, 3, 4, 5]);
      assert.deepEqual(await heights(reader, [txid(2, 0), txid(3, 0), txid(4, 2), txid(5, 1)]), [undefined, 3, 4, 5], 'a reader reads the same');
      // a txid seen again (BIP30 allows it once the first is spent): the first height stays
      await store.applyBlock(block(6, { window: 3, txids: [txid(6, 0), txid(5, 1)] }));
      assert.deepEqual(await heights(store, [txid(3, 0), txid(5, 1), txid(6, 0)]), [undefined, 5, 6]);
      // a reorg back to 4: the rows of 5 and 6 go, 4's stay (and the kept first height of txid(5, 1) goes with 5)
      await store.rollbackTo(4, { at: 1, depth: 2, oldTip: hash(6), newTip: hash(5, 1) });
      assert.deepEqual(await heights(store, [txid(4, 0), txid(5, 0), txid(5, 1), txid(6, 0)]), [4, undefined, undefined, undefined]);
      assert.deepEqual(await heights(reader, [txid(4, 0), txid(5, 0), txid(6, 0)]), [4, undefined, undefined]);
      // the new branch confirms 6's first transaction in its block 5: its new height
      await store.applyBlocks([
        block(5, { window: 3, branch: 1, prevBranch: 0, txids: [txid(5, 0, 1), txid(6, 0)] }),
        block(6, { window: 3, branch: 1, txids: [txid(6, 0, 1)] }),
      ]);
      assert.deepEqual(await heights(store, [txid(4, 0), txid(6, 0), txid(5, 0, 1), txid(6, 0, 1), txid(5, 0)]), [4, 5, 5, 6, undefined]);
      // a block that does not apply (does not extend the tip) writes no recent row either
      await assert.rejects(store.applyBlock(block(8, { window: 3 })));
      assert.equal(await store.recentTxHeight(txid(8, 0)), undefined);
      // a window of 0 (--recent-tx-blocks 0): the next block drops every row, its own not written
      await store.applyBlock(block(7, { window: 0, branch: 1, keep: false }));
      assert.deepEqual(await heights(store, [txid(4, 0), txid(6, 0), txid(6, 0, 1)]), [undefined, undefined, undefined]);
      assert.doesNotMatch(await dumpIndex(store), /^recent /m);
    } finally {
      await reader.close();
      await store.close();
    }
  });

  test(`${name}: an index from before recent_txs is migrated by the writer and keeps answering`, async (t) => {
    const e = await engines.engine(name, t);
    if (!e) return;
    // the schema version before the recent_txs migration (whatever its number after merges)
    const before = MIGRATIONS.findIndex((m) => m.includes('recent_txs (height'));
    assert.ok(before >= 2);
    const file = await e.newDb();
    const old = await e.open(file);
    const spell = { txid: txid(1, 0), txIndex: 1, version: 15, spell: Uint8Array.of(0xa0) };
    await old.applyBlocks([{ ...block(1, { keep: false }), spellTxs: [spell] }, block(2, { keep: false })]);
    const dump = await dumpIndex(old);
    await old.close();
    // make it an index of version `before`: no recent_txs table, and the version says so
    await sqlOn(e, file, 'DROP TABLE recent_txs');
    await sqlOn(e, file, "UPDATE meta SET value = $1 WHERE key = 'schema_version'", [String(before)]);
    await assert.rejects(e.open(file, { mode: 'reader' }), new RegExp(`has schema ${before}`));
    const store = await e.open(file);
    try {
      assert.equal((await store.meta()).schemaVersion, SCHEMA_VERSION);
      assert.equal(await dumpIndex(store), dump, 'what the old index held is still there');
      assert.equal((await store.spellTx(txid(1, 0)))?.height, 1);
      assert.equal(await store.recentTxHeight(txid(2, 0)), undefined);
      await store.applyBlock(block(3));
      const reader = await e.open(file, { mode: 'reader' });
      try {
        assert.deepEqual(await heights(reader, [txid(2, 0), txid(3, 0), txid(3, 2)]), [undefined, 3, 3]);
        assert.equal((await reader.tip())?.height, 3);
      } finally {
        await reader.close();
      }
      await store.rollbackTo(2, { at: 1, depth: 1, oldTip: hash(3), newTip: hash(3, 1) });
      assert.equal(await store.recentTxHeight(txid(3, 0)), undefined);
    } finally {
      await store.close();
    }
  });
}

for (const name of ENGINES) {
  test(`${name}: /v1/wallet/tx of plain transactions from a Bitcoin Core without -txindex: heights of the recent blocks, a reorg, beyond the window`, async (t) => {
    const e = await engines.engine(name, t);
    if (!e) return;
    const fake = await FakeBitcoind.start();
    fake.txindex = false;
    const services: IndexService[] = [];
    try {
      const cfg = { rpcUrl: fake.rpcUrl, rpcCookie: fake.cookieFile! };
      const [a, b, c] = fillerTx(3, 0x7ec);
      fake.mine([a!.bytes]); // 1
      fake.mine([b!.bytes]); // 2
      fake.mineEmpty(2); // 3, 4
      const db = await e.newDb();
      const start = async (apiOnly: boolean) => {
        const store = await e.open(db, apiOnly ? { mode: 'reader' } : {});
        const svc = await startIndexService({
          ...TEST_INDEX_SERVICE,
          store,
          apiOnly,
          source: blockSourceFromConfig(cfg, { network: BITCOIN_NETWORKS.regtest }),
          btcSource: btcSourceFromConfig(cfg, { network: BITCOIN_NETWORKS.regtest }),
          recentTxBlocks: 3,
        });
        services.push(svc);
        return { svc, store };
      };
      const { svc, store: opened } = await start(false);
      const store = opened as IndexWriter;
      // which blocks the follower hands over with their txids
      const kept: number[] = [];
      const apply = store.applyBlocks.bind(store);
      store.applyBlocks = async (bs: BlockWrite[]) => {
        for (const w of bs) if (w.txids) kept.push(w.height);
        return apply(bs);
      };
      await svc.follower!.syncOnce();
      assert.equal(svc.follower!.status.error, undefined);
      assert.deepEqual(kept, [2, 3, 4], 'the initial sync writes the txids of the window below the node tip only');
      const reader = await start(true);
      const get = async (port: number, txid: string) => {
        const r = await h1(port, 'GET', `/v1/wallet/tx/${txid}`);
        return { status: r.status, body: JSON.parse(r.body.toString()) as Record<string, unknown> };
      };
      const where = async (port: number, txid: string) => {
        const r = await get(port, txid);
        assert.equal(r.status, 200, JSON.stringify(r.body));
        return [r.body.confirmations, r.body.block_height, r.body.block_hash];
      };
      // the node alone does not know a confirmed transaction outside its wallet
      const btc = btcSourceFromConfig(cfg, { network: BITCOIN_NETWORKS.regtest })!;
      assert.equal(await btc.txConfirmations!(b!.txid), undefined);
      // b, at height 2, is within the window (2..4): its height from the index, its bytes from its block
      for (const port of [svc.server.port, reader.svc.server.port]) {
        assert.deepEqual(await where(port, b!.txid), [3, 2, fake.hashAt(2)]);
        const hex = await h1(port, 'GET', `/v1/wallet/tx/${b!.txid}/hex`);
        assert.deepEqual(JSON.parse(hex.body.toString()), { txid: b!.txid, hex: b!.hex });
        const prev = await h1(port, 'POST', '/v1/wallet/prev-txs', JSON.stringify({ txids: [b!.txid] }), { 'content-type': 'application/json' });
        assert.deepEqual(JSON.parse(prev.body.toString()), { transactions: { [b!.txid]: b!.hex } });
      }
      // a, at height 1, is below the window: neither knows it (the node needs its block to find it) …
      assert.equal((await get(svc.server.port, a!.txid)).status, 404);
      // … and with -txindex the node tells (the index does not: no height, no block hash)
      fake.txindex = true;
      assert.deepEqual(await where(svc.server.port, a!.txid), [4, null, null]);
      fake.txindex = false;

      // c mined at the tip, then a reorg puts it back into the node's mempool: no stale height
      fake.mine([c!.bytes]); // 5
      await svc.follower!.syncOnce();
      assert.deepEqual(await where(svc.server.port, c!.txid), [1, 5, fake.hashAt(5)]);
      assert.equal(await store.recentTxHeight(b!.txid), undefined, 'block 2 left the window');
      fake.reorg(1, [[]]); // another block 5, without c
      await svc.follower!.syncOnce();
      assert.equal(svc.follower!.status.reorgs, 1);
      for (const port of [svc.server.port, reader.svc.server.port]) assert.deepEqual(await where(port, c!.txid), [0, null, null]);
      // mined again one block higher: its new height
      fake.mine([c!.bytes]); // 6
      await svc.follower!.syncOnce();
      for (const port of [svc.server.port, reader.svc.server.port]) assert.deepEqual(await where(port, c!.txid), [1, 6, fake.hashAt(6)]);
    } finally {
      for (const s of services.reverse()) await s.close();
      await fake.stop();
    }
  });
}
