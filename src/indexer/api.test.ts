import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { scriptToAddress } from '../bitcoin/address.js';
import { parseTx } from '../bitcoin/tx.js';
import { ENGINES, TestEngines, type TestEngine } from '../testing/index-stores.js';
import { sharedOrSkip } from '../testing/shared.js';
import { h1, h2, handlerAnswer as answer } from '../testing/http.js';
import { txidOf } from '../testing/memory-chain.js';
import { bitcoinVectors, burnTx, vectorChain } from '../testing/index-vectors.js';
import { startIndexService, type IndexService } from './service.js';
import { indexApiHandler, noRoute } from './api.js';
import { explorerApiHandler } from './explorer-api.js';
import { EXPLORER_ROUTES } from './explorer-routes.js';
import { tableHandler } from './routes.js';
import { silentLogger } from '../infra/log.js';
import { SqlStore, type BlockWrite, type IndexWriter } from './store.js';
import type { Driver, ReadTx } from './driver.js';
import type { BlockSource } from '../sources/block-source.js';
import { prepareSchema } from './schema.js';
import { betterSqliteModule, SqliteDriver } from './sqlite-driver.js';
import { waitFor } from '../testing/wait.js';
import { PgDriver } from './pg-driver.js';
import type { Req, Res } from '../infra/http.js';
import { TEST_INDEX_SERVICE } from '../testing/index-fake-node.js';
import { MemoryChain } from '../testing/memory-chain.js';
import { BITCOIN_NETWORKS } from '../model/network.js';

const engines = new TestEngines();
after(() => engines.close());

const json = (b: Buffer) => JSON.parse(b.toString('utf8'));

async function service(e: TestEngine, chain: ReturnType<typeof vectorChain>, maxReorgDepth = 100): Promise<IndexService> {
  const store = await e.open(await e.newDb());
  const svc = await startIndexService({
    store,
    source: chain,
    ...TEST_INDEX_SERVICE,
    maxReorgDepth,
  });
  await svc.follower!.syncOnce();
  await svc.follower!.syncOnce(); // the mempool refresh after a settled tip
  return svc;
}

