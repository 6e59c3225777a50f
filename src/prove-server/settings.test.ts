import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startProveServer } from './server.js';
import { startProveServer as fromPackageRoot } from '../index.js';
import { startProveServer as fromServerSubpath } from './index.js';
import { loadSettings } from '../settings/settings.js';
import { runnerLimits, shutdownRunner } from '../runner/index.js';
import { h1 } from '../testing/http.js';

after(() => shutdownRunner());

test("startProveServer from settings is the server `charms server` runs: runner in workers, the settings' prover, the library exports it", async () => {
  assert.equal(fromPackageRoot, startProveServer);
  assert.equal(fromServerSubpath, startProveServer);
  const settings = loadSettings({ MOCK: '1', SVC_PROOF_THREADS: '0' });
  const server = await startProveServer({ host: '127.0.0.1', port: 0, settings, runner: { concurrency: 1, isolation: 'thread' } });
  try {
    assert.equal(server.description, 'local mock prover');
    assert.equal(runnerLimits().isolation, 'worker'); // a server always isolates contracts, whatever it is given
    assert.equal(runnerLimits().concurrency, 1);
    const ready = await h1(server.port, 'GET', '/ready');
    assert.equal(ready.status, 200);
    assert.equal(ready.body.toString(), 'OK');
    const bad = await h1(server.port, 'POST', '/spells/prove', '{not json', { 'content-type': 'application/json' });
    assert.equal(bad.status, 400);
    assert.equal(JSON.parse(bad.body.toString()).code, 'INVALID_INPUT');
    const wrongMethod = await h1(server.port, 'GET', '/spells/prove');
    assert.equal(wrongMethod.status, 405);
    assert.equal(JSON.parse(wrongMethod.body.toString()).code, 'METHOD_NOT_ALLOWED');
  } finally {
    await server.close();
  }
});

test('startProveServer from settings: a relay unless mock or prover', async () => {
  const settings = loadSettings({ SVC_PROVE_API_URL: 'http://127.0.0.1:9/spells/prove' });
  const server = await startProveServer({ host: '127.0.0.1', port: 0, settings });
  try {
    assert.match(server.description ?? '', /^relay to http:\/\/127\.0\.0\.1:9\//);
  } finally {
    await server.close();
  }
});

/** A port nothing listens on (listened on, then closed). */
async function deadPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as net.AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

test('a relay is ready only while its upstream is: 503 with the reason when it is dead or leads back here', async () => {
  const upstream = await startProveServer({ host: '127.0.0.1', port: 0, settings: loadSettings({ MOCK: '1', SVC_PROOF_THREADS: '0' }) });
  const relayTo = (url: string, port = 0) => startProveServer({ host: '127.0.0.1', port, settings: loadSettings({ SVC_PROVE_API_URL: url }) });
  const good = await relayTo(`http://127.0.0.1:${upstream.port}/spells/prove`);
  const dead = await deadPort();
  const down = await relayTo(`http://user:S3CRET@127.0.0.1:${dead}/spells/prove`);
  // its own host:port (the port chosen first, so the URL can name it)
  const own = await deadPort();
  const self = await relayTo(`http://127.0.0.1:${own}/spells/prove`, own);
  // two relays pointing at each other: A -> B -> A
  const aPort = await deadPort();
  const b = await relayTo(`http://127.0.0.1:${aPort}/spells/prove`);
  const a = await relayTo(`http://127.0.0.1:${b.port}/spells/prove`, aPort);
  try {
    const ok = await h1(good.port, 'GET', '/ready');
    assert.equal(ok.status, 200);
    assert.equal(ok.body.toString(), 'OK');
    const r = await h1(down.port, 'GET', '/ready');
    assert.equal(r.status, 503);
    assert.match(
      r.body.toString(),
      new RegExp(`^NOT READY: the upstream proving service \\(SVC_PROVE_API_URL\\) http://REDACTED@127\\.0\\.0\\.1:${dead}/ready cannot be reached`),
    );
    assert.doesNotMatch(r.body.toString(), /S3CRET/);
    for (const looped of [self, a, b]) {
      const l = await h1(looped.port, 'GET', '/ready');
      assert.equal(l.status, 503);
      assert.match(l.body.toString(), /^NOT READY: relay loop: the upstream proving service \(SVC_PROVE_API_URL\) http:\/\/127\.0\.0\.1:\d+\/ready leads back/);
    }
  } finally {
    for (const s of [good, down, self, a, b, upstream]) await s.close();
  }
});
