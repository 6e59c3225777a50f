import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { scriptToAddress } from '../bitcoin/address.js';
import { parseTx } from '../bitcoin/tx.js';
import { indexOverFakeNode, indexServiceOver, TEST_INDEX_SERVICE, type IndexOverFakeNode } from '../testing/index-fake-node.js';
import { ENGINES, TestEngines } from '../testing/index-stores.js';
import { encodeCbor } from '../codec/cbor.js';
import { sharedOrSkip } from '../testing/shared.js';
import { h1 } from '../testing/http.js';
import { spendTx } from '../testing/vector-chain.js';
import { bitcoinVectors } from '../testing/index-vectors.js';
import { chip420Meta, explorerApiHandler, MAX_FEE_READS_PER_REQUEST } from './explorer-api.js';
import { cachedAnswers } from './answer-cache.js';
import { ValueMap } from '../codec/value.js';
import { FakeBitcoind } from '../testing/fake-bitcoind.js';
import { fromHex } from '../util/bytes.js';
import { startIndexService, type IndexService } from './service.js';
import type { IndexWriter } from './store.js';
import type { SourceConfig } from '../settings/settings.js';
import type { BtcSource } from '../sources/btc-source.js';
import { vectorChain } from '../testing/index-vectors.js';
import { BITCOIN_NETWORKS } from '../model/network.js';

const SCRIPT = Uint8Array.from([0x51, 0x20, ...new Array(32).fill(7)]);
const engines = new TestEngines();
after(() => engines.close());

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const json = (b: Buffer): Any => JSON.parse(b.toString('utf8'));

/**
 * Every path must exist in `v` (`[]` = every element of a non-empty array, `|` = any of the
 * spellings): the fields the official wallet reads (indexer.md §2), so a rename breaks this test.
 */
function assertFields(v: Any, paths: string[], where: string): void {
  const walk = (x: Any, parts: string[], at: string): void => {
    if (parts.length === 0) return;
    const [head, ...rest] = parts as [string, ...string[]];
    if (head === '[]') {
      assert.ok(Array.isArray(x) && x.length > 0, `${where}: ${at} must be a non-empty array`);
      x.forEach((e: Any, i: number) => walk(e, rest, `${at}[${i}]`));
      return;
    }
    assert.ok(x !== null && typeof x === 'object' && !Array.isArray(x), `${where}: ${at} must be an object`);
    for (const k of head.split('|')) {
      assert.ok(Object.hasOwn(x, k), `${where}: ${at}.${k} is missing`);
      walk(x[k], rest, `${at}.${k}`);
    }
  };
  for (const p of paths) walk(v, p.replace(/\[\]/g, '.[]').split('.').filter(Boolean), '$');
}

/** A real index (SQLite) over the fake node, followed through its Esplora facade, with Esplora as the BTC source. */
async function setup(t: { skip: (m?: string) => void }, withBtc = true): Promise<IndexOverFakeNode | undefined> {
  const e = await engines.engine('sqlite', t);
  return e && indexOverFakeNode(e, { except: ['9c048eca'], withBtc });
}

/** `store` with the calls of the methods named in `calls` counted there. */
function countedStore(store: IndexWriter, calls: Record<string, number>): IndexWriter {
  return new Proxy(store, {
    get(target, k) {
      const v: unknown = Reflect.get(target, k);
      if (typeof v !== 'function') return v;
      if (typeof k === 'string' && k in calls) return (...args: unknown[]) => (calls[k]!++, v.apply(target, args));
      return v.bind(target);
    },
  });
}

const addrOf = (raw: Uint8Array, vout: number) => scriptToAddress(parseTx(raw).outputs[vout]!.script, BITCOIN_NETWORKS.regtest)!;

