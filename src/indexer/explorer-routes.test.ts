import { BITCOIN_NETWORKS } from '../model/network.js';
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { scriptToAddress } from '../bitcoin/address.js';
import { blockTxRaw } from '../bitcoin/block.js';
import { parseTx } from '../bitcoin/tx.js';
import { txidToDisplay, appToString, appFromString } from '../model/primitives.js';
import { extractAndVerifySpell } from '../verify/index.js';
import { ENGINES, TestEngines, type TestEngine } from '../testing/index-stores.js';
import { sharedOrSkip } from '../testing/shared.js';
import { h1 } from '../testing/http.js';
import { bitcoinVectors, burnTx, vectorChain } from '../testing/index-vectors.js';
import { txidOf, type MemoryChain } from '../testing/memory-chain.js';
import { TEST_INDEX_SERVICE } from '../testing/index-fake-node.js';
import { startIndexService, type IndexService } from './service.js';
import { LikeLimiter } from './explorer-routes.js';
import { txTags } from './dex.js';

const engines = new TestEngines();
after(() => engines.close());

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const json = (b: Buffer): Any => JSON.parse(b.toString('utf8'));

interface Expected {
  /** app → asset figures, from the chain alone */
  assets: Map<string, { type: string; firstHeight: number; firstTxid: string; supply: bigint; outputs: number; holders: Map<string, bigint> }>;
  /** spell txids, newest first */
  txs: string[];
  /** address → unspent charms [txid:vout app] */
  unspent: Map<string, string[]>;
  /** height → charm outputs (one per output and app) created in that block */
  outputsAt: Map<number, number>;
  /** spell txid → the explorer's tags and tx_type (dex.ts txTags; a beam-out's spender from the chain) */
  tagged: Map<string, { tags: string | null; txType: string }>;
}

const typeOf = (app: string) => (app.startsWith('t/') ? 'token' : app.startsWith('n/') ? 'nft' : 'dapp');

/**
 * The catalogue the chain's best chain implies, computed here without the index: every spell the
 * library verifies, its apps and output charms, and every input of every transaction spending them.
 */
async function expectedOf(chain: MemoryChain): Promise<Expected> {
  const assets: Expected['assets'] = new Map();
  const live = new Map<string, { app: string; amount: bigint; script: Uint8Array }[]>();
  const txs: string[] = [];
  const outputsAt = new Map<number, number>();
  const tagged: Expected['tagged'] = new Map();
  const beamOuts = new Set<string>();
  for (let h = 1; h <= chain.height; h++) {
    const block = await chain.block((await chain.hashAt(h))!);
    for (let i = 1; i < block.offsets.length - 1; i++) {
      const raw = blockTxRaw(block, i);
      const tx = parseTx(raw);
      const txid = txidOf(raw);
      for (const input of tx.inputs) live.delete(`${txidToDisplay(input.txid)}:${input.vout}`);
      let spell;
      try {
        spell = extractAndVerifySpell({ bitcoin: raw });
      } catch {
        continue;
      }
      txs.unshift(txid);
      tagged.set(
        txid,
        txTags(
          spell,
          tx.inputs.some((i) => beamOuts.has(txidToDisplay(i.txid))),
        ),
      );
      if (spell.tx.beamed_outs !== undefined) beamOuts.add(txid);
      const apps = spell.app_public_inputs.map(([a]) => appToString(a));
      for (const app of apps)
        if (!assets.has(app)) assets.set(app, { type: typeOf(app), firstHeight: h, firstTxid: txid, supply: 0n, outputs: 0, holders: new Map() });
      spell.tx.outs.forEach((charms, vout) => {
        if (spell.tx.beamed_outs?.has(vout) || !tx.outputs[vout]) return;
        const rows = [...charms.entries()].map(([k, data]) => ({
          app: apps[k]!,
          amount: apps[k]!.startsWith('t/') && typeof data === 'bigint' ? data : apps[k]!.startsWith('t/') && typeof data === 'number' ? BigInt(data) : 1n,
          script: tx.outputs[vout]!.script,
        }));
        for (const r of rows) assets.get(r.app)!.outputs++;
        outputsAt.set(h, (outputsAt.get(h) ?? 0) + rows.length);
        live.set(`${txid}:${vout}`, rows);
      });
    }
  }
  const unspent = new Map<string, string[]>();
  for (const [op, rows] of live)
    for (const r of rows) {
      const a = assets.get(r.app)!;
      a.supply += r.amount;
      const addr = scriptToAddress(r.script, BITCOIN_NETWORKS.regtest) ?? Buffer.from(r.script).toString('hex');
      a.holders.set(addr, (a.holders.get(addr) ?? 0n) + r.amount);
      unspent.set(addr, [...(unspent.get(addr) ?? []), `${op} ${r.app}`]);
    }
  return { assets, txs, unspent, outputsAt, tagged };
}

