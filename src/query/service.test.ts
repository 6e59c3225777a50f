import { hasRedisServer, skipOrFail } from '../testing/require.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answerFor, startQueryServer } from './service.js';
import { identifyTx as identify } from '../chains/detect.js';
import { EsploraSource, NodeSource, sourceFromConfig } from '../sources/tx-sources.js';
import { RpcNode } from '../sources/bitcoin-node.js';

const identifyTx = (b: Uint8Array) => identify(b, 'tx_hex', 'INVALID_TX');
import { loadSettings, type Env } from '../settings/settings.js';
import { appRef, spellQueryJson, spellQueryValue } from './shape.js';
import { extractAndVerifySpell } from '../verify/index.js';
import { toJsonCompact, toJsonPretty, parseJson } from '../codec/json.js';
import { ValueMap } from '../codec/value.js';
import { appFromString, utxoIdFromString } from '../model/primitives.js';
import type { NormalizedSpell } from '../model/spell.js';
import { readSharedJson, readSharedText, sharedOrSkip, sharedPath } from '../testing/shared.js';
import { h1, h2 } from '../testing/http.js';
import { waitFor } from '../testing/wait.js';
import { CharmsError } from '../errors.js';
import { createLogger } from '../infra/log.js';

const sourceOfEnv = (env: Env) => sourceFromConfig(loadSettings(env).querySource);

const V12 = '283559062cb6b651eb4a5f557ba4f67efa9aae55ba2278d4f10f35cbefaa84a5'; // BRO + b/ app, legacy vector
const NO_SPELL = '4125a400a51213b256b3b8087717e429712787d943e65f045063f4ea011bfe36'; // plain payment
const MOCK_SPELL = '74ea380c3e854ea591be665fab91b486c9d87e1178737960c3a2c00bcfefd16e'; // mock proof
const FRESH = '7269cf1b2bc9e513440224ebebabcbd3a4a544d0adb6c5d8ca302953958bc4af';
const CARDANO = '361927aed267ef049a5b9315aa7296493b385938d73340146b0af5d4637a02cf'; // beamed outs, content

const hexOf = (id: string, chain = 'bitcoin') => readSharedText('vectors', 'chain', `${id}.${chain}.hex`).trim();
const listen = (s: http.Server) => new Promise<number>((r) => s.listen(0, '127.0.0.1', () => r((s.address() as { port: number }).port)));
const closeServer = (s: http.Server) => new Promise<void>((r) => s.close(() => r()));

