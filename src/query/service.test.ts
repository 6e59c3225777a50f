import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readdirSync } from 'node:fs';
import { startQueryServer } from './service.js';
import { BitcoinRpcSource, EsploraSource } from './sources.js';
import { spellQueryValue } from './shape.js';
import { extractAndVerifySpell } from '../verify/index.js';
import { toJsonCompact, toJsonPretty, parseJson } from '../codec/json.js';
import { readSharedJson, readSharedText, sharedOrSkip, sharedPath } from '../testing/shared.js';
import { h1 } from '../testing/http.js';

/** A loopback fixture playing an Esplora API (and counting calls). */
async function esploraFixture(txs: Map<string, string>, delayMs = 0) {
  let calls = 0;
  const server = http.createServer((req, res) => {
    calls++;
    const m = /^\/tx\/([0-9a-f]{64})\/hex$/.exec(req.url ?? '');
    setTimeout(() => {
      const hex = m ? txs.get(m[1]!) : undefined;
      if (!hex) {
        res.writeHead(404).end('Transaction not found');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end(hex);
    }, delayMs);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}`, calls: () => calls, close: () => new Promise<void>((r) => server.close(() => r())) };
}

function chainTxs(): Map<string, string> {
  const m = new Map<string, string>();
  for (const f of readdirSync(sharedPath('vectors', 'chain')).filter((f) => f.endsWith('.bitcoin.hex') && !f.startsWith('neg')))
    m.set(f.slice(0, 64), readSharedText('vectors', 'chain', f).trim());
  return m;
}

test('spell shape matches the former service (legacy vectors)', (t) => {
  if (!sharedOrSkip(t)) return;
  const v12 = readSharedJson('vectors', 'bitcoin-v12-spell-tx-decoded.json');
  const legacy = readSharedJson('vectors', 'spell-query-legacy-shape.json');
  assert.equal(toJsonCompact(spellQueryValue(extractAndVerifySpell({ bitcoin: v12.tx_hex }, false))), legacy.response_json_text);
  for (const id of ['1acee7fb7c922b205e7c63abffe39a53527d4d7bbb0e5327a9b72350115a7ebb', '9c048eca509e609f81a5024930f1e793b3ab82ce953b025e0d4d0a0c342a5b1a']) {
    const hex = readSharedText('vectors', 'chain', `${id}.bitcoin.hex`).trim();
    const expected = readSharedText('vectors', 'chain', `${id}.expected-spell.json`);
    assert.deepEqual(JSON.parse(toJsonPretty(spellQueryValue(extractAndVerifySpell({ bitcoin: hex }, false)))), JSON.parse(expected));
  }
});

test('GET and PUT: shapes and status codes, cache headers, one upstream call for 500 concurrent GETs', async (t) => {
  if (!sharedOrSkip(t)) return;
  const txs = chainTxs();
  const fx = await esploraFixture(txs, 30);
  const server = await startQueryServer({ host: '127.0.0.1', port: 0, source: new EsploraSource(fx.url) });
  try {
    const withSpell = '283559062cb6b651eb4a5f557ba4f67efa9aae55ba2278d4f10f35cbefaa84a5';
    const noSpell = '4125a400a51213b256b3b8087717e429712787d943e65f045063f4ea011bfe36';
    const r = await h1(server.port, 'GET', `/spells/${withSpell}`);
    assert.equal(r.status, 200);
    const body = parseJson(r.body.toString());
    assert.equal(toJsonCompact(body), readSharedJson('vectors', 'spell-query-legacy-shape.json').response_json_text);
    assert.match(String(r.headers['cache-control']), /max-age/);
    const etag = String(r.headers.etag);
    assert.equal((await h1(server.port, 'GET', `/spells/${withSpell}`, undefined, { 'if-none-match': etag })).status, 304);
    assert.equal((await h1(server.port, 'GET', `/spells/${noSpell}`)).status, 204);
    assert.equal((await h1(server.port, 'GET', `/spells/${'0'.repeat(64)}`)).status, 404);
    const badId = await h1(server.port, 'GET', '/spells/xyz');
    assert.equal(badId.status, 400);
    assert.equal(JSON.parse(badId.body.toString()).code, 'INVALID_INPUT');
    // PUT: the txid must match; bad hex; bad body; no spell
    const hex = txs.get(withSpell)!;
    const put = await h1(server.port, 'PUT', `/spells/${withSpell}`, JSON.stringify({ tx_hex: hex }), { 'content-type': 'application/json' });
    assert.equal(put.status, 200);
    assert.equal(toJsonCompact(parseJson(put.body.toString())), toJsonCompact(body));
    assert.equal((await h1(server.port, 'PUT', `/spells/${noSpell}`, JSON.stringify({ tx_hex: hex }))).status, 400);
    assert.equal((await h1(server.port, 'PUT', `/spells/${withSpell}`, JSON.stringify({ tx_hex: 'zz' }))).status, 400);
    assert.equal((await h1(server.port, 'PUT', `/spells/${withSpell}`, 'not json')).status, 400);
    assert.equal((await h1(server.port, 'PUT', `/spells/${noSpell}`, JSON.stringify({ tx_hex: txs.get(noSpell) }))).status, 204);
    // 500 concurrent GETs of one uncached txid → one upstream call
    const fresh = '7269cf1b2bc9e513440224ebebabcbd3a4a544d0adb6c5d8ca302953958bc4af';
    const before = fx.calls();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    const statuses = await Promise.all(
      Array.from({ length: 500 }, () => new Promise<number>((resolve, reject) => {
        http.get({ host: '127.0.0.1', port: server.port, path: `/spells/${fresh}`, agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        }).on('error', reject);
      })),
    );
    agent.destroy();
    assert.ok(statuses.every((s) => s === 200));
    assert.equal(fx.calls() - before, 1);
  } finally {
    await server.close();
    await fx.close();
  }
});

test('source down: 503 when unreachable, 502 when it fails; no source configured: 503', async () => {
  const down = await startQueryServer({ host: '127.0.0.1', port: 0, source: new EsploraSource('http://127.0.0.1:1') });
  const failing = http.createServer((_q, s) => s.writeHead(500).end('boom'));
  await new Promise<void>((r) => failing.listen(0, '127.0.0.1', r));
  const bad = await startQueryServer({ host: '127.0.0.1', port: 0, source: new EsploraSource(`http://127.0.0.1:${(failing.address() as { port: number }).port}`) });
  const none = await startQueryServer({ host: '127.0.0.1', port: 0 });
  try {
    const id = 'ab'.repeat(32);
    const r1 = await h1(down.port, 'GET', `/spells/${id}`);
    assert.equal(r1.status, 503);
    assert.equal(JSON.parse(r1.body.toString()).code, 'UPSTREAM_UNAVAILABLE');
    assert.equal((await h1(bad.port, 'GET', `/spells/${id}`)).status, 502);
    assert.equal((await h1(none.port, 'GET', `/spells/${id}`)).status, 503);
    assert.match((await h1(none.port, 'GET', '/')).body.toString(), /Charms wallet view/);
  } finally {
    await down.close();
    await bad.close();
    await none.close();
    failing.close();
  }
});

test('Bitcoin Core JSON-RPC source: getrawtransaction, -5 → 404, basic auth', async (t) => {
  if (!sharedOrSkip(t)) return;
  const txs = chainTxs();
  let auth = '';
  const rpc = http.createServer((req, res) => {
    auth = String(req.headers.authorization);
    let b = '';
    req.on('data', (c) => (b += c));
    req.on('end', () => {
      const { params } = JSON.parse(b);
      const hex = txs.get(params[0]);
      res.writeHead(hex ? 200 : 500, { 'content-type': 'application/json' });
      res.end(JSON.stringify(hex ? { result: hex, error: null } : { result: null, error: { code: -5, message: 'No such mempool or blockchain transaction' } }));
    });
  });
  await new Promise<void>((r) => rpc.listen(0, '127.0.0.1', r));
  const src = new BitcoinRpcSource(`http://127.0.0.1:${(rpc.address() as { port: number }).port}`, () => 'user:pass');
  const server = await startQueryServer({ host: '127.0.0.1', port: 0, source: src });
  try {
    assert.equal((await h1(server.port, 'GET', '/spells/283559062cb6b651eb4a5f557ba4f67efa9aae55ba2278d4f10f35cbefaa84a5')).status, 200);
    assert.equal(auth, `Basic ${Buffer.from('user:pass').toString('base64')}`);
    assert.equal((await h1(server.port, 'GET', `/spells/${'cd'.repeat(32)}`)).status, 404);
  } finally {
    await server.close();
    rpc.close();
  }
});