test('explorer-compatible API: every field the wallet reads, both spellings, pending receive and mempool spend', async (t) => {
  if (!sharedOrSkip(t)) return;
  const s = await setup(t);
  if (!s) return;
  const { fake, port } = s;
  const v = bitcoinVectors();
  const chex = v.get('55777ba2')!; // out 0: 420000 CHEX tokens, out 1: the CHEX reference NFT (CHIP-0420 data)
  const order = v.get('2efcde0d')!; // out 0: a b/ order charm + 5e9 tokens
  const pendingTx = v.get('9c048eca')!; // not mined: a pending receive
  const get = (path: string) => h1(port, 'GET', path);
  const post = (path: string, body: unknown) => h1(port, 'POST', path, JSON.stringify(body));
  try {
    const chexAddr = addrOf(chex.raw, 0);
    const orderAddr = addrOf(order.raw, 0);
    const pendAddr = addrOf(pendingTx.raw, 0);
    const tokenApp = 't/1dc78849dc544b2d2bca6d698bb30c20f4e5894ec8d9042f1dbae5c41e997334/b22a36379c7c0b1e987f680e33b2263d94f86e2a75063d698ccf842ce6592840';

    // the mempool: a verified pending receive, and a spend of a confirmed charm output
    fake.mempoolAdd(pendingTx.raw);
    const spend = spendTx([{ txid: order.txid, vout: 0 }], { tag: 42 });
    fake.mempoolAdd(spend.bytes);
    await s.svc.follower!.syncOnce();

    // 1. POST /v1/wallet/balance/batch
    const bb = await post('/v1/wallet/balance/batch?network=regtest', { addresses: [chexAddr, orderAddr, pendAddr], network: 'regtest' });
    assert.equal(bb.status, 200, bb.body.toString());
    const b = json(bb.body);
    assertFields(
      b.results[chexAddr],
      [
        'btc.utxos[].txid',
        'btc.utxos[].vout',
        'btc.utxos[].value',
        'btc.utxos[].blockHeight',
        'btc.utxos[].confirmed',
        'btc.utxos[].hasCharms',
        'charms.balances[].appId|app_id',
        'charms.balances[].assetType|asset_type',
        'charms.balances[].symbol',
        'charms.balances[].name',
        'charms.balances[].imageUrl|image_url|image',
        'charms.balances[].description',
        'charms.balances[].confirmed',
        'charms.balances[].unconfirmed',
        'charms.balances[].total',
        'charms.balances[].utxos[].txid',
        'charms.balances[].utxos[].vout',
        'charms.balances[].utxos[].amount',
        'charms.balances[].utxos[].address',
        'address',
        'network',
        'monitored',
        'btc.confirmed',
        'btc.unconfirmed',
        'btc.total',
        'btc.available',
        'btc.locked',
        'charms.count',
      ],
      'balance/batch',
    );
    const chexBal = b.results[chexAddr].charms.balances.find((x: Any) => x.appId === tokenApp);
    assert.deepEqual(
      {
        name: chexBal.name,
        symbol: chexBal.symbol,
        image: chexBal.image,
        imageUrl: chexBal.imageUrl,
        image_url: chexBal.image_url,
        app_id: chexBal.app_id,
        asset_type: chexBal.asset_type,
        decimals: chexBal.decimals,
      },
      {
        name: 'CHEX Token',
        symbol: 'CHEX',
        image: 'https://iili.io/3cOsqaj.png',
        imageUrl: 'https://iili.io/3cOsqaj.png',
        image_url: 'https://iili.io/3cOsqaj.png',
        app_id: tokenApp,
        asset_type: 'token',
        decimals: 0,
      },
      'CHIP-0420 metadata from the reference NFT (default decimals 0)',
    );
    assert.deepEqual([chexBal.confirmed, chexBal.unconfirmed, chexBal.total], [420000, 0, 420000]);
    assert.match(bb.body.toString(), /"amount":420000[,}]/, 'amounts are JSON numbers with exact digits');
    // BTC side from Esplora: the charm output is a BTC UTXO too, locked, with its real value (no 546 default)
    const chexSats = Number(parseTx(chex.raw).outputs[0]!.value);
    const btcUtxo = b.results[chexAddr].btc.utxos.find((u: Any) => u.txid === chex.txid && u.vout === 0);
    assert.deepEqual(
      { value: btcUtxo.value, hasCharms: btcUtxo.hasCharms, confirmed: btcUtxo.confirmed, blockHeight: btcUtxo.blockHeight },
      { value: chexSats, hasCharms: true, confirmed: true, blockHeight: 3 },
    );
    assert.equal(b.results[chexAddr].btc.btc_source, 'esplora');
    assert.equal(b.results[chexAddr].charms.balances[0].utxos[0].value, chexSats);
    // the pending receive: unconfirmed only, its UTXO listed with confirmed: false
    for (const p of b.results[pendAddr].charms.balances) {
      assert.equal(p.confirmed, 0);
      assert.ok(p.unconfirmed > 0);
      assert.equal(p.total, p.unconfirmed);
      assert.equal(p.utxos[0].confirmed, false);
      assert.equal(p.utxos[0].txid, pendingTx.txid);
    }
    // a token with no reference NFT in the index (BRO here): no metadata, decimals 0 (CHIP-0420's
    // default; the official wallet takes BRO's 8 from its own table and ignores this field)
    const bro = b.results[orderAddr].charms.balances.find((x: Any) => x.appId.startsWith('t/'));
    assert.deepEqual([bro.name, bro.symbol, bro.decimals], [null, null, 0]);

    // the GET form is one batch entry
    const one = json((await get(`/v1/wallet/balance/${chexAddr}?network=regtest`)).body);
    assert.deepEqual(one, b.results[chexAddr]);

    // GET /v1/wallet/charms/{address}: mempoolSpent, available, hasOrderCharm
    const wc = json((await get(`/v1/wallet/charms/${orderAddr}?network=regtest`)).body);
    assertFields(
      wc,
      [
        'address',
        'network',
        'count',
        'balances[].appId',
        'balances[].assetType',
        'balances[].symbol',
        'balances[].confirmed',
        'balances[].unconfirmed',
        'balances[].mempoolSpent',
        'balances[].available',
        'balances[].total',
        'balances[].utxos[].txid',
        'balances[].utxos[].vout',
        'balances[].utxos[].value',
        'balances[].utxos[].address',
        'balances[].utxos[].appId',
        'balances[].utxos[].amount',
        'balances[].utxos[].confirmed',
        'balances[].utxos[].blockHeight',
        'balances[].utxos[].hasOrderCharm',
        'balances[].utxos[].allCharmAppIds',
        'balances[].utxos[].mempoolSpent',
      ],
      'wallet/charms',
    );
    for (const x of wc.balances) {
      assert.equal(x.mempoolSpent, x.confirmed, 'the whole output is spent in the mempool');
      assert.equal(x.available, 0);
      assert.equal(x.utxos[0].hasOrderCharm, true, 'a b/ app is on the output');
    }
    const tok = wc.balances.find((x: Any) => x.appId.startsWith('t/'));
    assert.equal(tok.confirmed, 5000000000);
    // balance entries are written by hand: compact JSON as the generic writer's (the vectors'
    // amounts are below 2^53, so JSON.stringify writes them alike), keys in the documented order
    const wcText = (await get(`/v1/wallet/charms/${orderAddr}?network=regtest`)).body.toString();
    assert.equal(JSON.stringify(JSON.parse(wcText)), wcText);
    assert.equal(JSON.stringify(b), bb.body.toString());
    const metaKeys = ['appId', 'app_id', 'assetType', 'asset_type', 'symbol', 'ticker', 'name', 'description', 'imageUrl', 'image_url', 'image', 'decimals'];
    for (const x of [...wc.balances, ...b.results[chexAddr].charms.balances, ...b.results[pendAddr].charms.balances]) {
      assert.deepEqual(Object.keys(x), [...metaKeys, 'confirmed', 'unconfirmed', 'mempoolSpent', 'available', 'total', 'utxos']);
      for (const u of x.utxos)
        assert.deepEqual(Object.keys(u), [
          'txid',
          'vout',
          'value',
          'address',
          'appId',
          'app_id',
          'amount',
          'confirmed',
          'blockHeight',
          'block_height',
          'hasOrderCharm',
          'allCharmAppIds',
          'mempoolSpent',
        ]);
    }
    // batch/indexed
    const biRes = await post('/v1/wallet/charms/batch/indexed', { addresses: [orderAddr], network: 'regtest' });
    const bi = json(biRes.body);
    assert.equal(JSON.stringify(bi), biRes.body.toString());
    assert.deepEqual(Object.keys(bi.results[orderAddr].balances[0]).slice(-2), ['utxos', 'cardano']);
    assertFields(
      bi.results[orderAddr],
      ['balances[].appId', 'balances[].name', 'balances[].decimals', 'balances[].cardano', 'balances[].mempoolSpent', 'count'],
      'charms/batch/indexed',
    );

    // 2. POST /v1/wallet/transactions/batch
    const tb = json((await post('/v1/wallet/transactions/batch', { addresses: [chexAddr, pendAddr], network: 'regtest', page_size: 100 })).body);
    assertFields(
      tb.results[chexAddr],
      [
        'last_block',
        'transactions[].txid',
        'transactions[].direction',
        'transactions[].amount',
        'transactions[].fee',
        'transactions[].block_height',
        'transactions[].block_time',
        'transactions[].confirmations',
        'transactions[].charm_detected',
        'transactions[].assets[].app_id|appId',
        'transactions[].assets[].name',
        'transactions[].assets[].symbol',
        'transactions[].assets[].amount',
      ],
      'transactions/batch',
    );
    const t0 = tb.results[chexAddr].transactions[0];
    assert.deepEqual([t0.txid, t0.direction, t0.block_height, t0.confirmations, t0.amount], [chex.txid, 'in', 3, fake.height - 3 + 1, chexSats]);
    assert.equal(t0.assets.find((a: Any) => a.app_id === tokenApp).symbol, 'CHEX');
    assert.equal(tb.results[chexAddr].last_block, fake.height);
    const pt = tb.results[pendAddr].transactions[0];
    assert.deepEqual([pt.txid, pt.direction, pt.confirmations, pt.block_height], [pendingTx.txid, 'in', 0, null]);
    const since = json((await post('/v1/wallet/transactions/batch', { addresses: [chexAddr], since_block: fake.height })).body);
    assert.deepEqual(since.results[chexAddr].transactions, []);
    const wt = json((await get(`/v1/wallet/transactions/${chexAddr}?page=1&page_size=1`)).body);
    assertFields(
      wt,
      [
        'address',
        'network',
        'page',
        'page_size',
        'total',
        'total_pages',
        'transactions[].txid',
        'transactions[].address',
        'transactions[].direction',
        'transactions[].amount',
        'transactions[].block_height',
        'transactions[].block_time',
        'transactions[].confirmations',
      ],
      'wallet/transactions',
    );

    // 3. GET /v1/transactions/{txid}
    const td = json((await get(`/v1/transactions/${chex.txid}?network=regtest`)).body);
    assertFields(
      td,
      [
        'charm.detected',
        'assets[].app_id',
        'assets[].name',
        'assets[].symbol',
        'assets[].amount',
        'txid',
        'block_height',
        'status',
        'confirmations',
        'charm.native_data',
      ],
      'transactions/{txid}',
    );
    assert.equal(td.charm.detected, true);
    assert.equal(td.charm.native_data.version, 2);
    const pd = json((await get(`/v1/transactions/${pendingTx.txid}`)).body);
    assert.equal(pd.status, 'pending');
    assert.equal((await get(`/v1/transactions/${v.get('4125a400')!.txid}`)).status, 404, 'a plain transaction is not a charm transaction');

    // 4. GET /v1/assets/reference-nft/{identity}
    const rn = json((await get(`/v1/assets/reference-nft/${tokenApp.split('/')[1]}?network=regtest`)).body);
    assertFields(rn, ['metadata', 'name', 'description', 'image', 'image_url', 'app_id', 'symbol', 'decimals'], 'reference-nft');
    assert.equal(rn.metadata.ticker, 'CHEX');
    assert.equal(rn.app_id, `n/${tokenApp.slice(2)}`);
    assert.equal((await get(`/v1/assets/reference-nft/${'00'.repeat(32)}`)).status, 404);
    assert.equal((await get(`/v1/assets/reference-nft/zz`)).status, 400);

    // 5. tip with timestamp
    const tip = json((await get('/v1/wallet/tip?network=regtest')).body);
    assert.deepEqual(
      { height: tip.height, hash: tip.hash, timestamp: tip.timestamp },
      { height: fake.height, hash: fake.tipHash, timestamp: fake.blockByHash(fake.tipHash)!.block.header.time },
    );
    assert.equal(tip.time, tip.timestamp);

    // 6. utxos: Esplora's mempool-aware set; confirmations = tip − height + 1
    const wu = json((await get(`/v1/wallet/utxos/${chexAddr}?network=regtest`)).body);
    assertFields(
      wu,
      ['utxos[].txid', 'utxos[].vout', 'utxos[].value', 'utxos[].confirmations', 'utxos[].script_pubkey', 'utxos[].block_height', 'count'],
      'wallet/utxos',
    );
    const u0 = wu.utxos.find((u: Any) => u.txid === chex.txid && u.vout === 0);
    assert.deepEqual([u0.confirmations, u0.script_pubkey], [fake.height - 3 + 1, Buffer.from(parseTx(chex.raw).outputs[0]!.script).toString('hex')]);
    const spentGone = json((await get(`/v1/wallet/utxos/${orderAddr}`)).body);
    assert.ok(!spentGone.utxos.some((u: Any) => u.txid === order.txid && u.vout === 0), 'an output spent in the mempool is not listed');

    // 7. tx, tx hex, prev-txs
    const tx = json((await get(`/v1/wallet/tx/${chex.txid}?network=regtest`)).body);
    assertFields(
      tx,
      [
        'txid',
        'version',
        'size',
        'vsize',
        'weight',
        'locktime',
        'hex',
        'block_hash',
        'block_height',
        'confirmations',
        'time',
        'fee',
        'inputs[].txid',
        'inputs[].vout',
        'inputs[].script_sig',
        'inputs[].sequence',
        'inputs[].witness',
        'outputs[].value',
        'outputs[].n',
        'outputs[].script_pubkey.asm',
        'outputs[].script_pubkey.hex',
        'outputs[].script_pubkey.type',
        'outputs[].script_pubkey.address',
      ],
      'wallet/tx',
    );
    assert.equal(tx.hex, Buffer.from(chex.raw).toString('hex'));
    assert.deepEqual([tx.block_height, tx.block_hash, tx.confirmations], [3, fake.hashAt(3), fake.height - 3 + 1]);
    assert.equal(tx.outputs[0].value, chexSats / 1e8);
    assert.deepEqual(json((await get(`/v1/wallet/tx/${chex.txid}/hex`)).body), { txid: chex.txid, hex: tx.hex });
    const prev = json((await post('/v1/wallet/prev-txs', { txids: [chex.txid, order.txid], network: 'regtest' })).body);
    assert.equal(prev.transactions[order.txid], Buffer.from(order.raw).toString('hex'));
    assert.equal((await get(`/v1/wallet/tx/${'ab'.repeat(32)}`)).status, 404);

    // 8. fee estimate (BTC/kvB), 9. broadcast
    const fee = json((await get('/v1/wallet/fee-estimate?blocks=6&network=regtest')).body);
    assert.equal(fee.fee_rate * 100_000, 2, 'the wallet multiplies by 100 000 for sat/vB');
    const fresh = spendTx([{ txid: 'cd'.repeat(32), vout: 1 }], { tag: 7 });
    const bc = await post('/v1/wallet/broadcast?network=regtest', { raw_tx: fresh.hex });
    assert.deepEqual(json(bc.body), { txid: fresh.txid });
    assert.ok(fake.mempoolTxids().includes(fresh.txid));
    const rej = await post('/v1/wallet/broadcast', { raw_tx: 'zz' });
    assert.equal(rej.status, 400);
    assert.ok(json(rej.body).error);

    // 400s: wrong network, invalid addresses, batches over 50
    assert.equal((await get(`/v1/wallet/charms/${chexAddr}?network=mainnet`)).status, 400);
    assert.equal((await post('/v1/wallet/balance/batch', { addresses: [chexAddr], network: 'testnet4' })).status, 400);
    assert.equal((await get('/v1/wallet/balance/notanaddress')).status, 400);
    assert.equal((await post('/v1/wallet/balance/batch', { addresses: [chexAddr, 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq'] })).status, 400);
    assert.equal((await post('/v1/wallet/balance/batch', { addresses: new Array(51).fill(chexAddr) })).status, 400);
    assert.equal((await post('/v1/wallet/transactions/batch', { addresses: [chexAddr], page_size: 101 })).status, 400);
    assert.equal((await h1(port, 'POST', '/v1/wallet/balance/batch', 'not json')).status, 400);
    assert.equal((await get('/v1/status')).status, 200, 'our own API is still there');
  } finally {
    await s.close();
  }
});

test('explorer-compatible API without a BTC source: says btc_source "none" and invents nothing', async (t) => {
  if (!sharedOrSkip(t)) return;
  const s = await setup(t, false);
  if (!s) return;
  try {
    const v = bitcoinVectors();
    const chex = v.get('55777ba2')!;
    const addr = addrOf(chex.raw, 0);
    const b = json((await h1(s.port, 'POST', '/v1/wallet/balance/batch', JSON.stringify({ addresses: [addr] }))).body).results[addr];
    assert.equal(b.btc_source, 'none');
    assert.deepEqual(b.btc, { btc_source: 'none', confirmed: null, unconfirmed: null, total: null, available: null, locked: null, utxos: [] });
    assert.equal(
      b.charms.balances.find((x: Any) => x.appId.startsWith('t/')).utxos[0].value,
      Number(parseTx(chex.raw).outputs[0]!.value),
      'charm output values come from the index, not 546',
    );
    const u = await h1(s.port, 'GET', `/v1/wallet/utxos/${addr}`);
    assert.equal(u.status, 503);
    assert.equal(json(u.body).btc_source, 'none');
    assert.equal((await h1(s.port, 'GET', '/v1/wallet/fee-estimate')).status, 503);
    assert.equal((await h1(s.port, 'POST', '/v1/wallet/broadcast', JSON.stringify({ raw_tx: '00' }))).status, 503);
    const tip = json((await h1(s.port, 'GET', '/v1/wallet/tip')).body);
    assert.equal(tip.btc_source, 'none');
    assert.equal(tip.height, s.fake.height, 'the index tip');
  } finally {
    await s.close();
  }
});

test('CHIP-0420 metadata: well-typed fields only, decimals default 0', () => {
  const m = chip420Meta(ValueMap.of({ name: 'X', ticker: 'XT', decimals: 8n, image: 5n, description: 'd' }), 'n/a/b');
  assert.deepEqual([m.name, m.ticker, m.decimals, m.image, m.description], ['X', 'XT', 8, null, 'd']);
  assert.equal(chip420Meta(ValueMap.of({ decimals: 300n }), null).decimals, 0);
  assert.equal(chip420Meta('not a map', null).found, true);
});

for (const name of ENGINES) {
  test(`${name}: explorer-compatible amounts are exact beyond 2^53 and u64 (sums); reference NFT data`, async (t) => {
    const e = await engines.engine(name, t);
    if (!e) return;
    const store = await e.open(await e.newDb());
    try {
      const script = Uint8Array.from([0x51, 0x20, ...new Array(32).fill(9)]);
      const app = `t/${'11'.repeat(32)}/${'22'.repeat(32)}`;
      const max = 2n ** 64n - 1n;
      const out = (txid: string) => ({ txid, txIndex: 1, vout: 0, app, amount: max, data: null, script, sats: 1000n });
      const ref = `n/${'11'.repeat(32)}/${'22'.repeat(32)}`;
      const nft = (txid: string, ticker: string) => ({
        txid,
        txIndex: 2,
        vout: 0,
        app: ref,
        amount: null,
        data: encodeCbor(ValueMap.of({ ticker, decimals: 8n })),
        script,
        sats: 546n,
      });
      await store.applyBlock({
        height: 1,
        hash: 'aa'.repeat(32),
        prevHash: '00'.repeat(32),
        time: 1,
        spellTxs: [],
        outputs: [out('01'.repeat(32)), out('02'.repeat(32)), nft('03'.repeat(32), 'OLD')],
        inputs: [],
      });
      // the reference NFT moves on with new data: its current (unspent) data wins
      await store.applyBlock({
        height: 2,
        hash: 'bb'.repeat(32),
        prevHash: 'aa'.repeat(32),
        time: 2,
        spellTxs: [],
        outputs: [nft('04'.repeat(32), 'NEW')],
        inputs: [{ txid: '04'.repeat(32), txIndex: 2, vin: 0, prevTxid: '03'.repeat(32), prevVout: 0 }],
      });
      assert.equal((await store.nftData('11'.repeat(32)))?.txid, '04'.repeat(32));
      assert.equal((await store.nftData('11'.repeat(32), '22'.repeat(32)))?.height, 2);
      assert.equal(await store.nftData('11'.repeat(32), '33'.repeat(32)), undefined);
      assert.equal(await store.nftData("%' OR 1=1 --"), undefined);
      const handler = explorerApiHandler({ store, network: 'regtest' });
      const address = scriptToAddress(script, BITCOIN_NETWORKS.regtest)!;
      const res = await handler({
        method: 'GET',
        path: `/v1/wallet/charms/${address}`,
        query: new URLSearchParams(),
        headers: {},
        body: async () => new Uint8Array(),
      });
      assert.equal(res.status, 200);
      const text = String(res.body);
      assert.match(text, new RegExp(`"confirmed":${2n * max}[,}]`), 'the sum beyond u64, exact');
      assert.match(text, new RegExp(`"amount":${max}[,}]`), 'a u64 amount, exact');
      assert.match(text, new RegExp(`"total":${2n * max}[,}]`));
      assert.match(text, /"symbol":"NEW".*"decimals":8/, 'CHIP-0420 metadata of the current reference NFT');
      assert.match(text, new RegExp(`"available":${2n * max}[,}]`));
    } finally {
      await store.close();
    }
  });
}

test('wallet/tx: fee from Esplora or from the previous outputs on a node, null with a reason otherwise; asm as Bitcoin Core', async (t) => {
  const e = await engines.engine('sqlite', t);
  if (!e) return;
  const fake = await FakeBitcoind.start();
  const services: IndexService[] = [];
  try {
    const p2wpkh = fromHex('0014751e76e8199196d454941c45d1b3a323f1433bd6');
    // a funding transaction (its own input names a transaction nobody has), then a spend of both its outputs
    const funding = spendTx([{ txid: 'ee'.repeat(32), vout: 3 }], {
      outputs: [
        { value: 10_000n, script: p2wpkh },
        { value: 5_000n, script: p2wpkh },
      ],
      tag: 11,
    });
    const spend = spendTx(
      [
        { txid: funding.txid, vout: 0 },
        { txid: funding.txid, vout: 1 },
      ],
      { outputs: [{ value: 12_000n, script: p2wpkh }], tag: 12 },
    );
    fake.mine([funding.bytes]);
    const top = fake.mine([spend.bytes]);
    const coinbase = top.block.txs[0]!.txid;
    const start = async (cfg: SourceConfig) => {
      const svc = await indexServiceOver(e, cfg);
      services.push(svc);
      return async (txid: string): Promise<Any> => {
        const r = await h1(svc.server.port, 'GET', `/v1/wallet/tx/${txid}`);
        assert.equal(r.status, 200);
        // Bitcoin Core's BTC amounts carry 8 decimals
        if (txid === spend.txid) assert.match(r.body.toString(), /"fee":0\.00003000,/);
        return json(r.body);
      };
    };
    const esplora = await start({ esploraUrl: fake.esploraUrl });
    const rpc = await start({ rpcUrl: fake.rpcUrl, rpcCookie: fake.cookieFile! });

    const before = fake.calls.get('getrawtransaction') ?? 0;
    const viaEsplora = await esplora(spend.txid);
    assert.ok(fake.requests.includes(`/esplora/tx/${spend.txid}`), "Esplora's /tx/:txid was asked for the fee");
    assert.equal(fake.calls.get('getrawtransaction') ?? 0, before, 'no node call with Esplora');
    const viaNode = await rpc(spend.txid);
    assert.ok((fake.calls.get('getrawtransaction') ?? 0) >= before + 2, 'the transaction and its one previous transaction from the node');
    for (const tx of [viaEsplora, viaNode]) {
      // 15 000 in, 12 000 out: Bitcoin Core's `fee` in BTC
      assert.deepEqual([tx.fee, tx.fee_sats, tx.fee_unavailable], [0.00003, 3000, null]);
      // not a charm transaction, but in a recent block: its height is the index's (recent_txs)
      assert.deepEqual([tx.confirmations, tx.block_height, tx.block_hash], [1, 2, fake.hashAt(2)]);
      assert.deepEqual(tx.outputs[0].script_pubkey, {
        asm: '0 751e76e8199196d454941c45d1b3a323f1433bd6',
        hex: '0014751e76e8199196d454941c45d1b3a323f1433bd6',
        type: 'witness_v0_keyhash',
        address: scriptToAddress(p2wpkh, BITCOIN_NETWORKS.regtest),
      });
    }
    // the funding transaction's previous transaction is unknown everywhere; a coinbase pays no fee
    for (const get of [esplora, rpc]) {
      const f = await get(funding.txid);
      assert.deepEqual([f.fee, f.fee_sats], [null, null]);
      assert.equal(f.confirmations, 2);
      assert.match(f.fee_unavailable, /previous transaction e{64} is unknown/);
      const cb = await get(coinbase);
      assert.deepEqual([cb.fee, cb.fee_unavailable], [null, 'coinbase: no fee']);
    }
  } finally {
    for (const s of services) await s.close();
    await fake.stop();
  }
});

test('wallet/transactions entries: the fee /wallet/tx gives, within a bound of upstream reads per request; found fees kept', async (t) => {
  if (!sharedOrSkip(t)) return;
  const s = await setup(t);
  if (!s) return;
  const { fake, port } = s;
  try {
    const order = bitcoinVectors().get('2efcde0d')!;
    const orderAddr = addrOf(order.raw, 0);
    // a block spending the order output: an "out" entry whose previous transaction the node has
    const spend = spendTx([{ txid: order.txid, vout: 0 }], {
      tag: 43,
      outputs: [{ value: 100n, script: fromHex('0014751e76e8199196d454941c45d1b3a323f1433bd6') }],
    });
    fake.mine([spend.bytes]);
    await s.svc.follower!.syncOnce();
    await s.svc.follower!.syncOnce();
    const paid = parseTx(order.raw).outputs[0]!.value - 100n;

    const reads = () => fake.requests.length + [...fake.calls.values()].reduce((a, b) => a + b, 0);
    const before = reads();
    const list = await h1(port, 'GET', `/v1/wallet/transactions/${orderAddr}`);
    assert.equal(list.status, 200);
    assert.ok(reads() - before <= MAX_FEE_READS_PER_REQUEST, `upstream reads of one request: ${reads() - before}`);
    const entries = json(list.body).transactions as Any[];
    const out = entries.find((x) => x.txid === spend.txid);
    assert.deepEqual([out.direction, out.fee, out.fee_unavailable], ['out', Number(paid), null], 'fee in sats, as amount');
    const inEntry = entries.find((x) => x.txid === order.txid);
    assert.equal(inEntry.fee, null);
    assert.match(inEntry.fee_unavailable, /previous transaction [0-9a-f]{64} is unknown/);
    // the same figure and reason as /wallet/tx
    for (const e of entries) {
      const one = json((await h1(port, 'GET', `/v1/wallet/tx/${e.txid}`)).body);
      assert.deepEqual([e.fee, e.fee_unavailable], [one.fee_sats, one.fee_unavailable], e.txid);
    }
    // the batch route gives the same entries; the spend's fee was kept (no new upstream read for it)
    const asked = fake.requests.filter((r) => r === `/esplora/tx/${spend.txid}`).length;
    const batch = json((await h1(port, 'POST', '/v1/wallet/transactions/batch', JSON.stringify({ addresses: [orderAddr] }))).body);
    assert.deepEqual(
      (batch.results[orderAddr].transactions as Any[]).map((x) => [x.txid, x.fee, x.fee_unavailable]),
      entries.map((x) => [x.txid, x.fee, x.fee_unavailable]),
    );
    assert.equal(fake.requests.filter((r) => r === `/esplora/tx/${spend.txid}`).length, asked);
  } finally {
    await s.close();
  }
});

test('wallet/transactions fees: at most MAX_FEE_READS_PER_REQUEST upstream reads per request; the rest on the next request', async (t) => {
  const e = await engines.engine('sqlite', t);
  if (!e) return;
  const store = await e.open(await e.newDb());
  try {
    const script = Uint8Array.from([0x51, 0x20, ...new Array(32).fill(7)]);
    const n = MAX_FEE_READS_PER_REQUEST + 10;
    const txid = (i: number) => i.toString(16).padStart(64, '0');
    await store.applyBlock({
      height: 1,
      hash: 'aa'.repeat(32),
      prevHash: '00'.repeat(32),
      time: 1,
      spellTxs: [],
      outputs: Array.from({ length: n }, (_, i) => ({
        txid: txid(i + 1),
        txIndex: i + 1,
        vout: 0,
        app: `t/${'11'.repeat(32)}/${'22'.repeat(32)}`,
        amount: 5n,
        data: null,
        script,
        sats: 1000n,
      })),
      inputs: [],
    });
    const asked: string[] = [];
    // an Esplora-like BTC source: one read per fee
    const btc = {
      name: 'counting',
      kind: 'esplora',
      txFee: async (id: string) => (asked.push(id), BigInt(Number.parseInt(id.slice(-4), 16))),
    } as unknown as BtcSource;
    // behind an answer cache whose state never moves: only complete answers may be kept
    const handler = cachedAnswers(explorerApiHandler({ store, btc, network: 'regtest' }), { state: () => 'one', cacheable: () => true, maxBytes: 1 << 20 });
    const list = async () => {
      const res = await handler({
        method: 'GET',
        path: `/v1/wallet/transactions/${scriptToAddress(script, BITCOIN_NETWORKS.regtest)}`,
        query: new URLSearchParams({ page_size: '100' }),
        headers: {},
        body: async () => new Uint8Array(),
      });
      assert.equal(res.status, 200);
      return { res, entries: JSON.parse(Buffer.from(res.body!).toString()).transactions as Any[] };
    };
    const first = await list();
    assert.equal(first.entries.length, n);
    assert.equal(asked.length, MAX_FEE_READS_PER_REQUEST, 'the bound of one request');
    const left = first.entries.filter((x) => x.fee === null);
    assert.equal(left.length, 10);
    for (const x of left) assert.match(x.fee_unavailable, /bound of \d+ upstream reads for fees is spent/);
    for (const x of first.entries.filter((y) => y.fee !== null)) assert.deepEqual([x.fee, x.fee_unavailable], [Number.parseInt(x.txid.slice(-4), 16), null]);
    // the next request reads only the fees still missing
    const second = await list();
    assert.equal(asked.length, n);
    assert.equal(new Set(asked).size, n, 'no fee read twice');
    assert.ok(second.entries.every((x) => x.fee === Number.parseInt(x.txid.slice(-4), 16) && x.fee_unavailable === null));
    // the complete answer is kept: no read, the same bytes
    const third = await list();
    assert.equal(asked.length, n);
    assert.equal(Buffer.from(third.res.body!).toString(), Buffer.from(second.res.body!).toString());
  } finally {
    await store.close();
  }
});

for (const name of ENGINES) {
  test(`${name}: balance/batch entries are the kept GET /wallet/balance answers: read once per address and index state`, async (t) => {
    const e = await engines.engine(name, t);
    if (!e) return;
    const store = await e.open(await e.newDb());
    // the wallet read and the reference-NFT lookups of the explorer API, counted
    const reads = { unspentForWallet: 0, nftData: 0 };
    const counted = countedStore(store, reads);
    const svc = await startIndexService({ store: counted, ...TEST_INDEX_SERVICE, apiOnly: true });
    // the same index, every answer computed (no answer cache, no batch through it)
    const plain = explorerApiHandler({ store, network: 'regtest' });
    try {
      const script = (n: number) => Uint8Array.from([0x51, 0x20, ...new Array(32).fill(n)]);
      const alice = scriptToAddress(script(1), BITCOIN_NETWORKS.regtest)!;
      const bob = scriptToAddress(script(2), BITCOIN_NETWORKS.regtest)!;
      const token = `t/${'11'.repeat(32)}/${'22'.repeat(32)}`;
      const out = (txid: string, s: Uint8Array, app: string, amount: bigint | null, data: Uint8Array | null) => ({
        txid,
        txIndex: 1,
        vout: 0,
        app,
        amount,
        data,
        script: s,
        sats: 1000n,
      });
      await store.applyBlock({
        height: 1,
        hash: 'aa'.repeat(32),
        prevHash: '00'.repeat(32),
        time: 1,
        spellTxs: [],
        outputs: [out('01'.repeat(32), script(1), token, 5n, null), out('02'.repeat(32), script(2), token, 7n, null)],
        inputs: [],
      });
      const body = JSON.stringify({ addresses: [alice, bob, alice], network: 'regtest' });
      const batch = async () => {
        const r = await h1(svc.server.port, 'POST', '/v1/wallet/balance/batch', body, { 'content-type': 'application/json' });
        assert.equal(r.status, 200, r.body.toString());
        return r.body.toString();
      };
      /** The batch as computed without the answer cache: the same bytes. */
      const computed = async () =>
        Buffer.from(
          (await plain({ method: 'POST', path: '/v1/wallet/balance/batch', query: new URLSearchParams(), headers: {}, body: async () => Buffer.from(body) }))
            .body!,
        ).toString();

      const first = await batch();
      assert.equal(first, await computed(), 'the batch of kept entries is the computed batch, byte for byte');
      assert.deepEqual(Object.keys(json(Buffer.from(first)).results), [alice, bob], 'a repeated address keeps its first place');
      const get = await h1(svc.server.port, 'GET', `/v1/wallet/balance/${alice}`);
      assert.ok(first.startsWith(`{"results":{${JSON.stringify(alice)}:${get.body.toString()},`), 'an entry is the GET answer');
      assert.deepEqual(reads, { unspentForWallet: 2, nftData: 1 }, 'one read per address, one metadata lookup per app');
      assert.equal(await batch(), first);
      assert.deepEqual(reads, { unspentForWallet: 2, nftData: 1 }, 'the second batch is made of kept answers');
      assert.equal((await h1(svc.server.port, 'GET', `/v1/wallet/charms/${bob}`)).status, 200);
      assert.deepEqual(reads, { unspentForWallet: 3, nftData: 1 }, "another answer's metadata is the one kept for this state");

      // a block: the kept entries and metadata are dropped; the token gets its reference NFT (CHIP-0420 ticker)
      await store.applyBlock({
        height: 2,
        hash: 'bb'.repeat(32),
        prevHash: 'aa'.repeat(32),
        time: 2,
        spellTxs: [],
        outputs: [out('03'.repeat(32), script(2), `n/${'11'.repeat(32)}/${'22'.repeat(32)}`, null, encodeCbor(ValueMap.of({ ticker: 'TOK' })))],
        inputs: [{ txid: '03'.repeat(32), txIndex: 1, vin: 0, prevTxid: '01'.repeat(32), prevVout: 0 }],
      });
      const second = await batch();
      assert.equal(second, await computed(), 'after the block: the computed bytes again');
      const r = json(Buffer.from(second)).results;
      assert.deepEqual(r[alice].charms.balances, [], "alice's output is spent");
      assert.deepEqual(
        r[bob].charms.balances.map((b: Any) => [b.appId, b.ticker, b.confirmed]),
        [
          [`n/${'11'.repeat(32)}/${'22'.repeat(32)}`, 'TOK', 1],
          [token, 'TOK', 7],
        ],
        'the new reference NFT names the token at once',
      );
      assert.deepEqual(reads, { unspentForWallet: 5, nftData: 2 }, 'read again in the new state');
      await batch();
      assert.equal(reads.unspentForWallet, 5);
    } finally {
      await svc.close();
    }
  });
}

test('kept metadata is bounded: large CHIP-0420 strings drop what is kept, answers stay the same', async (t) => {
  const e = await engines.engine('sqlite', t);
  if (!e) return;
  const store = await e.open(await e.newDb());
  try {
    const reads = { nftData: 0 };
    const counted = countedStore(store, reads);
    const script = Uint8Array.from([0x51, 0x20, ...new Array(32).fill(5)]);
    const image = `data:image/png;base64,${'A'.repeat(250 * 1024)}`; // within MAX_META_STRING, written 3 times per app
    const apps = Array.from({ length: 12 }, (_, i) => `n/${i.toString(16).padStart(64, '0')}/${'22'.repeat(32)}`);
    await store.applyBlock({
      height: 1,
      hash: 'aa'.repeat(32),
      prevHash: '00'.repeat(32),
      time: 1,
      spellTxs: [],
      outputs: apps.map((app, i) => ({
        txid: (i + 1).toString(16).padStart(64, '0'),
        txIndex: i + 1,
        vout: 0,
        app,
        amount: null,
        data: encodeCbor(ValueMap.of({ ticker: `T${i}`, image })),
        script,
        sats: 546n,
      })),
      inputs: [],
    });
    const handler = explorerApiHandler({ store: counted, network: 'regtest' });
    const charms = async () => {
      const res = await handler({
        method: 'GET',
        path: `/v1/wallet/charms/${scriptToAddress(script, BITCOIN_NETWORKS.regtest)}`,
        query: new URLSearchParams(),
        headers: {},
        body: async () => new Uint8Array(),
      });
      assert.equal(res.status, 200);
      return String(res.body);
    };
    const first = await charms();
    assert.equal(reads.nftData, 12, 'one lookup per app');
    assert.equal(json(Buffer.from(first)).balances.length, 12);
    // 12 apps of ~750 K characters each are past the bound: the next request keeps them anew
    assert.equal(await charms(), first);
    assert.equal(reads.nftData, 24, 'what was kept past the bound was dropped');
  } finally {
    await store.close();
  }
});

test('every batch endpoint: 50 addresses answer, 51 or an invalid one are a 400 naming why; a body past the byte limit is a 413', async (t) => {
  if (!sharedOrSkip(t)) return;
  const e = engines.sqlite();
  const chain = vectorChain();
  const svc = await startIndexService({ store: await e.open(await e.newDb()), source: chain, ...TEST_INDEX_SERVICE });
  try {
    await svc.follower!.syncOnce();
    const addr = scriptToAddress(SCRIPT, BITCOIN_NETWORKS.regtest)!;
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