async function service(e: TestEngine, chain: MemoryChain, likes = false): Promise<IndexService> {
  const svc = await startIndexService({ store: await e.open(await e.newDb()), source: chain, ...TEST_INDEX_SERVICE, maxReorgDepth: 100, likes });
  await svc.follower!.syncOnce();
  await svc.follower!.syncOnce(); // the mempool refresh after a settled tip
  return svc;
}

/** Every explorer route's answer against `want` (field names and JSON types as the explorer's handlers give them). */
async function checkAgainst(port: number, want: Expected, where: string): Promise<void> {
  const get = async (path: string) => {
    const r = await h1(port, 'GET', path);
    assert.equal(r.status, 200, `${where}: ${path} → ${r.status} ${r.body.toString('utf8').slice(0, 200)}`);
    return json(r.body);
  };
  const byType = { token: 0, nft: 0, dapp: 0 };
  for (const a of want.assets.values()) byType[a.type as keyof typeof byType]++;
  const count = await get('/v1/assets/count?network=regtest');
  assert.deepEqual(count, { total: want.assets.size, ...byType }, `${where}: /assets/count`);

  // the whole catalogue, newest first then oldest first, in pages of 2, with its figures
  const newest = [...want.assets.entries()].sort(([a, x], [b, y]) => y.firstHeight - x.firstHeight || 0 * a.length * b.length);
  const seen: Any[] = [];
  for (let page = 1; ; page++) {
    const r = await get(`/v1/assets?page=${page}&limit=2&sort=newest&network=regtest`);
    assert.equal(r.pagination.total, want.assets.size);
    assert.equal(r.pagination.total_pages, Math.ceil(want.assets.size / 2));
    seen.push(...r.data.assets);
    if (r.data.assets.length < 2) break;
  }
  assert.equal(seen.length, want.assets.size, `${where}: every asset listed once`);
  assert.deepEqual(
    seen.map((a) => a.block_height),
    newest.map(([, a]) => a.firstHeight),
    `${where}: newest first`,
  );
  for (const item of seen) {
    const w = want.assets.get(item.app_id);
    assert.ok(w, `${where}: ${item.app_id} is an app of a verified spell`);
    assert.equal(item.asset_type, w.type);
    assert.equal(typeof item.id, 'string');
    assert.equal(typeof item.total_supply, 'number');
    assert.equal(BigInt(JSON.stringify(item.total_supply)), w.supply, `${where}: supply of ${item.app_id}`);
    assert.equal(typeof item.decimals, 'number');
    assert.equal(item.transaction_hash, w.firstTxid);
    assert.equal(item.network, 'regtest');
    for (const k of ['name', 'symbol', 'description', 'image_url', 'created_at', 'updated_at']) assert.ok(Object.hasOwn(item, k), `${where}: asset.${k}`);
    // one asset by app id (query and path) and by numeric id: the same item
    const one = await get(`/v1/assets?app_id=${encodeURIComponent(item.app_id)}&limit=1`);
    assert.deepEqual(one.data.assets[0], item);
    assert.deepEqual(await get(`/v1/assets/${encodeURIComponent(item.app_id)}`), item);
    assert.deepEqual(await get(`/v1/assets/${item.id}`), item);
    // holders
    const h = await get(`/v1/assets/${encodeURIComponent(item.app_id)}/holders`);
    assert.equal(h.total_holders, w.holders.size, `${where}: holders of ${item.app_id}`);
    assert.equal(BigInt(JSON.stringify(h.total_supply)), w.supply);
    const amounts = h.holders.map((x: Any) => BigInt(JSON.stringify(x.total_amount)));
    assert.deepEqual(
      amounts,
      [...w.holders.values()].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0)),
      `${where}: holders' amounts, largest first`,
    );
    // paged by the keyset cursor, one holder a page: the same list
    const byCursor: Any[] = [];
    let cursor: string | null = null;
    for (let i = 0; i <= w.holders.size; i++) {
      const p: Any = await get(`/v1/assets/${encodeURIComponent(item.app_id)}/holders?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      byCursor.push(...p.holders);
      cursor = p.next_cursor;
      if (cursor === null) break;
    }
    assert.deepEqual(byCursor, h.holders, `${where}: holders of ${item.app_id} by cursor`);
    for (const x of h.holders) {
      assert.equal(w.holders.get(x.address), BigInt(JSON.stringify(x.total_amount)));
      assert.equal(typeof x.percentage, 'number');
      assert.equal(typeof x.charm_count, 'number');
      assert.equal(typeof x.first_seen_block, 'number');
    }
  }
  const oldest = await get(`/v1/assets?limit=100&sort=oldest`);
  assert.deepEqual(
    oldest.data.assets.map((a: Any) => a.block_height),
    [...newest].reverse().map(([, a]) => a.firstHeight),
  );
  const tokens = await get('/v1/assets?asset_type=token&limit=100');
  assert.equal(tokens.data.assets.length, byType.token);
  assert.ok(tokens.data.assets.every((a: Any) => a.asset_type === 'token'));

  // charms: counts, the list (every charm output row), per address unspent
  const outputs = [...want.assets.values()].reduce((n, a) => n + a.outputs, 0);
  assert.deepEqual(await get('/v1/charms/count-by-type'), { total: outputs, ...byType });
  assert.deepEqual(await get('/v1/charms/count'), { count: outputs });
  const list = await get('/v1/charms?limit=100');
  assert.equal(list.data.charms.length, outputs);
  assert.equal(list.pagination.total, outputs);
  for (const c of list.data.charms) {
    assert.equal(typeof c.amount, 'number');
    assert.equal(c.likes_count, 0);
    assert.equal(c.user_liked, false);
    assert.equal(c.verified, true);
    assert.ok(c.data.native_data.tx, `${where}: charm data carries the spell`);
    const w = want.tagged.get(c.txid)!;
    assert.equal(c.tags, w.tags ?? undefined, `${where}: tags of charm ${c.txid}`);
    assert.equal(c.tx_type, w.txType, `${where}: tx_type of charm ${c.txid}`);
  }
  const heights = list.data.charms.map((c: Any) => c.block_height);
  assert.deepEqual(
    heights,
    [...heights].sort((a, b) => b - a),
    'charms newest first',
  );
  for (const [addr, ops] of want.unspent) {
    if (addr.length > 90) continue; // a script without an address
    const r = await get(`/v1/charms/by-address/${addr}`);
    assert.deepEqual(r.charms.map((c: Any) => `${c.txid}:${c.vout} ${c.charmid}`).sort(), [...ops].sort(), `${where}: charms of ${addr}`);
  }
  for (const app of want.assets.keys()) {
    if (want.assets.get(app)!.outputs === 0) continue;
    assert.equal((await get(`/v1/charms/by-charmid/${encodeURIComponent(app)}`)).charmid, app);
  }

  // transactions, newest first, paged
  const t1 = await get('/v1/transactions?page=1&limit=3&network=regtest');
  assert.equal(t1.pagination.total, want.txs.length);
  const all: string[] = [];
  for (let page = 1; page <= Math.ceil(want.txs.length / 3); page++)
    all.push(...(await get(`/v1/transactions?page=${page}&limit=3`)).data.transactions.map((x: Any) => x.txid));
  assert.deepEqual(all, want.txs, `${where}: transactions newest first`);
  for (const x of t1.data.transactions) {
    assert.equal(x.status, 'confirmed');
    assert.equal(typeof x.confirmations, 'number');
    assert.equal(typeof x.block_height, 'number');
    assert.ok(x.charm.native_data.app_public_inputs);
  }
  for (let page = 1; page <= Math.ceil(want.txs.length / 3); page++)
    for (const x of (await get(`/v1/transactions?page=${page}&limit=3`)).data.transactions) {
      const w = want.tagged.get(x.txid)!;
      assert.equal(x.tags, w.tags ?? undefined, `${where}: tags of ${x.txid}`);
      assert.equal(x.tx_type, w.txType, `${where}: tx_type of ${x.txid}`);
    }
  // the chain's Cast ask of $BRO carries the explorer's tags
  assert.ok([...want.tagged.values()].some((t) => t.tags === 'charms-cast,create-ask,bro,bro-mint' && t.txType === 'dex_create_ask'));
  const c0 = await get(`/v1/charms/${want.txs[0]}`);
  assert.equal(c0.txid, want.txs[0]);
  assert.deepEqual(c0.spell, c0.data);
}

for (const name of ENGINES) {
  test(`${name}: the explorer's routes answer the chain's catalogue, charms and transactions, after a rollback and with the mempool`, async (t) => {
    if (!sharedOrSkip(t)) return;
    const e = await engines.engine(name, t);
    if (!e) return;
    const v = bitcoinVectors();
    const chain = vectorChain(v, ['9c048eca']);
    const nftTx = v.get('1acee7fb')!;
    chain.mine([burnTx(nftTx.txid, 0, 3)]);
    const svc = await service(e, chain);
    const port = svc.server.port;
    try {
      await checkAgainst(port, await expectedOf(chain), 'synced');

      // another network: empty lists, 404 for items; likes refused
      const other = json((await h1(port, 'GET', '/v1/assets?network=mainnet&asset_type=token')).body);
      assert.deepEqual(other.data.assets, []);
      assert.equal(other.pagination.total, 0);
      assert.deepEqual(json((await h1(port, 'GET', '/v1/assets/count?network=mainnet')).body), { total: 0, nft: 0, token: 0, dapp: 0 });
      assert.equal((await h1(port, 'GET', '/v1/assets/1?network=mainnet')).status, 404);
      assert.deepEqual(json((await h1(port, 'GET', '/v1/charms/by-address/bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq')).body), { charms: [] });
      const liked = await h1(port, 'POST', '/v1/charms/like', JSON.stringify({ charm_id: 'x', user_id: 1 }));
      assert.equal(liked.status, 400);
      assert.equal(json(liked.body).code, 'UNSUPPORTED');
      assert.equal((await h1(port, 'GET', '/v1/assets?sort=sideways')).status, 400);
      assert.equal((await h1(port, 'GET', '/v1/assets?limit=101')).status, 400);
      assert.equal((await h1(port, 'GET', '/v1/assets/t%2Fzz/holders')).status, 400);
      const someApp = encodeURIComponent([...(await expectedOf(chain)).assets.keys()][0]!);
      assert.equal((await h1(port, 'GET', `/v1/assets/${someApp}/holders?limit=1000`)).status, 200);
      assert.equal((await h1(port, 'GET', `/v1/assets/${someApp}/holders?limit=1001`)).status, 400);
      assert.equal((await h1(port, 'GET', `/v1/assets/${someApp}/holders?cursor=zz`)).status, 400);

      // status: the explorer's per-network shape beside ours
      const st = json((await h1(port, 'GET', '/v1/status')).body);
      const n = st.networks.regtest;
      const want = await expectedOf(chain);
      // charms (outputs) per type, summing to total_charms, and per block: what the status page shows beside "Total Charms"
      const outputsOf = (t: string) => [...want.assets.values()].filter((a) => a.type === t).reduce((k, a) => k + a.outputs, 0);
      assert.deepEqual(
        n.charm_stats.charms_by_asset_type,
        ['nft', 'token', 'dapp'].map((t) => ({ asset_type: t, count: outputsOf(t) })),
      );
      assert.equal(
        n.charm_stats.charms_by_asset_type.reduce((k: number, x: Any) => k + x.count, 0),
        n.charm_stats.total_charms,
      );
      for (const b of n.recent_blocks) assert.equal(b.charm_count, want.outputsAt.get(b.height) ?? 0, `charms created in block ${b.height}`);
      assert.equal(n.indexer_status.last_processed_block, chain.height);
      assert.equal(n.bitcoin_node.block_count, chain.height);
      assert.equal(n.charm_stats.confirmed_transactions, (await expectedOf(chain)).txs.length);
      assert.equal(typeof n.charm_stats.confirmation_rate, 'number');
      assert.ok(Array.isArray(n.recent_blocks) && n.recent_blocks[0].height === chain.height);
      assert.equal(st.lag_blocks, 0, 'our own fields stay');

      // a rollback of the three top blocks (new apps among them), replaced by four empty ones: the catalogue follows
      chain.reorg(3, [[], [], [], []]);
      await svc.follower!.syncOnce();
      await checkAgainst(port, await expectedOf(chain), 'after a rollback');

      // the mempool: a pending charm transaction listed first, its outputs among the address's charms
      const pending = v.get('9c048eca')!;
      chain.mempoolAdd(pending.raw);
      await svc.follower!.syncOnce();
      const txs = json((await h1(port, 'GET', '/v1/transactions?limit=1')).body);
      assert.equal(txs.data.transactions[0].txid, pending.txid);
      assert.equal(txs.data.transactions[0].status, 'pending');
      assert.equal(txs.data.transactions[0].block_height, null);
      const out0 = parseTx(pending.raw).outputs[0]!;
      const addr = scriptToAddress(out0.script, BITCOIN_NETWORKS.regtest)!;
      const mine = json((await h1(port, 'GET', `/v1/charms/by-address/${addr}`)).body).charms;
      assert.ok(mine.some((c: Any) => c.txid === pending.txid && c.block_height === null));
      assert.equal(json((await h1(port, 'GET', `/v1/charms/${pending.txid}`)).body).txid, pending.txid);
    } finally {
      await svc.close();
    }
  });
}

for (const name of ENGINES) {
  test(`${name}: --likes: one like per user and charm, taken by the writer, counted in the charm answers`, async (t) => {
    if (!sharedOrSkip(t)) return;
    const e = await engines.engine(name, t);
    if (!e) return;
    const chain = vectorChain(bitcoinVectors(), ['9c048eca']);
    const want = await expectedOf(chain);
    const app = [...want.assets.entries()].find(([, a]) => a.outputs > 0)![0];
    const svc = await service(e, chain, true);
    const port = svc.server.port;
    const like = async (method: string, body: unknown) => {
      const text = JSON.stringify(body);
      // node sends a DELETE's body without a length unless told
      const r = await h1(port, method, '/v1/charms/like', text, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
      return { status: r.status, body: json(r.body) };
    };
    const counted = async (user: string) => {
      const list = json((await h1(port, 'GET', `/v1/charms?limit=100&user_id=${user}`)).body).data.charms;
      return list.map((c: Any) => [c.charmid === app, c.likes_count, c.user_liked]);
    };
    try {
      // asked (and kept by the answer cache) before any like: a like moves what it answers
      for (const [, n, liked] of await counted('alice')) assert.deepEqual([n, liked], [0, false]);
      assert.deepEqual((await like('POST', { charm_id: app, user_id: 1 })).body, { success: true, message: 'Like added successfully', likes_count: 1 });
      assert.equal((await like('POST', { charm_id: app, user_id: 1 })).body.likes_count, 1, 'one per user and charm');
      assert.equal((await like('POST', { charm_id: app, user_id: 'alice' })).body.likes_count, 2);
      for (const [mine, n, liked] of await counted('alice')) assert.deepEqual([n, liked], mine ? [2, true] : [0, false]);
      for (const [mine, n, liked] of await counted('bob')) assert.deepEqual([n, liked], mine ? [2, false] : [0, false]);
      assert.equal(json((await h1(port, 'GET', `/v1/charms/by-charmid/${encodeURIComponent(app)}?user_id=alice`)).body).likes_count, 2);
      const del = await like('DELETE', { charm_id: app, user_id: 1 });
      assert.equal(del.body.likes_count, 1, JSON.stringify(del));
      for (const [mine, n, liked] of await counted('alice')) assert.deepEqual([n, liked], mine ? [1, true] : [0, false]);
      assert.equal((await like('DELETE', { charm_id: app, user_id: 1 })).body.likes_count, 1);
      // bad input: an app the index does not have, an over-long or ill-typed user_id, no charm_id
      assert.equal((await like('POST', { charm_id: `t/${'00'.repeat(32)}/${'00'.repeat(32)}`, user_id: 1 })).status, 404);
      assert.equal((await like('POST', { charm_id: app, user_id: 'u'.repeat(65) })).status, 400);
      assert.equal((await like('POST', { charm_id: app, user_id: { x: 1 } })).status, 400);
      assert.equal((await like('POST', { user_id: 1 })).status, 400);
    } finally {
      await svc.close();
    }
  });
}

test('likes: at most 30 writes a minute per client address', () => {
  let now = 0;
  const l = new LikeLimiter(30, () => now);
  for (let i = 0; i < 30; i++) assert.equal(l.allow('a'), true);
  assert.equal(l.allow('a'), false);
  assert.equal(l.allow('b'), true, 'per client');
  now += 60_000;
  assert.equal(l.allow('a'), true, 'a new minute');
});

test("txTags: the explorer indexer's tags and tx_type of a spell", () => {
  const v = bitcoinVectors();
  const ask = extractAndVerifySpell({ bitcoin: v.get('2efcde0d')!.raw });
  // a Cast ask of $BRO (its order's asset.token is $BRO: one $BRO output)
  assert.deepEqual(txTags(ask, false), { tags: 'charms-cast,create-ask,bro,bro-mint', txType: 'dex_create_ask' });
  // a spell's charms spending a beam-out's output: the block path's ADA→BTC claim
  assert.deepEqual(txTags(ask, true), { tags: 'beaming,beam-in,charms-cast,create-ask,bro', txType: 'beam_in' });
  const tok = (identity: string) => appFromString(`t/${identity}/${'22'.repeat(32)}`);
  const bro = '3d7fe7e4cea6121947af73d70e5119bebd8aa5b7edfe74bfaf6e779a1847bd9b';
  const plain = (apps: ReturnType<typeof tok>[], outs: Map<number, bigint>[]) => ({
    version: 15,
    tx: { outs },
    app_public_inputs: apps.map((a) => [a, null] as [typeof a, null]),
    versioned_apps: [],
    mock: false,
  });
  assert.deepEqual(txTags(plain([tok('11'.repeat(32))], [new Map([[0, 5n]])]), false), { tags: null, txType: 'spell' });
  assert.deepEqual(txTags(plain([tok(bro)], [new Map([[0, 5n]])]), false), { tags: 'bro,bro-mint', txType: 'bro_mint' });
  assert.deepEqual(txTags(plain([tok(bro)], [new Map([[0, 5n]]), new Map([[0, 1n]])]), false), { tags: 'bro,bro-transfer', txType: 'token_transfer' });
  // a bro transfer spending a beam-out: bro-mint/-transfer dropped
  assert.deepEqual(txTags(plain([tok(bro)], [new Map([[0, 5n]])]), true), { tags: 'beaming,beam-in,bro', txType: 'beam_in' });
  const out = plain([tok(bro)], [new Map([[0, 5n]])]);
  assert.deepEqual(txTags({ ...out, tx: { ...out.tx, beamed_outs: new Map([[0, new Uint8Array(32)]]) } }, true), {
    tags: 'beaming,beam-out,bro,bro-mint',
    txType: 'beam_out',
  });
  const contract = appFromString(`c/${'33'.repeat(32)}/${'44'.repeat(32)}`);
  assert.deepEqual(txTags(plain([contract, tok('0796f63ed48144b4ec69fb794fbc2290ae63acf945fb035d5474648b50ee43b6')], [new Map([[1, 5n]])]), false), {
    tags: 'beaming,beam-in,ebtc',
    txType: 'beam_in',
  });
});