/** A loopback fixture playing an Esplora API, counting calls; `override` can answer instead. */
async function esploraFixture(txs: Map<string, string>, o: { delayMs?: number; override?: (id: string) => [number, string] | undefined } = {}) {
  let calls = 0;
  const server = http.createServer((req, res) => {
    calls++;
    const id = /^\/tx\/([0-9a-f]{64})\/hex$/.exec(req.url ?? '')?.[1];
    setTimeout(() => {
      const forced = id ? o.override?.(id) : undefined;
      if (forced) return void res.writeHead(forced[0]).end(forced[1]);
      const hex = id ? txs.get(id) : undefined;
      if (!hex) return void res.writeHead(404).end('Transaction not found');
      res.writeHead(200, { 'content-type': 'text/plain' }).end(hex);
    }, o.delayMs ?? 0);
  });
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}`, calls: () => calls, close: () => closeServer(server) };
}

function chainTxs(): Map<string, string> {
  const m = new Map<string, string>();
  for (const f of readdirSync(sharedPath('vectors', 'chain')).filter((f) => f.endsWith('.bitcoin.hex') && !f.startsWith('neg')))
    m.set(f.slice(0, 64), readSharedText('vectors', 'chain', f).trim());
  return m;
}

test('shape: the legacy V12 response, the published responses, public_args, beam_to, content', (t) => {
  if (!sharedOrSkip(t)) return;
  const v12 = readSharedJson('vectors', 'bitcoin-v12-spell-tx-decoded.json');
  const legacy = readSharedJson('vectors', 'spell-query-legacy-shape.json');
  const spell = extractAndVerifySpell({ bitcoin: v12.tx_hex }, false);
  assert.equal(spellQueryJson(spell), legacy.response_json_text);
  assert.equal(toJsonPretty(spellQueryValue(spell)), legacy.response_json_pretty);
  for (const id of ['1acee7fb7c922b205e7c63abffe39a53527d4d7bbb0e5327a9b72350115a7ebb', '9c048eca509e609f81a5024930f1e793b3ab82ce953b025e0d4d0a0c342a5b1a']) {
    const expected = readSharedText('vectors', 'chain', `${id}.expected-spell.json`);
    assert.deepEqual(JSON.parse(toJsonPretty(spellQueryValue(extractAndVerifySpell({ bitcoin: hexOf(id) }, false)))), JSON.parse(expected), id);
  }
  // a non-null public input (grail NFT deploy, v4): public_args; witness era: the commit spend is not in ins
  const grail = JSON.parse(
    spellQueryJson(extractAndVerifySpell({ bitcoin: hexOf('b84e628a14d6ddaf8e0532a6708dc282444fb21f4049ed40e92753d00e1f0deb') }, false)),
  );
  assert.deepEqual(grail.public_args, { $0000: { action: 'deploy' } });
  assert.deepEqual(Object.keys(grail), ['version', 'apps', 'public_args', 'ins', 'outs']);
  // beamed output (v9 Bitcoin)
  const beamed = JSON.parse(
    spellQueryJson(extractAndVerifySpell({ bitcoin: hexOf('8d70833ad1ce5d84cffb76fdc6038d669c6cf1808f3f84f3f0d83cad712e33a3') }, false)),
  );
  assert.equal(beamed.outs[0].beam_to, '9bd30f4607be331bbca5b3aefabcc95bb156c252e6a91227d3cbac2ab644ab9e');
  assert.equal(beamed.outs[1].beam_to, undefined);
  assert.equal(beamed.public_args, undefined);
  // Cardano: beam_to and the output content
  const ada = JSON.parse(spellQueryJson(extractAndVerifySpell({ cardano: hexOf(CARDANO, 'cardano') }, false)));
  assert.equal(ada.outs[1].beam_to, '009fb4898026bca0a50245e41ee7cc761e10f63f31bb5b802998236478ffe0af');
  assert.deepEqual(ada.outs[1].content, { multiasset: {} });
  assert.deepEqual(ada.outs[0].charms, { $0000: null });
});

test('shape: $NNNN references, $10000 past 9999, string order, refs, empty outputs', () => {
  assert.equal(appRef(0), '$0000');
  assert.equal(appRef(42), '$0042');
  assert.equal(appRef(9999), '$9999');
  assert.equal(appRef(10000), '$10000');
  const vk = 'ab'.repeat(32);
  const n = 10002;
  const apps = Array.from({ length: n }, (_, i) => appFromString(`t/${i.toString(16).padStart(64, '0')}/${vk}`));
  const spell: NormalizedSpell = {
    version: 15,
    tx: {
      ins: [utxoIdFromString(`${'11'.repeat(32)}:0`)],
      refs: [utxoIdFromString(`${'22'.repeat(32)}:3`)],
      outs: [
        new Map([
          [10001, 5n],
          [2, 7n],
          [10000, 1n],
        ]),
        new Map(),
      ],
    },
    app_public_inputs: apps.map((a, i) => [a, i === 10000 ? 'x' : null]),
    versioned_apps: [],
    mock: false,
  };
  const v = spellQueryValue(spell);
  const keys = [...(v.get('apps') as ValueMap).entries.map(([k]) => k as string)];
  assert.equal(keys.length, n);
  assert.deepEqual(keys, [...keys].sort());
  assert.equal(keys.indexOf('$10000'), 1000 + 1); // after $0000…$1000
  const out = JSON.parse(toJsonCompact(v));
  assert.deepEqual(Object.keys(out.outs[0].charms), ['$0002', '$10000', '$10001']);
  assert.deepEqual(out.outs[1], {});
  assert.deepEqual(out.public_args, { $10000: 'x' });
  assert.deepEqual(out.refs, [{ utxo_id: `${'22'.repeat(32)}:3` }]);
  assert.equal(out.apps.$10001, `t/${(10001).toString(16).padStart(64, '0')}/${vk}`);
});

test('answerFor and identifyTx: spells, no spell, mock only in mock mode, Cardano ids', (t) => {
  if (!sharedOrSkip(t)) return;
  assert.deepEqual([...answerFor({ bitcoin: hexOf(NO_SPELL) }, false)], [0]);
  assert.deepEqual([...answerFor({ bitcoin: hexOf(MOCK_SPELL) }, false)], [0]);
  assert.match(new TextDecoder().decode(answerFor({ bitcoin: hexOf(MOCK_SPELL) }, true)), /^\{"version":6,/);
  assert.throws(() => answerFor({ bitcoin: '00' }, false), { code: 'INVALID_TX' });
  assert.deepEqual(identifyTx(Buffer.from(hexOf(V12), 'hex')), { chain: 'bitcoin', txid: V12 });
  assert.deepEqual(identifyTx(Buffer.from(hexOf(CARDANO, 'cardano'), 'hex')), { chain: 'cardano', txid: CARDANO });
  assert.throws(() => identifyTx(Uint8Array.of(1, 2, 3)), { code: 'INVALID_TX' });
});

test('GET and PUT: shapes and status codes, cache headers and 304, h2c, one upstream call for 500 concurrent GETs', async (t) => {
  if (!sharedOrSkip(t)) return;
  const txs = chainTxs();
  const fx = await esploraFixture(txs, { delayMs: 30 });
  // 500 concurrent GETs from one address: more than the default per-client cap allows
  const server = await startQueryServer({ host: '127.0.0.1', port: 0, source: new EsploraSource(fx.url), limits: { maxConnectionsPerClient: 512 } });
  const mockServer = await startQueryServer({ host: '127.0.0.1', port: 0, source: new EsploraSource(fx.url), mock: true });
  try {
    const legacy = readSharedJson('vectors', 'spell-query-legacy-shape.json').response_json_text as string;
    const r = await h1(server.port, 'GET', `/spells/${V12}`);
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(r.body.toString(), legacy);
    assert.match(String(r.headers['cache-control']), /immutable/);
    assert.equal(r.headers['access-control-allow-origin'], '*');
    const etag = String(r.headers.etag);
    assert.equal((await h1(server.port, 'GET', `/spells/${V12}`, undefined, { 'if-none-match': etag })).status, 304);
    assert.equal((await h1(server.port, 'GET', `/spells/${V12}`, undefined, { 'if-none-match': `"x", W/${etag}` })).status, 304);
    assert.equal((await h1(server.port, 'GET', `/spells/${V12}`, undefined, { 'if-none-match': '"other"' })).status, 200);
    assert.equal((await h1(server.port, 'GET', `/spells/${V12.toUpperCase()}`)).body.toString(), legacy);
    const viaH2 = await h2(server.port, 'GET', `/spells/${V12}`);
    assert.equal(viaH2.status, 200);
    assert.equal(viaH2.body.toString(), legacy);
    const head = await h1(server.port, 'HEAD', `/spells/${V12}`);
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    // no spell: 204, cacheable for a shorter time
    const none = await h1(server.port, 'GET', `/spells/${NO_SPELL}`);
    assert.equal(none.status, 204);
    assert.equal(none.body.length, 0);
    assert.match(String(none.headers['cache-control']), /max-age=3600/);
    // mock spells only in mock mode
    assert.equal((await h1(server.port, 'GET', `/spells/${MOCK_SPELL}`)).status, 204);
    const mocked = await h1(mockServer.port, 'GET', `/spells/${MOCK_SPELL}`);
    assert.equal(mocked.status, 200);
    assert.equal(JSON.parse(mocked.body.toString()).version, 6);
    // unknown transaction, bad txids, unknown routes and methods
    const unknown = await h1(server.port, 'GET', `/spells/${'0'.repeat(64)}`);
    assert.equal(unknown.status, 404);
    assert.deepEqual(Object.keys(JSON.parse(unknown.body.toString())), ['error', 'code']);
    assert.equal(JSON.parse(unknown.body.toString()).code, 'NOT_FOUND');
    for (const bad of ['xyz', 'ab'.repeat(31), 'g'.repeat(64), 'ab'.repeat(33)]) {
      const res = await h1(server.port, 'GET', `/spells/${bad}`);
      assert.equal(res.status, 400, bad);
      assert.equal(JSON.parse(res.body.toString()).code, 'INVALID_INPUT');
    }
    assert.equal((await h1(server.port, 'GET', '/nope')).status, 404);
    const del = await h1(server.port, 'DELETE', `/spells/${V12}`);
    assert.equal(del.status, 405);
    assert.equal(JSON.parse(del.body.toString()).code, 'METHOD_NOT_ALLOWED');
    assert.equal((await h1(server.port, 'GET', '/ready')).status, 200);
    const html = await h1(server.port, 'GET', '/');
    assert.equal(html.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(String(html.headers['content-security-policy']), /script-src 'sha256-[A-Za-z0-9+/]+=*'/);
    assert.match(html.body.toString(), /<title>Charms wallet view<\/title>/);

    // PUT: the txid must match; bad hex; bad body; no spell; Cardano
    const hex = txs.get(V12)!;
    const put = await h1(server.port, 'PUT', `/spells/${V12}`, JSON.stringify({ tx_hex: hex }), { 'content-type': 'application/json' });
    assert.equal(put.status, 200);
    assert.equal(put.body.toString(), legacy);
    const mismatch = await h1(server.port, 'PUT', `/spells/${NO_SPELL}`, JSON.stringify({ tx_hex: hex }));
    assert.equal(mismatch.status, 400);
    assert.match(JSON.parse(mismatch.body.toString()).error, new RegExp(`is transaction ${V12}`));
    for (const body of [
      JSON.stringify({ tx_hex: 'zz' }),
      JSON.stringify({ tx_hex: 'abc' }),
      JSON.stringify({ tx_hex: '0011' }),
      'not json',
      '{}',
      JSON.stringify({ tx_hex: 5 }),
      '',
    ]) {
      const res = await h1(server.port, 'PUT', `/spells/${V12}`, body);
      assert.equal(res.status, 400, body);
      assert.match(JSON.parse(res.body.toString()).code, /INVALID_INPUT|INVALID_TX/);
    }
    assert.equal((await h1(server.port, 'PUT', `/spells/${NO_SPELL}`, JSON.stringify({ tx_hex: txs.get(NO_SPELL) }))).status, 204);
    assert.equal((await h1(server.port, 'PUT', `/spells/${MOCK_SPELL}`, JSON.stringify({ tx_hex: txs.get(MOCK_SPELL) }))).status, 204);
    assert.equal((await h1(mockServer.port, 'PUT', `/spells/${MOCK_SPELL}`, JSON.stringify({ tx_hex: txs.get(MOCK_SPELL) }))).status, 200);
    const ada = await h1(server.port, 'PUT', `/spells/${CARDANO}`, JSON.stringify({ tx_hex: hexOf(CARDANO, 'cardano') }));
    assert.equal(ada.status, 200);
    assert.equal(ada.body.toString(), spellQueryJson(extractAndVerifySpell({ cardano: hexOf(CARDANO, 'cardano') }, false)));
    assert.equal((await h1(server.port, 'PUT', `/spells/${'ee'.repeat(32)}`, 'x'.repeat(10 * 1024 * 1024))).status, 413);

    // PUT never replaces what GET answers: a witness-stripped copy of a witness-era spell tx has the
    // same txid but no spell
    const W = '1acee7fb7c922b205e7c63abffe39a53527d4d7bbb0e5327a9b72350115a7ebb';
    const { parseTx, serializeTx } = await import('../bitcoin/tx.js');
    const stripped = Buffer.from(serializeTx(parseTx(Buffer.from(txs.get(W)!, 'hex')), { witness: false })).toString('hex');
    assert.equal((await h1(server.port, 'PUT', `/spells/${W}`, JSON.stringify({ tx_hex: stripped }))).status, 204);
    assert.equal((await h1(server.port, 'GET', `/spells/${W}`)).status, 200);

    // 500 concurrent GETs of one uncached txid → one upstream call
    const before = fx.calls();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    const bodies = await Promise.all(
      Array.from(
        { length: 500 },
        () =>
          new Promise<[number, string]>((resolve, reject) => {
            http
              .get({ host: '127.0.0.1', port: server.port, path: `/spells/${FRESH}`, agent }, (res) => {
                let b = '';
                res.on('data', (c) => (b += c));
                res.on('end', () => resolve([res.statusCode!, b]));
              })
              .on('error', reject);
          }),
      ),
    );
    agent.destroy();
    assert.ok(bodies.every(([s]) => s === 200));
    assert.equal(new Set(bodies.map(([, b]) => b)).size, 1);
    assert.equal(fx.calls() - before, 1);
    // and it stays cached
    await h1(server.port, 'GET', `/spells/${FRESH}`);
    assert.equal(fx.calls() - before, 1);
  } finally {
    await server.close();
    await mockServer.close();
    await fx.close();
  }
});

test('a source that strips witnesses: "no spell" is answered but never cached; the full tx then gives the spell', async (t) => {
  if (!sharedOrSkip(t)) return;
  const W = '1acee7fb7c922b205e7c63abffe39a53527d4d7bbb0e5327a9b72350115a7ebb'; // witness-era spell tx
  const { parseTx, serializeTx } = await import('../bitcoin/tx.js');
  const full = hexOf(W);
  const stripped = Buffer.from(serializeTx(parseTx(Buffer.from(full, 'hex')), { witness: false })).toString('hex');
  let strip = true;
  const fx = await esploraFixture(new Map(), { override: (id) => (id === W ? [200, strip ? stripped : full] : undefined) });
  const server = await startQueryServer({ host: '127.0.0.1', port: 0, source: new EsploraSource(fx.url) });
  try {
    const none = await h1(server.port, 'GET', `/spells/${W}`);
    assert.equal(none.status, 204);
    assert.equal(none.headers['cache-control'], 'no-store', 'clients must not keep it either');
    strip = false;
    const got = await h1(server.port, 'GET', `/spells/${W}`);
    assert.equal(got.status, 200, 'the stripped verdict was not cached');
    assert.match(String(got.headers['cache-control']), /immutable/);
    assert.equal(fx.calls(), 2);
  } finally {
    await server.close();
    await fx.close();
  }
});

test('source failures: 503 unreachable or unconfigured, 502 failing or lying; failures are not cached', async (t) => {
  if (!sharedOrSkip(t)) return;
  const txs = chainTxs();
  let failNext = true;
  const fx = await esploraFixture(txs, {
    override: (id) => {
      if (id === 'ab'.repeat(32)) return [500, 'boom'];
      if (id === 'cd'.repeat(32)) return [200, txs.get(V12)!]; // a different transaction
      if (id === 'ef'.repeat(32)) return [200, 'not hex at all'];
      if (id === FRESH && failNext) return ((failNext = false), [503, 'busy']);
      return undefined;
    },
  });
  // a port that refuses connections: bind, note the port, close
  const dead = http.createServer();
  const deadPort = await listen(dead);
  await closeServer(dead);
  const down = await startQueryServer({ host: '127.0.0.1', port: 0, source: new EsploraSource(`http://127.0.0.1:${deadPort}`) });
  const flaky = await startQueryServer({ host: '127.0.0.1', port: 0, source: new EsploraSource(fx.url) });
  const none = await startQueryServer({ host: '127.0.0.1', port: 0 });
  try {
    const r1 = await h1(down.port, 'GET', `/spells/${V12}`);
    assert.equal(r1.status, 503);
    assert.equal(JSON.parse(r1.body.toString()).code, 'UPSTREAM_UNAVAILABLE');
    assert.equal(r1.headers['cache-control'], 'no-store');
    const r2 = await h1(flaky.port, 'GET', `/spells/${'ab'.repeat(32)}`);
    assert.equal(r2.status, 502);
    assert.equal(JSON.parse(r2.body.toString()).code, 'UPSTREAM_FAILED');
    assert.match(JSON.parse(r2.body.toString()).error, /answered 500/);
    const r3 = await h1(flaky.port, 'GET', `/spells/${'cd'.repeat(32)}`);
    assert.equal(r3.status, 502);
    assert.match(JSON.parse(r3.body.toString()).error, new RegExp(`answered transaction ${V12}`));
    assert.equal((await h1(flaky.port, 'GET', `/spells/${'ef'.repeat(32)}`)).status, 502);
    assert.equal((await h1(flaky.port, 'GET', `/spells/${FRESH}`)).status, 502);
    assert.equal((await h1(flaky.port, 'GET', `/spells/${FRESH}`)).status, 200); // the failure was not cached
    const r4 = await h1(none.port, 'GET', `/spells/${V12}`);
    assert.equal(r4.status, 503);
    assert.match(JSON.parse(r4.body.toString()).error, /no transaction source configured/);
    // PUT works without a source
    assert.equal((await h1(none.port, 'PUT', `/spells/${V12}`, JSON.stringify({ tx_hex: txs.get(V12) }))).status, 200);
    // a source that never answers in time is unreachable
    const silent = http.createServer(() => {});
    const silentPort = await listen(silent);
    try {
      await assert.rejects(
        new EsploraSource(`http://127.0.0.1:${silentPort}`, 200).rawTx(V12),
        (e: Error) => e instanceof CharmsError && e.code === 'UPSTREAM_UNAVAILABLE' && /timed out/.test(e.message),
      );
    } finally {
      silent.closeAllConnections();
      await closeServer(silent);
    }
  } finally {
    await down.close();
    await flaky.close();
    await none.close();
    await fx.close();
  }
});

