import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Req } from '../infra/http.js';
import { silentLogger } from '../infra/log.js';
import { cachePolicy } from './routes.js';
import { V1_ROUTES, v1Handler, type V1Context } from './v1-routes.js';

const req = (method: string, path: string): Req => ({ method, path, query: new URLSearchParams(), headers: {}, body: async () => new Uint8Array() });

test('the /v1 table: the cache policies the answer cache reads', () => {
  const a = 'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080';
  const txid = 'ab'.repeat(32);
  const want: [string, string][] = [
    ['/v1/status', 'none'],
    [`/v1/addresses/${a}/balances`, 'state'],
    [`/v1/outputs/${txid}:0`, 'state'],
    [`/v1/txs/${txid}`, 'state'],
    ['/v1/apps/t%2Fab%2Fcd', 'state'],
    [`/v1/wallet/balance/${a}`, 'state-unless-btc-utxos'],
    [`/v1/wallet/charms/${a}`, 'state'],
    [`/v1/wallet/transactions/${a}`, 'state'],
    [`/v1/wallet/utxos/${a}`, 'none'],
    ['/v1/wallet/tip', 'none'],
    [`/v1/wallet/tx/${txid}`, 'none'],
    [`/v1/wallet/tx/${txid}/with-proof`, 'none'],
    [`/v1/tx/${txid}/outspend/0`, 'none'],
    [`/v1/transactions/${txid}`, 'state'],
    ['/v1/transactions', 'state'],
    ['/v1/assets/reference-nft/ab', 'state'],
    ['/v1/assets', 'state'],
    ['/v1/assets/t%2Fab%2Fcd/holders', 'state'],
    ['/v1/dex/orders/open', 'state'],
    ['/v1/nothing', 'none'],
  ];
  for (const [path, policy] of want) assert.equal(cachePolicy(V1_ROUTES, path), policy, path);
});

test('the /v1 table: 404 for a path no route has, 405 (with the body expected) for another method', async () => {
  // no route reads the context for these answers
  const h = v1Handler({} as V1Context, { network: 'regtest', log: silentLogger });
  const none = await h(req('GET', '/v1/nothing'));
  assert.equal(none.status, 404);
  assert.equal(JSON.parse(String(none.body)).code, 'NOT_FOUND');
  for (const [method, path, hint] of [
    ['GET', '/v1/wallet/balance/batch', '"addresses"'],
    ['GET', '/v1/addresses/balances', '"addresses"'],
    ['GET', '/v1/wallet/broadcast', '"raw_tx"'],
    ['PUT', '/v1/charms/like', 'POST, DELETE'],
    ['POST', '/v1/assets', 'GET'],
  ] as const) {
    const r = await h(req(method, path));
    assert.equal(r.status, 405, `${method} ${path}`);
    const body = JSON.parse(String(r.body));
    assert.equal(body.code, 'METHOD_NOT_ALLOWED');
    assert.ok(body.error.includes(hint), body.error);
    assert.equal(r.headers['cache-control'], 'no-store');
  }
});

test('the /v1 table: every route documented once, each a /v1 path', () => {
  const seen = new Set<string>();
  for (const r of V1_ROUTES) {
    assert.ok(r.doc.startsWith('/v1/'), r.doc);
    const key = `${r.method} ${r.doc}`;
    assert.ok(!seen.has(key), key);
    seen.add(key);
  }
});

test('docs/index.md lists every /v1 route of the table', () => {
  const docs = readFileSync(new URL('../../docs/index.md', import.meta.url), 'utf8');
  for (const r of V1_ROUTES)
    for (const path of r.doc.split(', ').filter((p) => p.startsWith('/v1/'))) {
      const listed = ['`', '[', '?'].some((end) => docs.includes(`${path}${end}`));
      assert.ok(listed, `docs/index.md lists ${r.method} ${path}`);
    }
});
