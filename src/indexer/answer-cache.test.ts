import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { scriptToAddress } from '../bitcoin/address.js';
import { parseTx } from '../bitcoin/tx.js';
import type { Handler, Req } from '../infra/http.js';
import { ENGINES, sqlOn, TestEngines, type TestEngine } from '../testing/index-stores.js';
import { h1 } from '../testing/http.js';
import { bitcoinVectors, burnTx, vectorChain } from '../testing/index-vectors.js';
import type { MemoryChain } from '../testing/memory-chain.js';
import { sharedOrSkip } from '../testing/shared.js';
import { spendTx } from '../testing/vector-chain.js';
import { cachedAnswers } from './answer-cache.js';
import { ok } from './api.js';
import { startIndexService, type IndexService } from './service.js';
import type { IndexReader } from './store.js';
import { TEST_INDEX_SERVICE } from '../testing/index-fake-node.js';
import { BITCOIN_NETWORKS } from '../model/network.js';

const req = (path: string, method = 'GET'): Req => ({
  method,
  path,
  query: new URLSearchParams(),
  headers: {},
  body: async () => new Uint8Array(),
});
const text = (b: Uint8Array | string | undefined) => Buffer.from(b ?? '').toString();

test('answer cache: one computation per state and path; errors, POSTs and other paths pass through', async () => {
  let calls = 0;
  let state: string | undefined = 'a';
  const next: Handler = async (r) => {
    calls++;
    if (r.path === '/v1/missing') return { status: 404, headers: { 'content-type': 'application/json' }, body: '{"error":"no","code":"NOT_FOUND"}' };
    return ok({ path: r.path, call: calls });
  };
  const h = cachedAnswers(next, { state: () => state, cacheable: (p) => p !== '/v1/other', maxBytes: 1 << 20 });
  const first = await h(req('/v1/x'));
  assert.equal(text((await h(req('/v1/x'))).body), text(first.body));
  assert.equal(calls, 1, 'the second GET is served from memory');
  assert.deepEqual((await h(req('/v1/x'))).headers, first.headers, 'the headers too');
  // concurrent identical requests share one computation
  const both = await Promise.all([h(req('/v1/y')), h(req('/v1/y'))]);
  assert.equal(text(both[0].body), text(both[1].body));
  assert.equal(calls, 2);
  // a new state: computed again
  state = 'b';
  assert.notEqual(text((await h(req('/v1/x'))).body), text(first.body));
  assert.equal(calls, 3);
  // not kept: errors, POSTs, paths that are not state-only, an unknown state
  for (const r of [req('/v1/missing'), req('/v1/missing'), req('/v1/x', 'POST'), req('/v1/other'), req('/v1/other')]) await h(r);
  assert.equal(calls, 8);
  assert.equal((await h(req('/v1/missing'))).status, 404);
  state = undefined;
  await h(req('/v1/x'));
  await h(req('/v1/x'));
  assert.equal(calls, 11);
  // what was kept before the state could not be told is gone when the same state is told again
  // (a database rebuilt meanwhile may count its versions up to the same one)
  state = 'b';
  await h(req('/v1/x'));
  assert.equal(calls, 12);
});