for (const name of ENGINES) {
  test(`${name}: the /v1 API answers balances, utxos, history, outputs, txs, apps and status`, async (t) => {
    if (!sharedOrSkip(t)) return;
    const e = await engines.engine(name, t);
    if (!e) return;
    const v = bitcoinVectors();
    const chain = vectorChain(v, ['9c048eca']);
    const nftTx = v.get('1acee7fb')!;
    const burn = burnTx(nftTx.txid, 0, 3);
    chain.mine([burn]);
    const pendingTx = v.get('9c048eca')!; // not mined: pending
    const tokenTx = v.get('2efcde0d')!;
    const svc = await service(e, chain);
    const port = svc.server.port;
    const get = async (path: string) => h1(port, 'GET', path);
    try {
      const st = await get('/v1/status');
      assert.equal(st.status, 200);
      const s = json(st.body);
      assert.equal(s.lag_blocks, 0);
      assert.equal(s.node.height, chain.height);
      assert.equal(s.index.height, chain.height);
      assert.equal(s.db.engine, name);
      // the same figures for Prometheus
      const metrics = (await get('/metrics')).body.toString('utf8');
      assert.match(metrics, new RegExp(`^charms_index_height ${chain.height}$`, 'm'));
      assert.match(metrics, new RegExp(`^charms_index_node_height ${chain.height}$`, 'm'));
      assert.match(metrics, /^charms_index_lag_blocks 0$/m);
      assert.match(metrics, /^charms_index_unrecoverable 0$/m);

      // the token output of 2efcde0d (v8): output 0 carries two apps
      const script = parseTx(tokenTx.raw).outputs[0]!.script;
      const addr = scriptToAddress(script, BITCOIN_NETWORKS.regtest)!;
      assert.equal(svc.mempool!.spendsConfirmedCharms(), false, 'an empty mempool: balances read no outpoints');
      const balBody = (await get(`/v1/addresses/${addr}/balances`)).body.toString('utf8');
      assert.equal(JSON.stringify(JSON.parse(balBody)), balBody, 'the answer is compact JSON, keys in order');
      const bal = JSON.parse(balBody);
      assert.equal(bal.address, addr);
      assert.ok(bal.balances.length >= 1);
      for (const b of bal.balances) {
        assert.equal(typeof b.confirmed, 'string');
        assert.equal(b.unconfirmed_in, '0');
      }
      const utxos = json((await get(`/v1/addresses/${addr}/utxos`)).body);
      assert.equal(utxos.utxos[0].txid, tokenTx.txid);
      assert.equal(utxos.utxos[0].charms.length, bal.balances.length);
      const hist = json((await get(`/v1/addresses/${addr}/history?limit=1`)).body);
      assert.equal(hist.items[0].txid, tokenTx.txid);
      assert.equal((await get(`/v1/addresses/${addr}/history?cursor=bogus`)).status, 400);

      // batch, and the 400s
      const batch = await h1(port, 'POST', '/v1/addresses/balances', JSON.stringify({ addresses: [addr, addr] }));
      assert.equal(batch.status, 200);
      assert.deepEqual(json(batch.body).balances[1], bal);
      assert.equal((await h1(port, 'POST', '/v1/addresses/balances', JSON.stringify({ addresses: new Array(51).fill(addr) }))).status, 400);
      assert.equal((await h1(port, 'POST', '/v1/addresses/balances', '{"addresses": 5}')).status, 400);
      assert.equal((await get('/v1/addresses/notanaddress/balances')).status, 400);
      assert.equal((await get('/v1/addresses/bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq/balances')).status, 400, 'a mainnet address in a regtest index');

      // outputs: the burned NFT names its spender; an output that never held charms is 404
      const out = json((await get(`/v1/outputs/${nftTx.txid}:0`)).body);
      assert.deepEqual(out.spent, { txid: txidOf(burn), vin: 0, height: 5 });
      assert.equal((await get(`/v1/outputs/${nftTx.txid}:7`)).status, 404);
      assert.equal((await get(`/v1/outputs/xyz:0`)).status, 400);

      // txs: a spell tx, a burn, an unknown tx
      const tx = json((await get(`/v1/txs/${tokenTx.txid}`)).body);
      assert.equal(tx.verified, true);
      assert.equal(tx.spell.version, 8);
      const burned = json((await get(`/v1/txs/${txidOf(burn)}`)).body);
      assert.equal(burned.burned, true);
      assert.equal(burned.consumed[0].txid, nftTx.txid);
      assert.equal((await get(`/v1/txs/${'00'.repeat(32)}`)).status, 404);
      assert.deepEqual(tx.beamed, []);
      // a beaming spell (8d70833a, v9, beams output 0): recorded as beamed with its destination, held by no one
      const beamTx = v.get('8d70833a')!;
      const bt = json((await get(`/v1/txs/${beamTx.txid}`)).body);
      assert.deepEqual(
        bt.beamed.map((b: { vout: number }) => b.vout),
        [0],
      );
      assert.match(bt.beamed[0].beamed_to, /^[0-9a-f]{64}$/);
      assert.ok(bt.beamed[0].charms.length > 0);
      assert.ok(bt.outputs.every((o: { vout: number }) => o.vout !== 0));
      const bo = json((await get(`/v1/outputs/${beamTx.txid}:0`)).body);
      assert.deepEqual(bo, bt.beamed[0]);

      // apps: raw and %2F-escaped slashes, supply
      const app = utxos.utxos[0].charms.find((c: { amount?: string }) => c.amount !== undefined)?.app ?? utxos.utxos[0].charms[0].app;
      const raw = await get(`/v1/apps/${app}`);
      const esc = await get(`/v1/apps/${encodeURIComponent(app)}`);
      assert.equal(raw.status, 200);
      assert.deepEqual(raw.body, esc.body);
      assert.equal(typeof json(raw.body).supply, 'string');
      assert.equal((await h2(port, 'GET', `/v1/apps/${encodeURIComponent(app)}`)).body.toString(), raw.body.toString(), 'h2c too');
      assert.equal((await get(`/v1/apps/t/${'00'.repeat(32)}/${'00'.repeat(32)}`)).status, 404);
      assert.equal((await get(`/v1/apps/t/zz`)).status, 400);

      // the mempool: a pending receive shows, confirmed does not move
      chain.mempoolAdd(pendingTx.raw);
      await svc.follower!.syncOnce();
      const pScript = parseTx(pendingTx.raw).outputs[0]!.script;
      const pAddr = scriptToAddress(pScript, BITCOIN_NETWORKS.regtest)!;
      const pBal = json((await get(`/v1/addresses/${pAddr}/balances`)).body);
      assert.ok(pBal.balances.length > 0);
      for (const b of pBal.balances) assert.equal(b.confirmed, '0');
      assert.ok(pBal.balances.some((b: { unconfirmed_in: string }) => b.unconfirmed_in !== '0'));
      const pUtxos = json((await get(`/v1/addresses/${pAddr}/utxos?mempool=1`)).body);
      assert.equal(pUtxos.utxos[0].confirmed, false);
      // spending a confirmed charm output in the mempool
      chain.mempoolAdd(burnTx(tokenTx.txid, 0, 9));
      await svc.follower!.syncOnce();
      assert.equal(svc.mempool!.spendsConfirmedCharms(), true, 'a pending spend of a confirmed charm output: read per output');
      const after = json((await get(`/v1/addresses/${addr}/balances`)).body);
      assert.deepEqual(
        after.balances.map((b: { confirmed: string }) => b.confirmed),
        bal.balances.map((b: { confirmed: string }) => b.confirmed),
        'confirmed never moves with the mempool',
      );
      assert.ok(after.balances.every((b: { unconfirmed_out: string; confirmed: string }) => b.unconfirmed_out === b.confirmed));

      assert.equal((await get('/spells/' + tokenTx.txid)).status, 503, 'the spell-query routes are served too (no tx source here)');
      assert.equal((await get('/v1/nothing')).status, 404);
    } finally {
      await svc.close();
    }
  });

  test(`${name}: two indexes of one chain answer the same bytes; an over-cap reorg answers 503`, async (t) => {
    if (!sharedOrSkip(t)) return;
    const e = await engines.engine(name, t);
    if (!e) return;
    const v = bitcoinVectors();
    const chain = vectorChain(v);
    const a = await service(e, chain, 1);
    const b = await service(e, chain, 1);
    try {
      const tokenTx = v.get('28355906')!;
      const addr = scriptToAddress(parseTx(tokenTx.raw).outputs[0]!.script, BITCOIN_NETWORKS.regtest)!;
      for (const path of [
        `/v1/addresses/${addr}/balances`,
        `/v1/addresses/${addr}/utxos`,
        `/v1/addresses/${addr}/history`,
        `/v1/txs/${tokenTx.txid}`,
        `/v1/outputs/${tokenTx.txid}:0`,
      ]) {
        const [x, y] = [await h1(a.server.port, 'GET', path), await h1(b.server.port, 'GET', path)];
        assert.equal(x.status, 200, path);
        assert.equal(x.body.toString(), y.body.toString(), path);
      }
      chain.reorg(2, [[], [], []]);
      await a.follower!.syncOnce();
      const st = await h1(a.server.port, 'GET', '/v1/status');
      assert.equal(st.status, 503);
      assert.equal(json(st.body).reorg.unrecoverable.depth, 2);
    } finally {
      await a.close();
      await b.close();
    }
  });

  // SQLite only: PostgreSQL has no synchronous read (both its paths would be the awaited one)
  if (name === 'sqlite')
    test(`${name}: balances answered at once give the bytes of the awaited path, errors included`, async (t) => {
      if (!sharedOrSkip(t)) return;
      const e = await engines.engine(name, t);
      if (!e) return;
      const v = bitcoinVectors();
      const chain = vectorChain(v, ['9c048eca']);
      const base = await e.open(await e.newDb());
      const svc = await startIndexService({ store: base, source: chain, ...TEST_INDEX_SERVICE });
      await svc.follower!.syncOnce();
      await svc.follower!.syncOnce(); // the mempool refresh after a settled tip
      try {
        const port = svc.server.port;
        // the same store without its synchronous read: every answer through route's awaited path
        const awaited = Object.create(base, {
          // its unspentAmounts (inherited, called on it) reads through the engine's promise API
          unspentAmountsNow: { value: undefined },
        }) as IndexWriter;
        const mk = (st: IndexWriter) => indexApiHandler({ store: st, mempool: svc.mempool, network: 'regtest', version: 'test' });
        const now = mk(base);
        const later = mk(awaited);
        const req = (path: string, method = 'GET'): Req => {
          const q = path.indexOf('?');
          return {
            method,
            path: q < 0 ? path : path.slice(0, q),
            query: new URLSearchParams(q < 0 ? '' : path.slice(q + 1)),
            headers: {},
            body: async () => new Uint8Array(),
          };
        };
        const addrs = [...v.values()].flatMap((x) =>
          parseTx(x.raw)
            .outputs.map((o) => scriptToAddress(o.script, BITCOIN_NETWORKS.regtest))
            .filter((a): a is string => a !== undefined),
        );
        const paths = [
          ...new Set(addrs.map((a) => `/v1/addresses/${a}/balances`)),
          `/v1/addresses/${addrs[0]}/balances?network=regtest`,
          `/v1/addresses/${addrs[0]}/balances?network=mainnet`, // another network asked: 400
          '/v1/addresses/bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq/balances', // a mainnet address: 400
          '/v1/addresses/notanaddress/balances',
          '/v1/addresses/%zz/balances', // a bad escape: 400
          `/v1/addresses/${'q'.repeat(200)}/balances`,
          '/v1/addresses/bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080/balances', // valid, never paid: no balances
        ];
        const compare = async (label: string) => {
          let atOnce = 0;
          let found = 0;
          for (const path of paths)
            for (const method of ['GET', 'HEAD']) {
              const a = now(req(path, method));
              const x: Res = await a;
              if (x.status === 200) found++;
              if (x.status === 200 && !(a instanceof Promise)) atOnce++;
              const b = later(req(path, method));
              // the awaited path reads through the engine's promise API (not the synchronous read)
              if (x.status === 200) assert.ok(b instanceof Promise, `${label}: ${method} ${path} awaited`);
              const y: Res = await b;
              assert.deepEqual(
                { status: x.status, headers: x.headers, body: String(x.body) },
                { status: y.status, headers: y.headers, body: String(y.body) },
                `${label}: ${method} ${path}`,
              );
            }
          assert.equal(found, (paths.length - 5) * 2, `${label}: the answers found`);
          assert.equal(atOnce, found, `${label}: answers given at once`);
        };
        await compare('empty mempool');
        assert.equal((await now(req(paths.at(-4)!))).status, 400);
        assert.match(String((await now(req(`/v1/addresses/${addrs[0]}/balances?network=mainnet`))).body), /this index serves regtest/);
        // a pending receive, then a pending spend of a confirmed charm output (the read with outpoints)
        chain.mempoolAdd(v.get('9c048eca')!.raw);
        await svc.follower!.syncOnce();
        await compare('a pending receive');
        chain.mempoolAdd(burnTx(v.get('2efcde0d')!.txid, 0, 9));
        await svc.follower!.syncOnce();
        assert.equal(svc.mempool!.spendsConfirmedCharms(), true);
        await compare('a pending spend');
        // and through HTTP (the fast path sends an answer given at once): the handler's bytes
        const a = addrs.find((x) => x !== undefined)!;
        const wire = await h1(port, 'GET', `/v1/addresses/${a}/balances`);
        assert.equal(wire.body.toString(), String((await later(req(`/v1/addresses/${a}/balances`))).body));
      } finally {
        await svc.close();
      }
    });
}