test('ESPLORA_URL with credentials and a token: used as Basic auth and query, never in 503 bodies or logs', async (t) => {
  if (!sharedOrSkip(t)) return;
  const txs = chainTxs();
  const seen: { auth?: string | undefined; url?: string | undefined }[] = [];
  const fake = http.createServer((req, res) => {
    seen.push({ auth: req.headers.authorization, url: req.url });
    const m = /^\/api\/tx\/([0-9a-f]{64})\/hex\?token=T0KEN$/.exec(req.url ?? '');
    if (req.headers.authorization !== `Basic ${Buffer.from('esplora:s3cr3t').toString('base64')}` || !m) return void res.writeHead(401).end('no');
    res.writeHead(200).end(txs.get(m[1]!) ?? '');
  });
  const port = await listen(fake);
  const dead = http.createServer();
  const deadPort = await listen(dead);
  await closeServer(dead);
  const lines: string[] = [];
  const log = createLogger({}, (l) => void lines.push(l));
  const good = await startQueryServer({
    host: '127.0.0.1',
    port: 0,
    source: sourceOfEnv({ ESPLORA_URL: `http://esplora:s3cr3t@127.0.0.1:${port}/api/?token=T0KEN` }),
    log,
  });
  const down = await startQueryServer({
    host: '127.0.0.1',
    port: 0,
    source: sourceOfEnv({ ESPLORA_URL: `http://esplora:s3cr3t@127.0.0.1:${deadPort}/api?token=T0KEN` }),
    log,
  });
  try {
    const ok = await h1(good.port, 'GET', `/spells/${V12}`);
    assert.equal(ok.status, 200, ok.body.toString());
    assert.equal(seen.length, 1);
    const r = await h1(down.port, 'GET', `/spells/${V12}`);
    assert.equal(r.status, 503);
    const body = r.body.toString();
    assert.match(JSON.parse(body).error, /unreachable/);
    for (const text of [body, ...lines]) assert.ok(!/s3cr3t|T0KEN/.test(text), `leaked: ${text}`);
    assert.ok(lines.length > 0, 'the failure was logged');
  } finally {
    await good.close();
    await down.close();
    await closeServer(fake);
  }
});

