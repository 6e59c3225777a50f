import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startProveServer } from '../prove-server/server.js';
import { createLogger } from '../infra/log.js';
import { bodyHandler, encodeProveResponse, RelayProveService } from './service.js';
import { describeConfig, proverConfig } from '../settings/settings.js';
import { readSharedJson, sharedOrSkip } from '../testing/shared.js';
import { h1 } from '../testing/http.js';

const listen = (s: http.Server) => new Promise<number>((r) => s.listen(0, '127.0.0.1', () => r((s.address() as { port: number }).port)));

test('relay through a URL with credentials: sent as Authorization, never logged or returned', async (t) => {
  if (!sharedOrSkip(t)) return;
  const v = readSharedJson('vectors', 'prove-request-vectors.json');
  const seen: { auth?: string | undefined; url?: string | undefined }[] = [];
  const upstream = http.createServer((req, res) => {
    seen.push({ auth: req.headers.authorization, url: req.url });
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/cbor' }).end(encodeProveResponse([{ chain: 'bitcoin', hex: '00' }], 'cbor')));
  });
  const port = await listen(upstream);
  const dead = http.createServer();
  const deadPort = await listen(dead);
  await new Promise<void>((r) => dead.close(() => r()));
  const lines: string[] = [];
  const log = createLogger({ LOG_LEVEL: 'debug' }, (l) => void lines.push(l));
  const start = (url: string) =>
    startProveServer({ host: '127.0.0.1', port: 0, prove: bodyHandler(new RelayProveService(url, log)), ready: async () => true, log });
  const good = await start(`http://relay-user:pa55word@127.0.0.1:${port}/spells/prove?key=K3YSECRET`);
  const down = await start(`http://relay-user:pa55word@127.0.0.1:${deadPort}/spells/prove?key=K3YSECRET`);
  try {
    const ok = await h1(good.port, 'POST', '/spells/prove', v.full_request_json_text, { 'content-type': 'application/json' });
    assert.equal(ok.status, 200, ok.body.toString());
    assert.equal(ok.body.toString(), '[{"bitcoin":"00"}]');
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.auth, `Basic ${Buffer.from('relay-user:pa55word').toString('base64')}`);
    assert.equal(seen[0]!.url, '/spells/prove?key=K3YSECRET', 'the query reaches the upstream');
    const failed = await h1(down.port, 'POST', '/spells/prove', v.full_request_json_text, { 'content-type': 'application/json' });
    assert.equal(failed.status, 500);
    const body = failed.body.toString();
    assert.match(JSON.parse(body).error, /cannot reach http:\/\/REDACTED@127\.0\.0\.1/);
    for (const text of [body, ...lines]) assert.ok(!/pa55word|K3YSECRET/.test(text), `leaked: ${text}`);
    assert.ok(
      lines.some((l) => l.includes('sending proof request to http://REDACTED@')),
      'relay progress is logged, redacted',
    );
  } finally {
    await good.close();
    await down.close();
    upstream.close();
  }
});

test('the start-up configuration shows no URL credentials (NETWORK_RPC_URL, SVC_PROVE_API_URL, GPU URL)', () => {
  const c = proverConfig({
    NETWORK_RPC_URL: 'https://rpc-user:rpc-pass@rpc.example/?key=NETKEY',
    NETWORK_PRIVATE_KEY: '11'.repeat(32),
    SVC_PROVE_API_URL: 'https://u:prove-pass@prover.example/spells/prove',
    ZK_GPU_SERVICE_URL: 'http://gpu:gpu-pass@127.0.0.1:3000/?token=GPUTOKEN',
  });
  const lines: string[] = [];
  createLogger({}, (l) => void lines.push(l)).info('Server running on 0.0.0.0:17784', { ...describeConfig(c) });
  const text = lines.join('');
  for (const s of ['rpc-pass', 'NETKEY', 'prove-pass', 'gpu-pass', 'GPUTOKEN', '11'.repeat(32)]) assert.ok(!text.includes(s), `${s} leaked: ${text}`);
  assert.match(text, /rpc\.example/, 'the host is still shown');
});

