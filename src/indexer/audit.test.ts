/**
 * Issue 22 audit: requirements that had no test, and the defects the audit found (each test here
 * failed before its fix).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { betterSqliteModule } from './sqlite-driver.js';
import { ENGINES, TestEngines, type TestEngine } from '../testing/index-stores.js';
import { scriptToAddress } from '../bitcoin/address.js';
import { parseTx } from '../bitcoin/tx.js';
import type { Handler, Req } from '../infra/http.js';
import { indexApiHandler } from './api.js';
import { startIndexService, type IndexService } from './service.js';
import { h1 } from '../testing/http.js';
import { MemoryChain } from '../testing/memory-chain.js';
import { librarySpellCheck } from './block-write.js';
import { DEFAULT_MAX_REORG_DEPTH, Follower } from './follower.js';
import { defaultIndexDb, indexSettings } from '../settings/settings.js';
import { indexOptions } from '../cli/options.js';
import type { IndexStore } from './store.js';
import { TEST_INDEX_SERVICE } from '../testing/index-fake-node.js';
import { CharmsError } from '../errors.js';
import { bitcoinVectors, burnTx, vectorChain } from '../testing/index-vectors.js';
import { sharedOrSkip } from '../testing/shared.js';
import { skipOrFail } from '../testing/require.js';
import { explorerApiHandler, withExplorerApi } from './explorer-api.js';

const engines = new TestEngines();
after(() => engines.close());

/** Runs SQL on a database outside the store (another program's tables, a damaged meta). */
async function rawSql(e: TestEngine, db: string, sql: string[]): Promise<void> {
  if (e.name === 'sqlite') {
    const Database = createRequire(import.meta.url)(betterSqliteModule()) as typeof import('better-sqlite3');
    const d = new Database(db);
    for (const s of sql) d.exec(s);
    d.close();
    return;
  }
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: db });
  await c.connect();
  try {
    for (const s of sql) await c.query(s);
  } finally {
    await c.end();
  }
}