test('a source answering 100 MB is cut off at the answer limit, not read whole (Esplora and RPC, declared or streamed)', async () => {
  const total = 100 * 1024 * 1024;
  const written: number[] = [];
  let hungUp = 0;
  const huge = http.createServer((req, res) => {
    req.resume();
    const declare = (req.url ?? '').includes('declared') || req.headers['x-declare'] === '1';
    res.writeHead(200, declare ? { 'content-length': String(total) } : {});
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let sent = 0;
    const i = written.push(0) - 1;
    let open = true;
    res.on('close', () => {
      open = false;
      hungUp++;
    });
    const pump = () => {
      while (open && sent < total) {
        sent += chunk.length;
        written[i] = sent;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      if (open) res.end();
    };
    pump();
  });
  const port = await listen(huge);
  try {
    const sources = [
      new EsploraSource(`http://127.0.0.1:${port}/streamed`),
      new EsploraSource(`http://127.0.0.1:${port}/declared`),
      sourceFromConfig({ rpcUrl: `http://127.0.0.1:${port}/` })!,
    ];
    for (const source of sources) {
      const server = await startQueryServer({ host: '127.0.0.1', port: 0, source });
      try {
        const r = await h1(server.port, 'GET', `/spells/${V12}`);
        assert.equal(r.status, 502, source.name);
        const e = JSON.parse(r.body.toString());
        assert.equal(e.code, 'UPSTREAM_FAILED');
        assert.match(e.error, /answered more than \d+ bytes/);
      } finally {
        await server.close();
      }
    }
    await waitFor(() => hungUp === 3, 'the three answers to be cut off');
    assert.equal(written.length, 3);
    for (const w of written) assert.ok(w < 40 * 1024 * 1024, `the source got to write ${w} bytes before the service hung up`);
  } finally {
    huge.closeAllConnections();
    await closeServer(huge);
  }
});

test('Bitcoin Core JSON-RPC source: getrawtransaction, -5 → 404, basic auth, cookie file, bad credentials', async (t) => {
  if (!sharedOrSkip(t)) return;
  const txs = chainTxs();
  const auths: string[] = [];
  const rpc = http.createServer((req, res) => {
    auths.push(String(req.headers.authorization));
    const a = req.headers.authorization;
    if (a === undefined || a === `Basic ${Buffer.from('bad:creds').toString('base64')}`) return void res.writeHead(401).end();
    let b = '';
    req.on('data', (c) => (b += c));
    req.on('end', () => {
      const { method, params } = JSON.parse(b);
      assert.equal(method, 'getrawtransaction');
      const hex = txs.get(params[0]);
      // bitcoind answers RPC errors with HTTP 404/500 and a JSON body
      res.writeHead(hex ? 200 : 404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          hex
            ? { result: hex, error: null, id: 'charms' }
            : { result: null, error: { code: -5, message: 'No such mempool or blockchain transaction' }, id: 'charms' },
        ),
      );
    });
  });
  const port = await listen(rpc);
  const dir = mkdtempSync(join(tmpdir(), 'rpc-cookie-'));
  writeFileSync(join(dir, '.cookie'), '__cookie__:s3cret\n');
  const byUser = await startQueryServer({ host: '127.0.0.1', port: 0, source: new NodeSource(new RpcNode(`http://127.0.0.1:${port}`, () => 'user:pass')) });
  const byCookie = await startQueryServer({
    host: '127.0.0.1',
    port: 0,
    source: sourceFromConfig({ rpcUrl: `http://127.0.0.1:${port}/`, rpcCookie: join(dir, '.cookie') }),
  });
  const noCookie = await startQueryServer({
    host: '127.0.0.1',
    port: 0,
    source: sourceFromConfig({ rpcUrl: `http://127.0.0.1:${port}/`, rpcCookie: join(dir, 'missing') }),
  });
  const badCreds = await startQueryServer({
    host: '127.0.0.1',
    port: 0,
    source: sourceOfEnv({ BITCOIN_RPC_URL: `http://127.0.0.1:${port}`, BITCOIN_RPC_USER: 'bad', BITCOIN_RPC_PASSWORD: 'creds' }),
  });
  const noCreds = await startQueryServer({ host: '127.0.0.1', port: 0, source: sourceOfEnv({ BITCOIN_RPC_URL: `http://127.0.0.1:${port}` }) });
  try {
    const ok = await h1(byUser.port, 'GET', `/spells/${V12}`);
    assert.equal(ok.status, 200);
    assert.equal(auths.at(-1), `Basic ${Buffer.from('user:pass').toString('base64')}`);
    assert.equal((await h1(byUser.port, 'GET', `/spells/${NO_SPELL}`)).status, 204);
    assert.equal((await h1(byUser.port, 'GET', `/spells/${'cd'.repeat(32)}`)).status, 404);
    assert.equal((await h1(byCookie.port, 'GET', `/spells/${V12}`)).status, 200);
    assert.equal(auths.at(-1), `Basic ${Buffer.from('__cookie__:s3cret').toString('base64')}`);
    const nc = await h1(noCookie.port, 'GET', `/spells/${V12}`);
    assert.equal(nc.status, 503);
    assert.match(JSON.parse(nc.body.toString()).error, /cookie file/);
    const bc = await h1(badCreds.port, 'GET', `/spells/${V12}`);
    assert.equal(bc.status, 502);
    assert.match(JSON.parse(bc.body.toString()).error, /refused the RPC credentials \(401\): check the cookie file/);
    // a URL without credentials: the answer says how to give them
    const none = await h1(noCreds.port, 'GET', `/spells/${V12}`);
    assert.equal(none.status, 502);
    assert.match(
      JSON.parse(none.body.toString()).error,
      /asks for RPC credentials \(401\) and none were given: name bitcoind's cookie file with --rpc-cookie or BITCOIN_RPC_COOKIE .*BITCOIN_RPC_USER and BITCOIN_RPC_PASSWORD/,
    );
  } finally {
    await noCreds.close();
    await byUser.close();
    await byCookie.close();
    await noCookie.close();
    await badCreds.close();
    await closeServer(rpc);
  }
  // configuration
  assert.equal(sourceOfEnv({}), undefined);
  assert.match(
    sourceOfEnv({ ESPLORA_URL: 'https://mempool.space/testnet4/api/', BITCOIN_RPC_URL: 'http://x:1' })!.name,
    /^esplora https:\/\/mempool.space\/testnet4\/api$/,
  );
  assert.equal(sourceOfEnv({ BITCOIN_RPC_URL: 'http://u:p@127.0.0.1:48332' })!.name, 'bitcoind http://127.0.0.1:48332');
  assert.throws(() => sourceOfEnv({ BITCOIN_RPC_URL: 'not a url' }), { code: 'CONFIG' });
  assert.ok(parseJson('{}') instanceof ValueMap);
});

