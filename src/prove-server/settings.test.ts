import { test, after } from 'node:test';
import assert from 'node:assert/strict';
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