for (const name of ENGINES) {
  test(`${name}: a database that is not a charms index is refused with a clear message, and left as it was`, async (t) => {
    const e = await engines.engine(name, t);
    if (!e) return;
    // another program's database (the explorer's own PostgreSQL has a `blocks` table too)
    const foreign = await e.newDb();
    await rawSql(e, foreign, ['CREATE TABLE blocks (height INTEGER PRIMARY KEY, hash TEXT)', 'CREATE TABLE transactions (txid TEXT PRIMARY KEY)']);
    await assert.rejects(e.open(foreign), /holds tables that are not a charms index \(blocks, transactions\).*another --db/);
    await assert.rejects(e.open(foreign, { mode: 'reader' }), /holds tables that are not a charms index/);
    await rawSql(e, foreign, ["INSERT INTO transactions VALUES ('kept')"]); // untouched: no meta table was added
    // a meta table whose version is not a number
    const damaged = await e.newDb();
    await (await e.open(damaged)).close();
    await rawSql(e, damaged, ["UPDATE meta SET value = 'two' WHERE key = 'schema_version'"]);
    await assert.rejects(e.open(damaged), /meta\.schema_version is "two", not a charms index's/);
    // an empty database is still made an index
    const fresh = await e.open(await e.newDb());
    await fresh.close();
  });
}

test('sqlite: a --db path that is no SQLite database (a text file, a directory) is refused naming the path', async () => {
  const e = engines.sqlite();
  const dir = mkdtempSync(join(tmpdir(), 'charms-audit-'));
  const text = join(dir, 'notes.txt');
  writeFileSync(text, 'hello, this is not a database at all, but it is long enough to be read as one '.repeat(20));
  await assert.rejects(e.open(text), (err: Error) => err.message.startsWith(`${text}: cannot be used as the index's SQLite file`) && /--db/.test(err.message));
  // the lock was released: a second attempt says the same, not "another indexer is writing"
  await assert.rejects(e.open(text), /cannot be used as the index's SQLite file/);
  await assert.rejects(e.open(dir), /cannot be used as the index's SQLite file/);
});

// ------------------------------------------------------------------ the API and the status

const U64_MAX = 2n ** 64n - 1n;
const SCRIPT = Uint8Array.from([0x51, 0x20, ...new Array(32).fill(7)]);
const APP = `t/${'31'.repeat(32)}/${'32'.repeat(32)}`;

const req = (path: string, method = 'GET', body = ''): Req => {
  const u = new URL(path, 'http://x');
  return { method, path: u.pathname, query: u.searchParams, headers: {}, body: async () => new TextEncoder().encode(body) };
};
const answer = async (h: Handler, path: string, method = 'GET', body = '') => {
  const r = await h(req(path, method, body));
  return { status: r.status, json: JSON.parse(String(r.body)) };
};

for (const name of ENGINES) {
  test(`${name}: our API's amounts are exact decimal strings at u64 and beyond (sums); ?network= must name the index's`, async (t) => {
    const e = await engines.engine(name, t);
    if (!e) return;
    const store = await e.open(await e.newDb());
    try {
      const tx = (n: number) => n.toString(16).padStart(64, '0');
      // one transaction pays the address two outputs of u64-max tokens, another one more
      const out = (txid: string, vout: number) => ({
        txid,
        txIndex: Number.parseInt(txid, 16),
        vout,
        app: APP,
        amount: U64_MAX,
        data: null,
        script: SCRIPT,
        sats: 1000n,
      });
      await store.applyBlock({
        height: 1,
        hash: tx(0x101),
        prevHash: tx(0x100),
        time: 1,
        spellTxs: [],
        outputs: [out(tx(1), 0), out(tx(1), 1), out(tx(2), 0)],
        inputs: [],
      });
      const h = indexApiHandler({ store, network: 'regtest', version: 'test' });
      const address = scriptToAddress(SCRIPT, 'regtest')!;
      const bal = await answer(h, `/v1/addresses/${address}/balances`);
      assert.equal(bal.status, 200);
      assert.equal(bal.json.balances[0].confirmed, (3n * U64_MAX).toString(), 'a balance beyond u64, exact');
      const utxos = await answer(h, `/v1/addresses/${address}/utxos`);
      assert.deepEqual(
        utxos.json.utxos.map((u: { charms: { amount: string }[] }) => u.charms[0]!.amount),
        [U64_MAX.toString(), U64_MAX.toString(), U64_MAX.toString()],
      );
      const hist = await answer(h, `/v1/addresses/${address}/history`);
      const received = hist.json.items.map((i: { txid: string; changes: { received: string }[] }) => [i.txid, i.changes[0]!.received]);
      assert.deepEqual(received.sort(), [
        [tx(1), (2n * U64_MAX).toString()],
        [tx(2), U64_MAX.toString()],
      ]);
      const app = await answer(h, `/v1/apps/${encodeURIComponent(APP)}`);
      assert.equal(app.json.supply, (3n * U64_MAX).toString());
      assert.equal(app.json.holders[0].amount, (3n * U64_MAX).toString());
      const batch = await answer(h, '/v1/addresses/balances', 'POST', JSON.stringify({ addresses: [address] }));
      assert.equal(batch.json.balances[0].balances[0].confirmed, (3n * U64_MAX).toString());

      // ?network= as the explorer-compatible routes take it: ours (any spelling) answers, another is a 400
      for (const path of [`/v1/addresses/${address}/balances`, '/v1/status', `/v1/apps/${APP}`]) {
        assert.equal((await answer(h, `${path}?network=regtest`)).status, 200, path);
        const other = await answer(h, `${path}?network=mainnet`);
        assert.equal(other.status, 400, path);
        assert.deepEqual(other.json, { error: 'network mainnet: this index serves regtest', code: 'INVALID_INPUT' });
      }
      assert.equal((await answer(h, '/v1/addresses/balances?network=testnet4', 'POST', JSON.stringify({ addresses: [address] }))).status, 400);
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
    const follower = (store: IndexStore) => new Follower(store, chain, { startHeight: 1, maxReorgDepth: 2, check: librarySpellCheck(false) });
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

for (const name of ENGINES) {
  test(`${name}: numbers past the schema's 32-bit columns are a 400 or a 404, never a 500`, async (t) => {
    const e = await engines.engine(name, t);
    if (!e) return;
    const store = await e.open(await e.newDb());
    try {
      const h = indexApiHandler({ store, network: 'regtest', version: 'test' });
      const address = scriptToAddress(SCRIPT, 'regtest')!;
      const txid = 'ab'.repeat(32);
      const cases: [string, number][] = [
        [`/v1/addresses/${address}/history?cursor=4294967296-1`, 400],
        [`/v1/addresses/${address}/history?cursor=1-9999999999`, 400],
        [`/v1/addresses/${address}/history?cursor=2147483647-2147483647`, 200],
        [`/v1/outputs/${txid}:2147483647`, 404],
        [`/v1/outputs/${txid}:2147483648`, 404],
        [`/v1/outputs/${txid}:4294967295`, 404],
        [`/v1/outputs/${txid}:4294967296`, 400],
        [`/v1/outputs/${txid}:9999999999`, 400],
      ];
      for (const [path, status] of cases) assert.equal((await answer(h, path)).status, status, path);
    } finally {
      await store.close();
    }
  });
}

test('INDEX_DB_URL and BITCOIN_ZMQ_URL are read, flags win, the default database is per network in the data directory; option defaults are the library’s', () => {
  const env = { INDEX_DB_URL: 'postgres://idx@db/charms', BITCOIN_ZMQ_URL: 'tcp://127.0.0.1:28332', XDG_DATA_HOME: '/data', HOME: '/home/u' };
  assert.deepEqual([indexSettings(env).db, indexSettings(env).zmqUrl], ['postgres://idx@db/charms', 'tcp://127.0.0.1:28332']);
  assert.equal(indexSettings(env, { db: '/tmp/x.sqlite' }).db, '/tmp/x.sqlite');
  assert.equal(defaultIndexDb(indexSettings({ XDG_DATA_HOME: '/data' }), 'testnet4'), '/data/charms-ts/index-testnet4.sqlite');
  assert.equal(defaultIndexDb(indexSettings({ HOME: '/home/u' }), 'mainnet'), '/home/u/.local/share/charms-ts/index-mainnet.sqlite');
  assert.throws(() => defaultIndexDb(indexSettings({}), 'mainnet'), /give --db or INDEX_DB_URL/);
  const opt = (name: string) => indexOptions.find((o) => o.name === name) as { default?: string } | undefined;
  assert.equal(opt('port')?.default, '17786');
  assert.equal(opt('max-reorg-depth')?.default, String(DEFAULT_MAX_REORG_DEPTH));
  assert.equal(DEFAULT_MAX_REORG_DEPTH, 100);
  assert.equal(opt('poll-interval')?.default, '5');
});

/** A node whose blocks from `from` on wait until `release()` (a sync caught half-way). */
class GatedChain extends MemoryChain {
  private blockCalls = 0;
  private open!: () => void;
  private readonly gate = new Promise<void>((r) => (this.open = r));
  reached!: () => void;
  readonly reachedGate = new Promise<void>((r) => (this.reached = r));
  constructor(private readonly from: number) {
    super();
  }
  release(): void {
    this.open();
  }
  override async block(hash: string): ReturnType<MemoryChain['block']> {
    if (++this.blockCalls >= this.from) {
      this.reached();
      await this.gate;
    }
    return super.block(hash);
  }
}

test('the API answers over HTTP while the index syncs (a block fetch pending), with the lag so far', async () => {
  const e = engines.sqlite();
  const chain = new GatedChain(4);
  for (let i = 0; i < 10; i++) chain.mine();
  const svc = await startIndexService({
    store: await e.open(await e.newDb()),
    source: chain,
    ...TEST_INDEX_SERVICE,
    fetchAhead: 1,
    commitBlocks: 1,
  });
  try {
    const sync = svc.follower!.syncOnce();
    await chain.reachedGate;
    const st = await h1(svc.server.port, 'GET', '/v1/status');
    const s = JSON.parse(st.body.toString());
    assert.deepEqual([st.status, s.node.height, s.index.height, s.lag_blocks], [503, 10, 3, 7]);
    const address = scriptToAddress(SCRIPT, 'regtest')!;
    assert.equal((await h1(svc.server.port, 'GET', `/v1/addresses/${address}/balances`)).status, 200);
    chain.release();
    await sync;
    assert.equal((await h1(svc.server.port, 'GET', '/v1/status')).status, 200);
  } finally {
    chain.release();
    await svc.close();
  }
});

// ------------------------------------------------------------------ the mempool overlay and blocks

test('a mined transaction leaves the pending figures with its block, even while the mempool cannot be read', async (t) => {
  if (!sharedOrSkip(t)) return;
  const e = engines.sqlite();
  const v = bitcoinVectors();
  const chain = new MemoryChain();
  chain.mine([]);
  const svc = await startIndexService({ store: await e.open(await e.newDb()), source: chain, ...TEST_INDEX_SERVICE });
  try {
    const f = svc.follower!;
    await f.syncOnce();
    const spellTx = v.get('7269cf1b')!;
    chain.mempoolAdd(spellTx.raw);
    await f.syncOnce();
    const pending = svc.mempool!.get(spellTx.txid)!.outputs[0]!;
    const address = scriptToAddress(pending.script, 'regtest')!;
    const figures = async () => {
      const ours = JSON.parse((await h1(svc.server.port, 'GET', `/v1/addresses/${address}/balances`)).body.toString()).balances[0];
      const theirs = JSON.parse((await h1(svc.server.port, 'GET', `/v1/wallet/balance/${address}`)).body.toString()).charms.balances[0];
      return [ours.confirmed, ours.unconfirmed_in, theirs.confirmed, theirs.unconfirmed, theirs.total];
    };
    const amount = pending.amount ?? 1n; // an NFT counts one
    assert.deepEqual(await figures(), ['0', amount.toString(), 0, Number(amount), Number(amount)], 'a verified pending receive');
    // mined; the node's mempool cannot be read now (a timeout): the block's transactions left it all the same
    chain.mine([spellTx.raw]);
    chain.mempoolTxids = async () => {
      throw new CharmsError('UPSTREAM_FAILED', 'getrawmempool timed out');
    };
    await f.syncOnce();
    assert.equal(f.status.error?.message, 'getrawmempool timed out');
    assert.deepEqual(await figures(), [amount.toString(), '0', Number(amount), 0, Number(amount)], 'confirmed once, pending no more');
    const out = JSON.parse((await h1(svc.server.port, 'GET', `/v1/outputs/${spellTx.txid}:${pending.vout}`)).body.toString());
    assert.equal(out.confirmed, true);
    // a reorg returns it to the node's mempool: pending again
    delete (chain as { mempoolTxids?: unknown }).mempoolTxids;
    chain.reorg(1, [[], []], true);
    await f.syncOnce();
    assert.equal(f.status.error, undefined);
    assert.deepEqual(await figures(), ['0', amount.toString(), 0, Number(amount), Number(amount)], 'returned by a reorg: pending');
    // a pending child spends the pending output
    const child = chain.mempoolAdd(burnTx(spellTx.txid, pending.vout, 11));
    await f.syncOnce();
    assert.ok(svc.mempool!.get(child));
    // a block confirms a transaction spending the same input (a conflict): the receive and its child are gone at once
    const conflict = v.get('neg-4')!;
    assert.deepEqual(parseTx(conflict.raw).inputs[0], parseTx(spellTx.raw).inputs[0]);
    chain.mine([conflict.raw]);
    chain.mempoolTxids = async () => {
      throw new CharmsError('UPSTREAM_FAILED', 'getrawmempool timed out');
    };
    await f.syncOnce();
    assert.equal(svc.mempool!.get(spellTx.txid), undefined);
    assert.equal(svc.mempool!.get(child), undefined, 'what spends a conflicted transaction goes too');
    const after = JSON.parse((await h1(svc.server.port, 'GET', `/v1/addresses/${address}/balances`)).body.toString());
    assert.deepEqual(after.balances, [], 'no pending receive of a conflicted transaction');
  } finally {
    await svc.close();
  }
});

// ------------------------------------------------------------------ determinism

/** Every state-only GET answer (ours and the explorer-compatible ones) about the chain's vector transactions. */
async function stateAnswers(svc: IndexService, paths: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) {
    const r = await h1(svc.server.port, 'GET', p);
    out.push(`${p} ${r.status} ${r.body.toString()}`);
  }
  return out;
}

test('answers are the same bytes from an index that followed reorgs, fetching ahead, and fresh ones on both engines', async (t) => {
  if (!sharedOrSkip(t)) return;
  const v = bitcoinVectors();
  const chain = vectorChain(v);
  const nft = v.get('1acee7fb')!;
  const token = v.get('28355906')!;
  // followed step by step: a burn, a reorg that orphans it and moves a spell transaction to a new block, more blocks
  const sq = engines.sqlite();
  const inc = await startIndexService({ store: await sq.open(await sq.newDb()), source: chain, ...TEST_INDEX_SERVICE, fetchAhead: 4, commitBlocks: 2 });
  const fresh: IndexService[] = [];
  try {
    await inc.follower!.syncOnce();
    chain.mine([burnTx(nft.txid, 0, 1), burnTx(token.txid, 1, 2)]);
    chain.mine([]);
    await inc.follower!.syncOnce();
    chain.reorg(2, [[burnTx(token.txid, 3, 3)], [], [burnTx(nft.txid, 0, 4)]]);
    await inc.follower!.syncOnce();
    assert.equal(inc.follower!.status.error, undefined);
    assert.equal(inc.follower!.status.reorgs, 1);
    for (const name of ENGINES) {
      const e = await engines.engine(name, t);
      if (!e) continue;
      const svc = await startIndexService({ store: await e.open(await e.newDb()), source: chain, ...TEST_INDEX_SERVICE, fetchAhead: 1, commitBlocks: 1 });
      fresh.push(svc);
      await svc.follower!.syncOnce();
    }
    const paths = new Set<string>();
    for (const tx of v.values()) {
      paths.add(`/v1/txs/${tx.txid}`);
      paths.add(`/v1/transactions/${tx.txid}`);
      parseTx(tx.raw).outputs.forEach((o, vout) => {
        paths.add(`/v1/outputs/${tx.txid}:${vout}`);
        const a = scriptToAddress(o.script, 'regtest');
        if (!a) return;
        for (const p of ['addresses/A/balances', 'addresses/A/utxos', 'addresses/A/history', 'wallet/charms/A', 'wallet/balance/A', 'wallet/transactions/A'])
          paths.add(`/v1/${p.replace('A', a)}`);
      });
    }
    for (const tx of v.values()) {
      const out = JSON.parse((await h1(inc.server.port, 'GET', `/v1/txs/${tx.txid}`)).body.toString());
      for (const o of out.outputs ?? []) for (const c of o.charms) paths.add(`/v1/apps/${encodeURIComponent(c.app)}`);
    }
    const want = await stateAnswers(inc, [...paths]);
    assert.ok(want.filter((a) => / 200 /.test(a)).length > 100, 'the answers compared hold charms');
    for (const svc of fresh) assert.deepEqual(await stateAnswers(svc, [...paths]), want);
  } finally {
    await inc.close();
    for (const svc of fresh) await svc.close();
  }
});

test('the apps of one output come in the same order from SQLite and from a PostgreSQL whose collation is not bytewise', async (t) => {
  const e = await engines.engine('postgres', t);
  if (!e) return;
  // a database as a Debian cluster initialised under LANG=en_US.UTF-8 has: case and punctuation weigh less
  const base = await e.newDb();
  const name = `icu_${process.pid}`;
  try {
    await rawSql(e, base, [`CREATE DATABASE ${name} LOCALE_PROVIDER icu ICU_LOCALE 'en-US' TEMPLATE template0`]);
  } catch (err) {
    skipOrFail(t, `this PostgreSQL cannot create an ICU en-US database (${(err as Error).message})`);
    return;
  }
  const icuDb = base.replace(/\/[^/]+$/, `/${name}`);
  const tx = (n: number) => n.toString(16).padStart(64, '0');
  // one output holding apps whose tags sort differently by bytes (B T a t) and by en-US rules (a B t T)
  const apps = ['a', 'B', 't', 'T'].map((tag) => `${tag}/${'31'.repeat(32)}/${'32'.repeat(32)}`);
  const block = {
    height: 1,
    hash: tx(0x101),
    prevHash: tx(0x100),
    time: 1,
    spellTxs: [],
    outputs: apps.map((app) => ({ txid: tx(1), txIndex: 1, vout: 0, app, amount: 5n, data: null, script: SCRIPT, sats: 1000n })),
    inputs: [],
  };
  const address = scriptToAddress(SCRIPT, 'regtest')!;
  const paths = [`/v1/outputs/${tx(1)}:0`, `/v1/addresses/${address}/utxos`, `/v1/addresses/${address}/history`, `/v1/wallet/charms/${address}`];
  const answers = async (store: IndexStore): Promise<string[]> => {
    const h = withExplorerApi(explorerApiHandler({ store, network: 'regtest' }), indexApiHandler({ store, network: 'regtest', version: 'test' }));
    const out: string[] = [];
    for (const p of paths) out.push(String((await h(req(p))).body));
    return out;
  };
  const sq = engines.sqlite();
  const a = await sq.open(await sq.newDb());
  const b = await e.open(icuDb);
  try {
    await a.applyBlock(block);
    await b.applyBlock(block);
    const want = await answers(a);
    assert.deepEqual(
      JSON.parse(want[0]!).charms.map((c: { app: string }) => c.app[0]),
      ['B', 'T', 'a', 't'],
      'bytewise',
    );
    assert.deepEqual(await answers(b), want);
  } finally {
    await a.close();
    await b.close();
  }
});

test('every batch endpoint: 50 addresses answer, 51 or an invalid one are a 400 naming why; a body past the byte limit is a 413', async (t) => {
  if (!sharedOrSkip(t)) return;
  const e = engines.sqlite();
  const chain = vectorChain();
  const svc = await startIndexService({ store: await e.open(await e.newDb()), source: chain, ...TEST_INDEX_SERVICE });
  try {
    await svc.follower!.syncOnce();
    const addr = scriptToAddress(SCRIPT, 'regtest')!;
    const post = async (path: string, body: unknown) => {
      const r = await h1(svc.server.port, 'POST', path, JSON.stringify(body));
      return { status: r.status, json: JSON.parse(r.body.toString()) };
    };
    for (const path of ['/v1/addresses/balances', '/v1/wallet/balance/batch', '/v1/wallet/charms/batch/indexed', '/v1/wallet/transactions/batch']) {
      assert.equal((await post(path, { addresses: new Array(50).fill(addr) })).status, 200, path);
      const over = await post(path, { addresses: new Array(51).fill(addr) });
      assert.deepEqual([over.status, over.json.code, over.json.error], [400, 'INVALID_INPUT', 'at most 50 addresses per request, got 51'], path);
      const invalid = await post(path, { addresses: [addr, 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq'] });
      assert.deepEqual([invalid.status, invalid.json.code], [400, 'INVALID_INPUT'], path);
      assert.match(invalid.json.error, /not a valid regtest address/);
      assert.equal((await post(path, { addresses: 'x' })).status, 400, path);
      // the transport refuses a body past its limit before anything is read into memory
      const huge = await post(path, { addresses: new Array(10_000).fill(addr) });
      assert.deepEqual([huge.status, huge.json.code], [413, 'PAYLOAD_TOO_LARGE'], path);
    }
  } finally {
    await svc.close();
  }
});
