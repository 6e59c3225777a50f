/**
 * `GET /metrics` after real requests: the proving server (the real pipeline with mock proofs, its
 * cache), the query service, the Prover Network client against the fake network; and the
 * exposure settings (public port, a listener of its own, off).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startProveServer } from '../prove-server/server.js';
import { MemoryCache } from './cache.js';
import { startMetricsServer } from './metrics-http.js';
import { bodyHandler, LocalProveService } from '../prover/service.js';
import { MockBackend } from '../prover/backend.js';
import { startQueryServer } from '../query/service.js';
import { shutdownRunner } from '../runner/index.js';
import { loadSettings, metricsAddrOf } from '../settings/settings.js';
import { FakeProverNetwork } from '../testing/fake-prover-network.js';
import { h1, h2 } from '../testing/http.js';
import { readSharedJson, sharedOrSkip } from '../testing/shared.js';
import { toHex } from '../util/bytes.js';
import { registerGauge } from '../util/metrics.js';
import { PROOF_WRAPPER_VK_HASH, SPELL_CHECKER_VK_HASH } from '../prover/network/charms.js';
import { NetworkClient } from '../prover/network/client.js';
import { stdinWithInput } from '../prover/network/bincode.js';
import { ProofMode } from '../prover/network/proto.js';
import { charmsSettings, proveOnNetwork } from '../prover/network/request.js';
import { NetworkSigner } from '../prover/network/signer.js';

after(() => shutdownRunner());

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parse(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** The sum of the samples named `name` whose labels include `want`. */
const value = (samples: Sample[], name: string, want: Record<string, string> = {}): number =>
  samples.filter((s) => s.name === name && Object.entries(want).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);

