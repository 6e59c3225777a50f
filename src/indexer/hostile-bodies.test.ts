/**
 * What a hostile body or a broken node makes the index answer: deep JSON is refused with 400
 * `{error, code}` (not a 500 from a stack overflow), and no answer names a file of this machine
 * (the RPC cookie) while the log does.
 */
import { BITCOIN_NETWORKS } from '../model/network.js';
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_INDEX_SERVICE } from '../testing/index-fake-node.js';
import { TestEngines } from '../testing/index-stores.js';
import { FakeBitcoind } from '../testing/fake-bitcoind.js';
import { h1, h2 } from '../testing/http.js';
import { blockSourceFromConfig, btcSourceFromConfig } from '../sources/chain-sources.js';
import { startIndexService } from './service.js';
import { parsePlainJson } from '../codec/json.js';
import { publicText } from '../util/redact.js';
import type { Logger } from '../infra/log.js';

const engines = new TestEngines();
after(() => engines.close());

const deep = (n: number, inner = '0') => '['.repeat(n) + inner + ']'.repeat(n);

test('a 50 000-deep JSON array in any body of the index is refused with 400 {error, code}', async () => {
  const e = engines.sqlite();
  const svc = await startIndexService({ ...TEST_INDEX_SERVICE, apiOnly: true, store: await e.open(await e.newDb()) });
  try {
    const bodies = [
      ['/v1/wallet/balance/batch', `{"addresses": [], "network": ${deep(50_000)}}`],
      ['/v1/wallet/charms/batch/indexed', `{"addresses": ${deep(50_000)}}`],
      ['/v1/wallet/prev-txs', `{"txids": ${deep(50_000)}}`],
      ['/v1/wallet/broadcast', deep(50_000, '{"raw_tx": "00"}')],
      ['/v1/addresses/balances', `{"addresses": ${deep(30_000)}}`], // its limit is 64 KiB
      // a network that is no string, shallow: refused without printing it
      ['/v1/wallet/balance/batch', `{"addresses": [], "network": ${deep(100)}}`],
    ] as const;
    for (const [path, body] of bodies)
      for (const send of [h1, h2]) {
        const r = await send(svc.server.port, 'POST', path, body, { 'content-type': 'application/json' });
        assert.equal(r.status, 400, `${path}: ${r.body.toString().slice(0, 200)}`);
        const j = JSON.parse(r.body.toString()) as { error: string; code: string };
        assert.equal(j.code, 'INVALID_INPUT', path);
        assert.match(j.error, /body must be JSON|nested deeper|network: expected a network name/, path);
      }
    // the spell-query PUT shares the parser
    const put = await h1(svc.server.port, 'PUT', `/spells/${'00'.repeat(32)}`, `{"tx_hex": ${deep(50_000)}}`);
    assert.equal(put.status, 400);
    assert.equal(JSON.parse(put.body.toString()).code, 'INVALID_INPUT');
  } finally {
    await svc.close();
  }
});

test('parsePlainJson: nesting bounded at 127 levels before parsing; brackets in strings do not count', () => {
  assert.deepEqual(parsePlainJson(deep(127)), JSON.parse(deep(127)));
  assert.throws(() => parsePlainJson(deep(128)), /nested deeper than 127 levels/);
  assert.throws(
    () => parsePlainJson(deep(1_000_000)),
    (e: Error & { code?: string }) => e.code === 'INVALID_INPUT',
  );
  assert.deepEqual(parsePlainJson(`{"a": "${'['.repeat(500)}\\"[[["}`), { a: `${'['.repeat(500)}"[[[` });
  assert.throws(
    () => parsePlainJson('{"a": '),
    (e: Error & { code?: string }) => e.code === 'INVALID_INPUT',
  );
});

test('publicText: file paths and URL credentials out of answers, API routes kept', () => {
  assert.equal(publicText("ENOENT: no such file or directory, open '/home/u/.bitcoin/.cookie'"), "ENOENT: no such file or directory, open '<path>'");
  assert.equal(publicText('database /var/lib/charms/index.sqlite: locked'), 'database <path>: locked');
  assert.equal(publicText('C:\\Users\\me\\x.db and ~/data/y'), '<path> and <path>');
  assert.equal(publicText('POST {"txids": [...]} to /v1/wallet/prev-txs'), 'POST {"txids": [...]} to /v1/wallet/prev-txs');
  assert.equal(publicText('no route for GET /spells/prove'), 'no route for GET /spells/prove');
  assert.equal(publicText('bitcoind http://user:pw@10.0.0.1:8332/ failed'), 'bitcoind http://REDACTED@10.0.0.1:8332/ failed');
});

test('with the node down, /v1/status and /v1/wallet/tx answers do not name the RPC cookie file; the log does', async (t) => {
  const fake = await FakeBitcoind.start();
  const cookie = join(mkdtempSync(join(tmpdir(), 'charms-cookie-')), 'regtest', '.cookie'); // bitcoind stopped: no cookie
  const cfg = { rpcUrl: fake.rpcUrl, rpcCookie: cookie };
  const lines: string[] = [];
  const log: Logger = {
    error: (m, f) => lines.push(`${m} ${JSON.stringify(f)}`),
    warn: (m, f) => lines.push(`${m} ${JSON.stringify(f)}`),
    info() {},
    debug() {},
    warnAlways() {},
  };
  const e = engines.sqlite();
  t.after(() => fake.stop());
  for (const apiOnly of [false, true]) {
    const svc = await startIndexService({
      ...TEST_INDEX_SERVICE,
      apiOnly,
      log,
      store: await e.open(await e.newDb()),
      source: blockSourceFromConfig(cfg, { network: BITCOIN_NETWORKS.regtest }),
      btcSource: btcSourceFromConfig(cfg, { network: BITCOIN_NETWORKS.regtest }),
    });
    try {
      if (svc.follower) await svc.follower.syncOnce().catch(() => {});
      const status = await h1(svc.server.port, 'GET', '/v1/status');
      const st = JSON.parse(status.body.toString()) as { error: { code: string; message: string } | null };
      assert.equal(st.error?.code, 'UPSTREAM_UNAVAILABLE', `${apiOnly}: ${status.body}`);
      assert.match(st.error.message, /RPC cookie file/);
      const tx = await h1(svc.server.port, 'GET', `/v1/wallet/tx/${'ab'.repeat(32)}`);
      assert.equal(tx.status, 503, tx.body.toString());
      for (const body of [status.body.toString(), tx.body.toString()]) {
        assert.ok(!body.includes(cookie) && !body.includes(tmpdir()), `no machine path in an answer: ${body}`);
        assert.ok(!body.includes('.cookie'), body);
      }
    } finally {
      await svc.close();
    }
  }
  assert.ok(
    lines.some((l) => l.includes(cookie)),
    `the log names the cookie file: ${lines.join('\n')}`,
  );
});