// ------------------------------------------------------------------ the API and the status

const U64_MAX = 2n ** 64n - 1n;
const SCRIPT = Uint8Array.from([0x51, 0x20, ...new Array(32).fill(7)]);
const APP = `t/${'31'.repeat(32)}/${'32'.repeat(32)}`;

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
      const address = scriptToAddress(SCRIPT, BITCOIN_NETWORKS.regtest)!;
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

for (const name of ENGINES) {
  test(`${name}: numbers past the schema's 32-bit columns are a 400 or a 404, never a 500`, async (t) => {
    const e = await engines.engine(name, t);
    if (!e) return;
    const store = await e.open(await e.newDb());
    try {
      const h = indexApiHandler({ store, network: 'regtest', version: 'test' });
      const address = scriptToAddress(SCRIPT, BITCOIN_NETWORKS.regtest)!;
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
    const address = scriptToAddress(SCRIPT, BITCOIN_NETWORKS.regtest)!;
    assert.equal((await h1(svc.server.port, 'GET', `/v1/addresses/${address}/balances`)).status, 200);
    chain.release();
    await sync;
    assert.equal((await h1(svc.server.port, 'GET', '/v1/status')).status, 200);
  } finally {
    chain.release();
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
        const a = scriptToAddress(o.script, BITCOIN_NETWORKS.regtest);
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

// ------------------------------------------------------------------ one snapshot per answer

/**
 * A reader of `db` whose every query first runs `before()` (a writer's flip between the queries of
 * one answer, at a fixed point: no timing involved), the snapshot reads included.
 */
async function hookedReader(e: TestEngine, db: string, before: (sql: string) => Promise<void>): Promise<SqlStore> {
  const d: Driver = e.name === 'sqlite' ? SqliteDriver.open(db, 'reader') : await PgDriver.open(db, 'reader');
  const meta = await prepareSchema(d, { mode: 'reader', network: 'regtest', mock: false, startHeight: 1, label: db });
  const hooked = (tx: ReadTx): ReadTx => ({
    engine: tx.engine,
    all: async (sql, params) => (await before(sql), tx.all(sql, params)),
    rows: async (sql, params) => (await before(sql), tx.rows(sql, params)),
  });
  const h = hooked(d);
  return new SqlStore(
    {
      engine: d.engine,
      idsStable: d.idsStable,
      all: h.all,
      rows: h.rows,
      read: (fn) => d.read((tx) => fn(hooked(tx))),
      transaction: (fn) => d.transaction(fn),
      close: () => d.close(),
    },
    meta,
  );
}

for (const name of ENGINES) {
  test(`${name}: /v1/apps/<app>, the explorer's holders, the wallet's transactions and tx answer from one snapshot while the writer flips branches`, async (t) => {
    const e = await engines.engine(name, t);
    if (!e) return;
    const db = await e.newDb();
    const writer = await e.open(db);
    const app = `t/${'41'.repeat(32)}/${'42'.repeat(32)}`;
    const script = (n: number) => Uint8Array.from([0x51, 0x20, ...new Array(32).fill(n)]);
    const hash = (n: number) => n.toString(16).padStart(64, '0');
    const block = (height: number, tag: number, prev: number, holders: [number, bigint][]): BlockWrite => ({
      height,
      hash: hash(tag),
      prevHash: hash(prev),
      time: 1000 + height,
      spellTxs: [{ txid: hash(tag + 0x1000), txIndex: 1, version: 15, spell: Uint8Array.of(0xa0) }],
      outputs: holders.map(([s, amount], vout) => ({ txid: hash(tag + 0x1000), txIndex: 1, vout, app, amount, data: null, script: script(s), sats: 1000n })),
      inputs: [],
    });
    try {
      await writer.applyBlock(
        block(1, 0x101, 0x100, [
          [1, 10n],
          [2, 20n],
        ]),
      );
      // two branches at height 2: other holders, another supply
      const branches = [
        block(2, 0x201, 0x101, [
          [3, 5n],
          [4, 7n],
          [5, 11n],
        ]),
        block(2, 0x202, 0x101, [
          [1, 1000n],
          [6, 2000n],
        ]),
      ];
      // a transaction without charms that branch 1's block holds (its recent txids)
      const moved = 'ab'.repeat(32);
      branches[1]!.txids = Buffer.from(moved, 'hex');
      await writer.applyBlock(branches[0]!);
      let on = 0;
      let flips = 0;
      let flipping = false;
      // which queries the writer flips before (all of them, then the asset's read alone)
      let flipsBefore = (_sql: string) => true;
      const flip = async (sql: string) => {
        if (flipping || !flipsBefore(sql)) return;
        flipping = true;
        on = 1 - on;
        await writer.rollbackTo(1, { at: ++flips, depth: 1, oldTip: branches[1 - on]!.hash, newTip: branches[on]!.hash });
        await writer.applyBlock(branches[on]!);
        flipping = false;
      };
      const reader = await hookedReader(e, db, flip);
      try {
        const h = indexApiHandler({ store: reader, network: 'regtest', version: 'test' });
        const supplies = new Set<string>();
        for (let i = 0; i < 20; i++) {
          const a = await answer(h, `/v1/apps/${encodeURIComponent(app)}`);
          assert.equal(a.status, 200);
          const sum = (a.json.holders as { amount: string }[]).reduce((x, y) => x + BigInt(y.amount), 0n);
          assert.equal(a.json.supply, String(sum), `answer ${i}: supply ${a.json.supply}, holders ${JSON.stringify(a.json.holders)}`);
          assert.equal(a.json.holders_count, a.json.holders.length, `answer ${i}`);
          supplies.add(a.json.supply);
        }
        assert.ok(flips >= 40, `the writer flipped between the queries (${flips})`);
        assert.deepEqual([...supplies].sort(), ['3030', '53'], 'both branches were answered');
        // the explorer's holders: the asset's supply and the page of holders, under the same flips
        const x = tableHandler(EXPLORER_ROUTES, { store: reader, network: 'regtest' }, { network: 'regtest', log: silentLogger, next: noRoute(silentLogger) });
        const explorerSupplies = new Set<number>();
        const flipsSoFar = flips;
        // a flip before the asset's read only: its supply from one branch, the holders from the
        // other, unless both are read in one snapshot
        flipsBefore = (sql) => /FROM assets/.test(sql);
        for (let i = 0; i < 20; i++) {
          const a = await answer(x, `/v1/assets/${app}/holders`);
          assert.equal(a.status, 200, JSON.stringify(a.json));
          const sum = (a.json.holders as { total_amount: number }[]).reduce((s, y) => s + y.total_amount, 0);
          assert.equal(a.json.total_supply, sum, `explorer answer ${i}: supply ${a.json.total_supply}, holders ${JSON.stringify(a.json.holders)}`);
          assert.equal(a.json.total_holders, a.json.holders.length, `explorer answer ${i}`);
          explorerSupplies.add(a.json.total_supply);
        }
        assert.equal(flips - flipsSoFar, 20, `the writer flipped once in each of the explorer's answers`);
        // PostgreSQL's snapshot may also be taken between the flip's two commits (block 1 alone: 30)
        assert.ok(explorerSupplies.size >= 2, `answers from more than one state: ${[...explorerSupplies]}`);
        for (const s of explorerSupplies) assert.ok([30, 53, 3030].includes(s), `a committed state's supply: ${s}`);
        // the wallet's transactions of holder 1 (in block 1 and in branch 1): a flip before each
        // read of a transaction's outputs; each one listed has what it paid the holder
        const w = explorerApiHandler({ store: reader, network: 'regtest' });
        const holder = scriptToAddress(script(1), BITCOIN_NETWORKS.regtest)!;
        flipsBefore = (sql) => /WHERE co\.txid = \? ORDER BY/.test(sql);
        const counts = new Set<number>();
        for (let i = 0; i < 20; i++) {
          const a = await answer(w, `/v1/wallet/transactions/${holder}`);
          assert.equal(a.status, 200, JSON.stringify(a.json));
          const txs = a.json.transactions as { txid: string; assets: { amount: number }[] }[];
          for (const x of txs) assert.ok(x.assets.length > 0, `wallet answer ${i}: ${x.txid} listed without its outputs: ${JSON.stringify(txs)}`);
          counts.add(txs.length);
        }
        assert.ok(counts.size >= 2, `answers from both branches: ${[...counts]}`);
        // branch 1's transaction: its height and its block from one state (a flip before the block's read)
        const raw = bitcoinVectors().values().next().value!.raw;
        const source = { name: 'fake', rawTx: async (id: string) => (id === moved ? raw : undefined) } as unknown as BlockSource;
        const tw = explorerApiHandler({ store: reader, network: 'regtest', source });
        flipsBefore = (sql) => /WHERE b\.height = \?/.test(sql);
        const heights = new Set<number | null>();
        for (let i = 0; i < 20; i++) {
          const a = await answer(tw, `/v1/wallet/tx/${moved}`);
          assert.equal(a.status, 200, JSON.stringify(a.json));
          if (a.json.block_height !== null)
            assert.equal(a.json.block_hash, hash(0x202), `tx answer ${i}: in block ${a.json.block_hash} at ${a.json.block_height}`);
          heights.add(a.json.block_height);
        }
        assert.ok(heights.has(2), 'answered in its block');
      } finally {
        await reader.close();
      }
    } finally {
      await writer.close();
    }
  });
}

// ------------------------------------------------------------------ SQLite's write lock held elsewhere

test('sqlite: another connection holding the write lock does not freeze the API; status says why writes wait; then the index catches up', async () => {
  const e = engines.sqlite();
  const db = await e.newDb();
  const chain = new MemoryChain();
  chain.mine([]);
  const svc = await startIndexService({ ...TEST_INDEX_SERVICE, store: await e.open(db), source: chain });
  try {
    await svc.follower!.syncOnce();
    const port = svc.server.port;
    assert.equal(json((await h1(port, 'GET', '/v1/status')).body).db.writes_waiting, null);
    chain.mine([]);
    // a backup or an sqlite3 shell: the write lock taken by another connection
    const Database = createRequire(import.meta.url)(betterSqliteModule()) as typeof import('better-sqlite3');
    const other = new Database(db);
    other.exec('BEGIN IMMEDIATE');
    let held = true;
    let sync: Promise<void> | undefined;
    try {
      sync = svc.follower!.syncOnce();
      // the API answers while the follower's commit waits (before the lock is released below)
      let slowest = 0;
      const st = await waitFor(async () => {
        const t0 = performance.now();
        const r = json((await h1(port, 'GET', '/v1/status')).body);
        slowest = Math.max(slowest, performance.now() - t0);
        return r.db.writes_waiting ? r : undefined;
      }, 'status reporting the writes waiting');
      assert.ok(slowest < 1000, `every /v1/status answered in under 1 s (slowest ${Math.round(slowest)} ms)`);
      assert.ok(held, 'answered while the lock is held');
      // and each answer comes at once, not after a busy wait on the event loop
      for (const path of ['/v1/status', `/v1/txs/${'00'.repeat(32)}`, `/v1/outputs/${'00'.repeat(32)}:0`]) {
        const t0 = performance.now();
        const r = await h1(port, 'GET', path);
        const ms = performance.now() - t0;
        assert.ok(r.status === 200 || r.status === 404, `${path}: ${r.status} ${r.body}`);
        assert.ok(ms < 1000, `${path} answered in ${Math.round(ms)} ms while the lock is held`);
      }
      assert.match(st.db.writes_waiting.reason, /another connection holds the SQLite file's write lock/);
      assert.equal(typeof st.db.writes_waiting.since, 'number');
      assert.equal(st.index.height, 1, 'block 2 not written yet');
      assert.doesNotMatch(JSON.stringify(st), new RegExp(db.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), 'no machine path in the answer');
    } finally {
      other.exec('COMMIT');
      held = false;
      other.close();
    }
    await sync;
    // caught up: at once when the wait outlived the lock, else at the next poll
    if (json((await h1(port, 'GET', '/v1/status')).body).index.height !== 2) await svc.follower!.syncOnce();
    const after = json((await h1(port, 'GET', '/v1/status')).body);
    assert.equal(after.index.height, 2);
    assert.equal(after.db.writes_waiting, null);
  } finally {
    await svc.close();
  }
});

test('sqlite: a write lock held past the 5 s wait fails that poll, said in status; the next poll after its release writes', async () => {
  const e = engines.sqlite();
  const db = await e.newDb();
  const chain = new MemoryChain();
  chain.mine([]);
  const svc = await startIndexService({ ...TEST_INDEX_SERVICE, store: await e.open(db), source: chain });
  const Database = createRequire(import.meta.url)(betterSqliteModule()) as typeof import('better-sqlite3');
  const other = new Database(db);
  try {
    await svc.follower!.syncOnce();
    chain.mine([]);
    other.exec('BEGIN IMMEDIATE');
    await svc.follower!.syncOnce();
    const st = json((await h1(svc.server.port, 'GET', '/v1/status')).body);
    assert.match(st.error.message, /another connection holds the SQLite file's write lock .*waited \d+ s; tried again at the next poll/);
    assert.equal(st.index.height, 1);
    assert.equal(st.synced, false);
    assert.match(st.db.writes_waiting.reason, /write lock/);
    assert.equal(st.error.code, 'UPSTREAM_UNAVAILABLE');
    other.exec('COMMIT');
    await svc.follower!.syncOnce();
    const after = json((await h1(svc.server.port, 'GET', '/v1/status')).body);
    assert.equal(after.index.height, 2);
    assert.equal(after.db.writes_waiting, null);
    assert.equal(after.error, null);
  } finally {
    if (other.inTransaction) other.exec('ROLLBACK');
    other.close();
    await svc.close();
  }
});

// ------------------------------------------------------------------ a node below the start height, or behind

test('a node below the start height: status synced:false and the waiting sentence, from the indexer and from an --api-only reader', async () => {
  const e = engines.sqlite();
  const db = await e.newDb();
  const chain = new MemoryChain();
  for (let i = 0; i < 5; i++) chain.mine([]);
  const svc = await startIndexService({ ...TEST_INDEX_SERVICE, startHeight: 8, store: await e.open(db, { startHeight: 8 }), source: chain });
  const reader = await e.open(db, { mode: 'reader', startHeight: 8 });
  const h = indexApiHandler({ store: reader, source: chain, network: 'regtest', version: 'test' });
  try {
    await svc.follower!.syncOnce();
    const waiting = 'waiting for the node to reach the start height 8 (node at 5)';
    const fromIndexer = json((await h1(svc.server.port, 'GET', '/v1/status')).body);
    const fromReader = (await answer(h, '/v1/status')).json;
    for (const [who, st] of [
      ['indexer', fromIndexer],
      ['reader', fromReader],
    ] as const) {
      assert.equal(st.synced, false, who);
      assert.equal(st.waiting, waiting, who);
      assert.equal(st.index.height, 7, who);
      assert.equal(st.node.height, 5, who);
    }
    // the node gets there: indexed, synced
    for (let i = 0; i < 5; i++) chain.mine([]);
    await svc.follower!.syncOnce();
    const synced = (await answer(h, '/v1/status')).json;
    assert.equal(synced.index.height, 10);
    assert.equal(synced.synced, true);
    assert.equal(synced.waiting, null);
    // the reader's node falls behind the index: not synced, said why
    chain.best = chain.best.slice(0, chain.best.length - 2);
    const behind = (await answer(h, '/v1/status')).json;
    assert.equal(behind.synced, false);
    assert.deepEqual(behind.node_behind, { node_height: 8, index_height: 10, since: null });
    assert.match(behind.waiting, /^node behind: the node is at 8, the index at 10; waiting/);
  } finally {
    await reader.close();
    await svc.close();
  }
});