async function scrape(port: number, send = h1): Promise<Sample[]> {
  const r = await send(port, 'GET', '/metrics');
  assert.equal(r.status, 200);
  assert.match(String(r.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  return parse(r.body.toString());
}

test('the proving server: requests by route and status with latencies, proofs by backend and outcome, cache hits and misses', async (t) => {
  if (!sharedOrSkip(t)) return;
  const v = readSharedJson('vectors', 'prove-request-vectors.json');
  const service = new LocalProveService({ backend: new MockBackend() });
  const server = await startProveServer({ host: '127.0.0.1', port: 0, prove: bodyHandler(service), ready: () => service.ready(), cache: new MemoryCache() });
  // answers that are cached: a server whose prove function answers at once
  const cached = await startProveServer({
    host: '127.0.0.1',
    port: 0,
    prove: async () => new TextEncoder().encode('[{"bitcoin":"00"}]'),
    ready: async () => true,
    cache: new MemoryCache(),
  });
  try {
    const before = await scrape(server.port);
    const post = { 'content-type': 'application/json' };
    for (let i = 0; i < 2; i++) assert.equal((await h1(server.port, 'POST', '/spells/prove', v.full_request_json_text, post)).status, 400);
    assert.equal((await h2(server.port, 'GET', '/ready')).status, 200);
    assert.equal((await h1(server.port, 'GET', '/no/such/route/123')).status, 404);
    for (let i = 0; i < 3; i++) assert.equal((await h1(cached.port, 'POST', '/spells/prove', '{}', post)).status, 200);
    const after_ = await scrape(server.port, h2);
    const delta = (name: string, want: Record<string, string> = {}) => value(after_, name, want) - value(before, name, want);
    assert.equal(delta('charms_http_requests_total', { server: 'prove', route: '/spells/prove', method: 'POST', status: '400' }), 2);
    assert.equal(delta('charms_http_requests_total', { server: 'prove', route: '/spells/prove', method: 'POST', status: '200' }), 3);
    assert.equal(delta('charms_http_requests_total', { server: 'prove', route: '/ready', status: '200' }), 1);
    assert.equal(delta('charms_http_requests_total', { server: 'prove', route: 'other', status: '404' }), 1, 'unknown paths share one label');
    assert.ok(!after_.some((s) => (s.labels.route ?? '').includes('123')));
    assert.equal(delta('charms_http_request_duration_seconds_count', { server: 'prove', route: '/spells/prove', method: 'POST' }), 5);
    assert.ok(delta('charms_http_request_duration_seconds_sum', { server: 'prove', route: '/spells/prove' }) > 0);
    assert.equal(delta('charms_proofs_total', { backend: 'mock', outcome: 'INVALID_SPELL' }), 2);
    assert.equal(delta('charms_proof_duration_seconds_count', { backend: 'mock' }), 2);
    assert.equal(value(after_, 'charms_proofs_in_flight', { backend: 'mock' }), 0);
    assert.equal(delta('charms_cache_misses_total', { cache: 'proof' }), 1, 'the first of the identical requests is computed');
    assert.equal(delta('charms_cache_hits_total', { cache: 'proof' }), 2, 'the next two come from the cache');
    assert.equal(delta('charms_cache_hit_bytes_total', { cache: 'proof' }), 2 * 18);
    assert.equal(delta('charms_cache_miss_bytes_total', { cache: 'proof' }), 18);
    // the state gauges are there: bodies held, worker pools, process
    for (const name of ['charms_inflight_body_bytes', 'charms_process_resident_memory_bytes', 'charms_nodejs_eventloop_lag_seconds'])
      assert.ok(
        after_.some((s) => s.name === name),
        name,
      );
  } finally {
    await server.close();
    await cached.close();
  }
});

test('the query service: routes (never a txid), statuses and its cache; /metrics off or on a listener of its own', async (t) => {
  if (!sharedOrSkip(t)) return;
  const server = await startQueryServer({ host: '127.0.0.1', port: 0 });
  const off = await startQueryServer({ host: '127.0.0.1', port: 0, metrics: 'off' });
  const own = await startMetricsServer('127.0.0.1', 0);
  try {
    const before = await scrape(own.port);
    const txid = 'ab'.repeat(32);
    assert.equal((await h1(server.port, 'GET', `/spells/${txid}`)).status, 503, 'no source configured');
    assert.equal((await h1(server.port, 'GET', '/spells/nothex')).status, 400);
    assert.equal((await h1(server.port, 'GET', '/')).status, 200);
    assert.equal((await h1(off.port, 'GET', '/metrics')).status, 404, 'SVC_METRICS_ADDR set elsewhere: not on the public port');
    const after_ = await scrape(own.port);
    const delta = (name: string, want: Record<string, string>) => value(after_, name, want) - value(before, name, want);
    assert.equal(delta('charms_http_requests_total', { server: 'query', route: '/spells/:txid', method: 'GET', status: '503' }), 1);
    assert.equal(delta('charms_http_requests_total', { server: 'query', route: '/spells/:txid', method: 'GET', status: '400' }), 1);
    assert.equal(delta('charms_http_requests_total', { server: 'query', route: '/', status: '200' }), 1);
    assert.equal(delta('charms_http_requests_total', { server: 'query', route: '/metrics', status: '404' }), 1);
    assert.ok(!after_.some((s) => Object.values(s.labels).some((l) => l.includes(txid))), 'no txid in any label');
    assert.equal((await h1(own.port, 'GET', '/spells/x')).status, 404, 'the metrics listener serves /metrics only');
    // the index (and any component) adds gauges read at scrape time
    let height = 840_000;
    registerGauge('charms_test_index_height', 'a test gauge', () => height);
    height++;
    assert.equal(value(await scrape(own.port), 'charms_test_index_height'), 840_001);
  } finally {
    await server.close();
    await off.close();
    await own.close();
  }
});

test('the Prover Network client: stage durations and requests made, by method and outcome', async () => {
  const signer = new NetworkSigner('4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318');
  const net = await new FakeProverNetwork({
    variant: 'base',
    account: signer.address,
    programs: new Set([toHex(SPELL_CHECKER_VK_HASH), toHex(PROOF_WRAPPER_VK_HASH)]),
    script: () => ({ kind: 'fulfilled', proof: Uint8Array.of(1, 2), afterPolls: 1 }),
  }).start();
  const client = new NetworkClient(net.rpcUrl, signer, { retry: { initialMs: 1, maxDelayMs: 1, totalMs: 0 } });
  const own = await startMetricsServer('127.0.0.1', 0);
  try {
    const before = await scrape(own.port);
    await proveOnNetwork(
      { client, settings: { ...charmsSettings('base'), pollIntervalMs: 1 }, stage: 'stage 2' },
      PROOF_WRAPPER_VK_HASH,
      stdinWithInput(Uint8Array.of(1)),
      ProofMode.GROTH16,
    );
    const after_ = await scrape(own.port);
    const delta = (name: string, want: Record<string, string>) => value(after_, name, want) - value(before, name, want);
    assert.equal(delta('charms_network_stage_duration_seconds_count', { stage: 'groth16', outcome: 'ok' }), 1);
    assert.equal(delta('charms_network_requests_total', { method: 'RequestProof', outcome: 'ok' }), 1);
    assert.equal(delta('charms_network_requests_total', { method: 'GetProofRequestStatus', outcome: 'ok' }), 2);
    assert.equal(delta('charms_network_requests_total', { method: 'artifact_upload', outcome: 'ok' }), 1);
    assert.equal(delta('charms_network_requests_total', { method: 'proof_download', outcome: 'ok' }), 1);
  } finally {
    client.close();
    await net.stop();
    await own.close();
  }
});

test('SVC_METRICS_ADDR: public by default, off, or an address of its own', () => {
  assert.equal(loadSettings({}).metrics, 'public');
  assert.equal(metricsAddrOf({ SVC_METRICS_ADDR: 'off' }), 'off');
  assert.deepEqual(metricsAddrOf({ SVC_METRICS_ADDR: ':9464' }), { host: '127.0.0.1', port: 9464 });
  assert.deepEqual(metricsAddrOf({ SVC_METRICS_ADDR: '0.0.0.0:9464' }), { host: '0.0.0.0', port: 9464 });
  assert.deepEqual(metricsAddrOf({ SVC_METRICS_ADDR: '[::1]:9464' }), { host: '::1', port: 9464 });
  for (const bad of ['9464', 'host:99999', 'a b:1']) assert.throws(() => metricsAddrOf({ SVC_METRICS_ADDR: bad }), { code: 'CONFIG' });
});