test('answer cache: answers given at once are kept and served at once; an awaited one in progress is shared', async () => {
  let calls = 0;
  let state = 'a';
  let slow: ((r: ReturnType<typeof ok>) => void) | undefined;
  const next: Handler = (r) => {
    calls++;
    if (r.path === '/v1/bad')
      return { status: 400, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' }, body: '{"error":"x","code":"INVALID_INPUT"}' };
    if (r.path === '/v1/slow') return new Promise((resolve) => (slow = resolve));
    return ok({ path: r.path, state, call: calls });
  };
  const h = cachedAnswers(next, { state: () => state, cacheable: () => true, maxBytes: 1 << 20 });
  const first = h(req('/v1/x'));
  assert.ok(!(first instanceof Promise), 'computed at once: answered at once');
  const again = h(req('/v1/x'));
  assert.ok(!(again instanceof Promise), 'kept: answered at once');
  assert.equal(calls, 1);
  assert.equal(text(again.body), '{"path":"/v1/x","state":"a","call":1}');
  assert.deepEqual(again.headers, first.headers);
  assert.equal(text(first.body), text(again.body), 'the computed answer is the kept bytes');
  // a 400 given at once is answered as is, and not kept
  assert.equal((h(req('/v1/bad')) as Awaited<ReturnType<Handler>>).status, 400);
  assert.equal((h(req('/v1/bad')) as Awaited<ReturnType<Handler>>).status, 400);
  assert.equal(calls, 3);
  // a new state: computed again
  state = 'b';
  assert.equal(text((h(req('/v1/x')) as Awaited<ReturnType<Handler>>).body), '{"path":"/v1/x","state":"b","call":4}');
  // concurrent asks of an awaited answer share its one computation, and then it is kept
  const p1 = h(req('/v1/slow'));
  const p2 = h(req('/v1/slow'));
  assert.equal(calls, 5);
  slow!(ok({ slow: true }));
  assert.equal(text((await p1).body), '{"slow":true}');
  assert.equal(text((await p2).body), '{"slow":true}');
  const kept = h(req('/v1/slow'));
  assert.ok(!(kept instanceof Promise));
  assert.equal(text(kept.body), '{"slow":true}');
  assert.equal(calls, 5);
});

test('answer cache: bounded in bytes, least recently used first out', async () => {
  let calls = 0;
  const next: Handler = async (r) => (calls++, ok({ pad: 'x'.repeat(400), path: r.path }));
  const h = cachedAnswers(next, { state: () => 's', cacheable: () => true, maxBytes: 1000 });
  await h(req('/a'));
  await h(req('/b'));
  await h(req('/a')); // hit; /b is now the least recently used
  assert.equal(calls, 2);
  await h(req('/c')); // evicts /b
  await h(req('/a'));
  assert.equal(calls, 3);
  await h(req('/b'));
  assert.equal(calls, 4);
});

const engines = new TestEngines();
after(() => engines.close());

async function service(
  e: TestEngine,
  chain: MemoryChain,
  db: string,
  o: { answerCacheBytes?: number; apiOnly?: boolean } = {},
): Promise<IndexService & { store: IndexReader }> {
  const store = await e.open(db, o.apiOnly ? { mode: 'reader' } : {});
  const svc = await startIndexService({
    store,
    source: chain,
    ...TEST_INDEX_SERVICE,
    apiOnly: o.apiOnly ?? false,
    answerCacheBytes: o.answerCacheBytes,
  });
  await svc.follower?.syncOnce();
  await svc.follower?.syncOnce(); // the mempool refresh after a settled tip
  return { ...svc, store };
}

for (const name of ENGINES) {
  test(`${name}: cached answers change right after a block, a mempool change and a reorg`, async (t) => {
    if (!sharedOrSkip(t)) return;
    const e = await engines.engine(name, t);
    if (!e) return;
    const v = bitcoinVectors();
    const chain = vectorChain(v);
    const tokenTx = v.get('2efcde0d')!;
    const addr = scriptToAddress(parseTx(tokenTx.raw).outputs[0]!.script, BITCOIN_NETWORKS.regtest)!;
    const paths = [
      `/v1/addresses/${addr}/balances`,
      `/v1/addresses/${addr}/utxos?mempool=1`,
      `/v1/addresses/${addr}/history`,
      `/v1/outputs/${tokenTx.txid}:0`,
      `/v1/wallet/charms/${addr}`,
      `/v1/wallet/balance/${addr}`,
      `/v1/wallet/transactions/${addr}`,
    ];
    const db = await e.newDb();
    const cached = await service(e, chain, db);
    const plain = await service(e, chain, await e.newDb(), { answerCacheBytes: 0 });
    // an --api-only reader of the cached index's database: the writer's commits come from another connection
    const reader = await service(e, chain, db, { apiOnly: true });
    /** The state the caches key on: told (so answers are kept), and moved by the writer's commits. */
    const versions = async () => {
      const both = [await cached.store.dataVersion(), await reader.store.dataVersion()];
      for (const v of both) assert.equal(typeof v, 'number', 'the index state is told: answers are kept');
      return both;
    };
    const sync = async () => {
      for (const s of [cached, plain]) {
        await s.follower!.syncOnce();
        await s.follower!.syncOnce();
      }
    };
    /** Every path twice from the cached service (the second a hit), equal to the uncached service's answer. */
    const answers = async (confirmedOnly = false): Promise<string[]> => {
      const out: string[] = [];
      for (const p of paths) {
        const want = await h1(plain.server.port, 'GET', p);
        assert.equal(want.status, 200, p);
        for (let k = 0; k < 2; k++) assert.equal((await h1(cached.server.port, 'GET', p)).body.toString(), want.body.toString(), p);
        if (confirmedOnly) assert.equal((await h1(reader.server.port, 'GET', p)).body.toString(), want.body.toString(), `api-only ${p}`);
        out.push(want.body.toString());
      }
      // the wallet's batch is made of kept GET /wallet/balance answers: the uncached service's bytes too
      const batch = JSON.stringify({ addresses: [addr] });
      const want = await h1(plain.server.port, 'POST', '/v1/wallet/balance/batch', batch);
      assert.equal(want.status, 200);
      for (let k = 0; k < 2; k++)
        assert.equal((await h1(cached.server.port, 'POST', '/v1/wallet/balance/batch', batch)).body.toString(), want.body.toString(), 'batch');
      if (confirmedOnly)
        assert.equal((await h1(reader.server.port, 'POST', '/v1/wallet/balance/batch', batch)).body.toString(), want.body.toString(), 'api-only batch');
      out.push(want.body.toString());
      return out;
    };
    try {
      const start = await answers(true);
      const v0 = await versions();
      // a block spending the token output
      const burn = burnTx(tokenTx.txid, 0, 9);
      chain.mine([burn]);
      await sync();
      const v1 = await versions();
      assert.ok(v1[0] !== v0[0] && v1[1] !== v0[1], 'the block moved both states');
      const spent = await answers(true);
      assert.notEqual(spent[0], start[0], 'the balances moved with the block');
      assert.notEqual(spent[7], start[7], 'the batch moved with the block');
      // a reorg replaces that block by an empty one: unspent again
      chain.reorg(1, [[]]);
      await sync();
      const v2 = await versions();
      assert.ok(v2[0] !== v1[0] && v2[1] !== v1[1], 'the reorg moved both states');
      const back = await answers(true);
      // the reorg undid the spend (the wallet's transaction list differs: one more confirmation)
      assert.deepEqual(back.slice(0, 6), start.slice(0, 6), 'the reorg undid the spend');
      assert.notEqual(back[6], spent[6]);
      // a mempool transaction no answer reads (it spends no charm output) keeps the kept answers...
      chain.mempoolAdd(spendTx([{ txid: 'ab'.repeat(32), vout: 0 }], { tag: 7 }).bytes);
      await sync();
      assert.deepEqual(await answers(), back, 'a plain mempool transaction changes no answer');
      // ...the same spend in the mempool moves them
      chain.mempoolAdd(burn);
      await sync();
      const pending = await answers();
      assert.notEqual(pending[0], start[0], 'the balances moved with the mempool');
      assert.match(pending[0]!, /"unconfirmed_out":"[1-9]/);
      assert.notEqual(pending[7], back[7], 'the batch moved with the mempool');
      assert.match(pending[7]!, /"mempoolSpent":[1-9]/);
    } finally {
      await reader.close();
      await cached.close();
      await plain.close();
    }
  });
}

test('postgres: an --api-only reader of a database rebuilt under its URL answers from the new one', async (t) => {
  if (!sharedOrSkip(t)) return;
  const e = await engines.engine('postgres', t);
  if (!e) return;
  const v = bitcoinVectors();
  const tokenTx = v.get('2efcde0d')!;
  const addr = scriptToAddress(parseTx(tokenTx.raw).outputs[0]!.script, BITCOIN_NETWORKS.regtest)!;
  const paths = [`/v1/addresses/${addr}/balances`, `/v1/wallet/charms/${addr}`];
  const db = await e.newDb();
  const first = await service(e, vectorChain(v), db);
  const reader = await service(e, vectorChain(v), db, { apiOnly: true });
  let second: IndexService | undefined;
  try {
    const old: string[] = [];
    for (const p of paths) old.push((await h1(reader.server.port, 'GET', p)).body.toString());
    const version = await reader.store.dataVersion();
    assert.equal(typeof version, 'number', 'the reader keeps answers');
    await first.close();
    // the operator rebuilds the index in the same database: new tables, versions counted from 0 again
    await sqlOn(e, db, 'DROP SCHEMA public CASCADE; CREATE SCHEMA public;');
    const chain = vectorChain(v);
    chain.mine([burnTx(tokenTx.txid, 0, 9)]);
    second = await service(e, chain, db);
    const want: string[] = [];
    for (const p of paths) want.push((await h1(second.server.port, 'GET', p)).body.toString());
    assert.notEqual(want[0], old[0], 'the new index holds other balances');
    // the rebuilt database comes to the version the reader kept its answers for (no request between)
    await sqlOn(e, db, "UPDATE meta SET value = $1 WHERE key = 'data_version'", [String(version)]);
    for (const [i, p] of paths.entries()) assert.equal((await h1(reader.server.port, 'GET', p)).body.toString(), want[i], p);
  } finally {
    await second?.close();
    await reader.close();
    await first.close().catch(() => {});
  }
});
