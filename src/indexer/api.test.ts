import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { scriptToAddress } from '../bitcoin/address.js';
import { parseTx } from '../bitcoin/tx.js';
import { ENGINES, TestEngines, type TestEngine } from '../testing/index-stores.js';
import { sharedOrSkip } from '../testing/shared.js';
import { h1, h2 } from '../testing/http.js';
import { txidOf } from '../testing/memory-chain.js';
import { bitcoinVectors, burnTx, vectorChain } from '../testing/index-vectors.js';
import { startIndexService, type IndexService } from './service.js';
import { indexApiHandler } from './api.js';
import type { IndexStore } from './store.js';
import type { Req, Res } from '../infra/http.js';
import { TEST_INDEX_SERVICE } from '../testing/index-fake-node.js';

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
      const addr = scriptToAddress(script, 'regtest')!;
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
      const pAddr = scriptToAddress(pScript, 'regtest')!;
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
      const addr = scriptToAddress(parseTx(tokenTx.raw).outputs[0]!.script, 'regtest')!;
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
        unspentAmountsNow: { value: undefined },
        unspentAmounts: { value: (script: Uint8Array, outpoints?: boolean) => base.unspentAmounts(script, outpoints) },
      }) as IndexStore;
      const mk = (st: IndexStore) => indexApiHandler({ store: st, mempool: svc.mempool, network: 'regtest', version: 'test' });
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
          .outputs.map((o) => scriptToAddress(o.script, 'regtest'))
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
            const y: Res = await later(req(path, method));
            assert.deepEqual(
              { status: x.status, headers: x.headers, body: String(x.body) },
              { status: y.status, headers: y.headers, body: String(y.body) },
              `${label}: ${method} ${path}`,
            );
          }
        // SQLite reads at once (no promise); PostgreSQL has no synchronous read (its 400s are at once)
        assert.equal(found, (paths.length - 5) * 2, `${label}: the answers found`);
        assert.equal(atOnce, name === 'sqlite' ? found : 0, `${label}: answers given at once`);
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