test('charms query-server: help documents the source configuration; starts, answers, stops on SIGTERM', async (t) => {
  if (!sharedOrSkip(t)) return;
  const { spawn, spawnSync } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const bin = fileURLToPath(new URL('../cli/charms.js', import.meta.url));
  const help = spawnSync(process.execPath, [bin, 'query-server', '--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0);
  for (const s of ['ESPLORA_URL', 'BITCOIN_RPC_URL', 'BITCOIN_RPC_COOKIE', 'BITCOIN_RPC_USER', '--esplora-url', '--rpc-url', '--rpc-cookie', '--mock', '17785'])
    assert.ok(help.stdout.includes(s), s);
  const fx = await esploraFixture(chainTxs());
  const env: Record<string, string | undefined> = { ...process.env, LOG_LEVEL: 'info' };
  delete env.CACHE_URL;
  delete env.REDIS_URL;
  const child = spawn(process.execPath, [bin, 'query-server', '--ip', '127.0.0.1', '--port', '0', '--esplora-url', fx.url], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let err = '';
      child.stderr.on('data', (c) => {
        err += c;
        const m = /running on 127\.0\.0\.1:(\d+)/.exec(err);
        if (m) resolve(Number(m[1]));
      });
      child.once('exit', (code) => reject(new Error(`query-server exited ${code}: ${err}`)));
    });
    const r = await h1(port, 'GET', `/spells/${V12}`);
    assert.equal(r.status, 200);
    assert.equal(r.body.toString(), readSharedJson('vectors', 'spell-query-legacy-shape.json').response_json_text);
    assert.match((await h1(port, 'GET', '/wallet')).body.toString(), /<title>Charms wallet view<\/title>/);
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await fx.close();
  }
});