test('relay: a hostile upstream — undecodable, oversized, trickling or silent answers — is a 5xx the CLI retries, never a 400', {
  timeout: 30_000,
}, async (t) => {
  if (!sharedOrSkip(t)) return;
  const v = readSharedJson('vectors', 'prove-request-vectors.json');
  let mode = 'garbage';
  const open: http.ServerResponse[] = [];
  const upstream = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      open.push(res);
      if (mode === 'garbage') res.writeHead(200, { 'content-type': 'application/cbor' }).end('<html>INTERNAL upstream page</html>');
      else if (mode === 'declared') {
        res.writeHead(200, { 'content-type': 'application/cbor', 'content-length': String(1536 * 1024 * 1024) });
        res.write(Buffer.alloc(1024)); // 1.5 GB declared: refused before it is read
      } else if (mode === 'flood') {
        res.writeHead(200, { 'content-type': 'application/cbor' });
        const chunk = Buffer.alloc(64 * 1024);
        const pump = () => {
          while (!res.destroyed && res.write(chunk));
          if (!res.destroyed) res.once('drain', pump);
        };
        pump();
      } else if (mode === 'stall') {
        res.writeHead(200, { 'content-type': 'application/cbor' });
        res.write(Buffer.of(0x81)); // then nothing
      } // 'silent': never answers
    });
  });
  const port = await listen(upstream);
  const relay = new RelayProveService(`http://127.0.0.1:${port}/spells/prove`, undefined, {
    attempts: 2,
    baseDelayMs: 1,
    maxResponseBytes: 1024 * 1024,
    timeoutMs: 1500,
    stallMs: 200,
  });
  const server = await startProveServer({ host: '127.0.0.1', port: 0, prove: bodyHandler(relay), ready: async () => true });
  const ask = async () => {
    const r = await h1(server.port, 'POST', '/spells/prove', v.full_request_json_text, { 'content-type': 'application/json' });
    return { status: r.status, body: JSON.parse(r.body.toString()) as { error: string; code: string } };
  };
  try {
    let r = await ask();
    assert.deepEqual([r.status, r.body.code], [502, 'UPSTREAM_FAILED'], JSON.stringify(r.body));
    assert.match(r.body.error, /answered something that is not a list of transactions/);
    assert.ok(!r.body.error.includes('INTERNAL'), 'the upstream bytes are not quoted');
    mode = 'declared';
    r = await ask();
    assert.deepEqual([r.status, r.body.code], [502, 'UPSTREAM_FAILED']);
    assert.match(r.body.error, /declares 1610612736 bytes, over the limit of 1048576/);
    mode = 'flood';
    r = await ask();
    assert.deepEqual([r.status, r.body.code], [502, 'UPSTREAM_FAILED']);
    assert.match(r.body.error, /over the limit of 1048576 bytes/);
    mode = 'stall';
    r = await ask();
    assert.deepEqual([r.status, r.body.code], [500, 'PROVER_TRANSIENT']);
    assert.match(r.body.error, /stopped arriving for 200 ms/);
    mode = 'silent';
    r = await ask();
    assert.deepEqual([r.status, r.body.code], [500, 'PROVER_TRANSIENT']);
    assert.match(r.body.error, /gave no answer within 1500 ms/);
  } finally {
    for (const o of open) o.destroy();
    await server.close();
    upstream.closeAllConnections();
    await new Promise<void>((r) => upstream.close(() => r()));
  }
});

test('a relaying `charms server` whose SVC_PROVE_API_URL is itself answers at once: 508 RELAY_LOOP naming the setting', async (t) => {
  if (!sharedOrSkip(t)) return;
  const { startCliServer } = await import('../testing/cli.js');
  const v = readSharedJson('vectors', 'prove-request-vectors.json');
  // a free loopback port, so the server's own URL can be in its environment
  const probe = http.createServer();
  const port = await listen(probe);
  await new Promise<void>((r) => probe.close(() => r()));
  const env = { PATH: process.env.PATH ?? '', SVC_PROVE_API_URL: `http://127.0.0.1:${port}/spells/prove` };
  const { child } = await startCliServer(['server', '--ip', '127.0.0.1', '--port', String(port)], env);
  try {
    // one request, no retries to wait for: the loop is seen on the second hop and is final
    const r = await h1(port, 'POST', '/spells/prove', v.full_request_json_text, { 'content-type': 'application/json' });
    assert.equal(r.status, 508, r.body.toString());
    const e = JSON.parse(r.body.toString());
    assert.equal(e.code, 'RELAY_LOOP');
    assert.match(e.error, /relay loop: this server forwards prove requests to SVC_PROVE_API_URL, which leads back to this server/);
    // and the server still answers, /ready naming the loop (not OK while it can prove nothing)
    const ready = await h1(port, 'GET', '/ready');
    assert.equal(ready.status, 503);
    assert.match(ready.body.toString(), /^NOT READY: relay loop: the upstream proving service \(SVC_PROVE_API_URL\)/);
  } finally {
    child.kill();
  }
});