test('two services sharing Redis (CACHE_URL): one upstream call for concurrent GETs on both; answers and "no spell" shared', async (t) => {
  if (!hasRedisServer()) return skipOrFail(t, 'redis-server not installed (CI installs it)');
  if (!sharedOrSkip(t)) return;
  const { spawn } = await import('node:child_process');
  const { createCache } = await import('../infra/cache.js');
  const net = await import('node:net');
  const port = await new Promise<number>((r) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => r(p));
    });
  });
  const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const fx = await esploraFixture(chainTxs(), { delayMs: 50 });
  const { cacheUrl, cacheSecret } = loadSettings({ CACHE_URL: `redis://127.0.0.1:${port}`, CACHE_SECRET: 'one secret for the cluster' });
  const caches = [createCache(cacheUrl, undefined, { secret: cacheSecret! }), createCache(cacheUrl, undefined, { secret: cacheSecret! })];
  const servers = await Promise.all(
    caches.map((cache) => startQueryServer({ host: '127.0.0.1', port: 0, source: new EsploraSource(fx.url), cache, limits: { maxConnectionsPerClient: 512 } })),
  );
  try {
    // both caches connected (a cache that met a not-yet-started Redis probes it again shortly)
    const bothReady = async () => (await Promise.all(caches.map((c) => c.ready()))).every(Boolean);
    await waitFor(bothReady, 'both caches to connect to Redis', { intervalMs: 100 });
    const statuses = await Promise.all(Array.from({ length: 100 }, (_, i) => h1(servers[i % 2]!.port, 'GET', `/spells/${FRESH}`).then((r) => r.status)));
    assert.ok(
      statuses.every((s) => s === 200),
      String(statuses),
    );
    assert.equal(fx.calls(), 1);
    assert.equal((await h1(servers[0]!.port, 'GET', `/spells/${NO_SPELL}`)).status, 204);
    assert.equal((await h1(servers[1]!.port, 'GET', `/spells/${NO_SPELL}`)).status, 204);
    assert.equal(fx.calls(), 2);
    // a spell planted in Redis under a txid's key is never served (nor cached immutable)
    const { Redis } = await import('ioredis');
    const raw = new Redis(`redis://127.0.0.1:${port}`);
    await raw.set(`svc:result:spell-query:real:${V12}`, '{"version":12,"apps":{"$0000":"t/forged"},"ins":[],"outs":[]}');
    await raw.set(`svc:result:spell-query:real:${MOCK_SPELL}`, 'garbage');
    raw.disconnect();
    const legacy = readSharedJson('vectors', 'spell-query-legacy-shape.json').response_json_text as string;
    const v12 = await h1(servers[0]!.port, 'GET', `/spells/${V12}`);
    assert.equal(v12.status, 200);
    assert.equal(v12.body.toString(), legacy);
    assert.equal((await h1(servers[1]!.port, 'GET', `/spells/${MOCK_SPELL}`)).status, 204, 'garbage is not served as JSON');
  } finally {
    await Promise.all(servers.map((s) => s.close()));
    await Promise.all(caches.map((c) => c.close()));
    redis.kill('SIGTERM');
    await fx.close();
  }
});
