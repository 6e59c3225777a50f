/**
 * A hostile artifact store and a network naming hostile URLs, on loopback: downloads that trickle,
 * stall or flood are cut by their limits (per download and all downloads together), and uploads
 * and downloads go only to public https hosts, the gateway's own host or hosts the operator lists —
 * never to another loopback or private address, a `data:` URL or across a redirect.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CharmsError } from '../../errors.js';
import { FakeProverNetwork, padded, type Outcome } from '../../testing/fake-prover-network.js';
import { startRedis } from '../../testing/redis.js';
import { hasRedisServer, skipOrFail } from '../../testing/require.js';
import { RedisCache } from '../../infra/cache.js';
import { artifactHostsOf } from '../../settings/settings.js';
import { toHex } from '../../util/bytes.js';
import { ByteBudget, isPublicAddress, type ArtifactLimits } from './artifact-http.js';
import { decodeGroth16Proof } from './bincode.js';
import { PROOF_WRAPPER_VK_HASH, SPELL_CHECKER_VK_HASH } from './charms.js';
import { NetworkClient, type ClientOptions } from './client.js';
import { GrpcCode, GrpcError } from './grpc.js';
import { ProofMode, ProtoFields, decodeStatus, tagsUpTo } from './proto.js';
import { encodeStatus } from '../../testing/proto-server.js';
import { charmsSettings, proveOnNetwork, type ProveContext } from './request.js';
import { stdinWithInput } from './bincode.js';
import { NetworkSigner } from './signer.js';

const signer = new NetworkSigner('4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318');
const ALL = new Set([toHex(SPELL_CHECKER_VK_HASH), toHex(PROOF_WRAPPER_VK_HASH)]);
const STDIN = stdinWithInput(Uint8Array.of(1, 2, 3));

async function setup(outcome: Outcome, opts: ClientOptions = {}, limits: Partial<ArtifactLimits> = {}) {
  const net = await new FakeProverNetwork({ variant: 'base', account: signer.address, programs: ALL, script: () => outcome }).start();
  const client = new NetworkClient(net.rpcUrl, signer, {
    retry: { initialMs: 1, maxDelayMs: 2, totalMs: 10 },
    ...opts,
    artifacts: { stallMs: 150, totalMs: 1500, budget: new ByteBudget(1 << 20), ...limits },
  });
  const ctx: ProveContext = {
    client,
    settings: { ...charmsSettings('base'), pollIntervalMs: 1, maxProofBytes: { compressed: 4096, groth16: 1024 } },
    stage: 'stage 1',
  };
  return {
    net,
    client,
    prove: () => proveOnNetwork(ctx, SPELL_CHECKER_VK_HASH, STDIN, ProofMode.COMPRESSED),
    async close() {
      client.close();
      await net.stop();
    },
  };
}

/** A loopback HTTP server recording what reached it. */
async function hostile(handler: http.RequestListener = (_q, r) => r.writeHead(200).end('INTERNAL PAGE')) {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    hits,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const refusedWith = (re: RegExp) => (e: unknown) => {
  assert.ok(e instanceof CharmsError || e instanceof Error, String(e));
  assert.match((e as Error).message, re);
  return true;
};

test('a download that stops making progress is cut after the stall limit; a trickle after the total limit', { timeout: 20_000 }, async () => {
  const s = await setup({ kind: 'fulfilled', proof: new Uint8Array(100), afterPolls: 0 });
  const open: http.ServerResponse[] = [];
  try {
    s.net.serveProof = (res) => {
      open.push(res);
      res.writeHead(200, { 'content-length': '100' });
      res.write(Buffer.alloc(10)); // then silence
    };
    await assert.rejects(s.prove(), refusedWith(/made no progress for 150 ms|did not finish within 1500 ms/));
    const timers: NodeJS.Timeout[] = [];
    s.net.serveProof = (res) => {
      open.push(res);
      res.writeHead(200);
      const t = setInterval(() => res.write(Buffer.alloc(1)), 20); // a byte every 20 ms, forever
      timers.push(t);
      res.on('close', () => clearInterval(t));
    };
    await assert.rejects(s.prove(), refusedWith(/did not finish within 1500 ms/));
    for (const t of timers) clearInterval(t);
  } finally {
    for (const r of open) r.destroy();
    await s.close();
  }
});

test('a proof download over the cap of its mode (plus the stdin) is refused, declared or streamed', { timeout: 20_000 }, async () => {
  const s = await setup({ kind: 'fulfilled', proof: new Uint8Array(4096 + STDIN.length + 1), afterPolls: 0 });
  try {
    let sent = 0;
    s.net.serveProof = (res, proof) => {
      res.writeHead(200, { 'content-length': String(proof.length) });
      res.write(proof.subarray(0, 1)); // the rest never comes: refused by the declaration alone
      sent++;
    };
    await assert.rejects(s.prove(), refusedWith(/declares 4\d{3} bytes, over the limit of 4\d{3}/));
    assert.equal(sent, 1);
    s.net.serveProof = (res, proof) => {
      res.writeHead(200); // no length: chunked
      res.end(proof);
    };
    await assert.rejects(s.prove(), refusedWith(/over the limit of \d+ bytes/));
  } finally {
    await s.close();
  }
  const ok = await setup({ kind: 'fulfilled', proof: new Uint8Array(4096 + STDIN.length), afterPolls: 0 });
  try {
    assert.equal((await ok.prove()).length, 4096 + STDIN.length, 'a proof at the cap is taken');
  } finally {
    await ok.close();
  }
});

test('one byte budget bounds all downloads in flight; it is given back when they end', { timeout: 20_000 }, async () => {
  const budget = new ByteBudget(64 * 1024);
  const a = await setup({ kind: 'fulfilled', proof: new Uint8Array(48 * 1024), afterPolls: 0 }, {}, { budget, stallMs: 60_000, totalMs: 60_000 });
  const b = await setup({ kind: 'fulfilled', proof: new Uint8Array(48 * 1024), afterPolls: 0 }, {}, { budget });
  const settings = { ...charmsSettings('base'), pollIntervalMs: 1, maxProofBytes: { compressed: 1 << 20, groth16: 1024 } };
  let release: (() => void) | undefined;
  try {
    a.net.serveProof = (res, proof) => {
      res.writeHead(200);
      res.write(proof); // held in flight until the test releases it
      release = () => res.end();
    };
    const first = proveOnNetwork({ client: a.client, settings, stage: 'a' }, SPELL_CHECKER_VK_HASH, STDIN, ProofMode.COMPRESSED);
    for (let i = 0; i < 500 && budget.inUse < 48 * 1024; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(budget.inUse, 48 * 1024, 'the first download holds its bytes');
    await assert.rejects(
      proveOnNetwork({ client: b.client, settings, stage: 'b' }, SPELL_CHECKER_VK_HASH, STDIN, ProofMode.COMPRESSED),
      refusedWith(/too many proof bytes are being downloaded at once/),
    );
    release!();
    assert.equal((await first).length, 48 * 1024);
    assert.equal(budget.inUse, 0);
    assert.equal((await proveOnNetwork({ client: b.client, settings, stage: 'b' }, SPELL_CHECKER_VK_HASH, STDIN, ProofMode.COMPRESSED)).length, 48 * 1024);
    assert.equal(budget.inUse, 0);
  } finally {
    await a.close();
    await b.close();
  }
});

test('a stalled download ends its computation: the Redis lock is released, not renewed forever', { timeout: 30_000 }, async (t) => {
  if (!hasRedisServer()) return skipOrFail(t, 'redis-server is not installed');
  const redis = await startRedis();
  const s = await setup({ kind: 'fulfilled', proof: new Uint8Array(100), afterPolls: 0 });
  const cache = new RedisCache(redis.url, { leaseMs: 90 });
  const { Redis } = await import('ioredis');
  const probe = new Redis(redis.url, { maxRetriesPerRequest: 0 });
  const open: http.ServerResponse[] = [];
  try {
    s.net.serveProof = (res) => {
      open.push(res);
      res.writeHead(200);
      res.write(Buffer.alloc(1));
    };
    const p = cache.getOrCompute('stalled', () => s.prove());
    for (let i = 0; i < 500 && (await probe.keys('svc:lock:*')).length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(await probe.keys('svc:lock:*'), ['svc:lock:stalled'], 'the lock is held while the download runs');
    await assert.rejects(p, refusedWith(/made no progress for 150 ms|did not finish within 1500 ms/));
    assert.deepEqual(await probe.keys('svc:lock:*'), [], 'released');
  } finally {
    for (const r of open) r.destroy();
    probe.disconnect();
    await cache.close();
    await s.close();
    redis.proc.kill();
  }
});

test('artifact URLs: only public https hosts, the gateway host or listed hosts; never other loopback, data: or cross-host redirects', {
  timeout: 30_000,
}, async () => {
  const evil = await hostile();
  const proof = new Uint8Array(64);
  try {
    const refusedUri = async (uri: string, why: RegExp) => {
      const s = await setup({ kind: 'fulfilled', proof, afterPolls: 0, proofUri: uri });
      try {
        await assert.rejects(s.prove(), (e: unknown) => {
          assert.ok(e instanceof CharmsError, String(e));
          assert.match(e.message, why, uri);
          assert.ok(!e.message.includes('INTERNAL'), 'no upstream bytes');
          return true;
        });
      } finally {
        await s.close();
      }
    };
    await refusedUri(`http://localhost:${evil.port}/x`, /plain http to a host other than the gateway/);
    await refusedUri(`https://localhost:${evil.port}/x`, /resolves to a loopback, link-local or private address/);
    await refusedUri(`https://127.0.0.2:${evil.port}/x`, /is a loopback, link-local or private address/);
    await refusedUri(`https://[::1]:${evil.port}/x`, /is a loopback, link-local or private address/);
    await refusedUri(`https://169.254.169.254/latest/meta-data`, /is a loopback, link-local or private address/);
    await refusedUri('data:application/octet-stream;base64,SU5URQ==', /scheme data: is not https/);
    await refusedUri('file:///etc/passwd', /scheme file: is not https/);
    assert.deepEqual(evil.hits, [], 'nothing reached the other loopback host');

    // the gateway's own host redirecting elsewhere
    const s = await setup({ kind: 'fulfilled', proof, afterPolls: 0 });
    try {
      s.net.serveProof = (res) => res.writeHead(302, { location: `http://localhost:${evil.port}/x` }).end();
      await assert.rejects(s.prove(), refusedWith(/redirected to another host: refused/));
      s.net.serveProof = (res, p) => {
        if (!res.req.url?.endsWith('?moved')) res.writeHead(307, { location: `${res.req.url}?moved` }).end();
        else res.writeHead(200).end(p);
      };
      assert.equal((await s.prove()).length, 64, 'a redirect within the store is followed');
      // uploads too: the stdin never goes to a host the network names on loopback
      s.net.uploadBase = `http://localhost:${evil.port}`;
      await assert.rejects(s.prove(), refusedWith(/stdin upload that is refused: it is plain http/));
    } finally {
      await s.close();
    }
    assert.deepEqual(evil.hits, []);

    // listed explicitly by the operator: allowed
    const listed = await setup(
      { kind: 'fulfilled', proof, afterPolls: 0 },
      { artifactHosts: artifactHostsOf({ SVC_ARTIFACT_HOSTS: `http://localhost:${evil.port}` }) },
    );
    try {
      listed.net.uploadBase = `http://localhost:${evil.port}`;
      await assert.rejects(listed.prove()); // the hostile host is no artifact store, but it was reached
      assert.deepEqual(
        evil.hits.map((h: string) => h.split(' ')[0]),
        ['PUT'],
      );
    } finally {
      await listed.close();
    }
  } finally {
    await evil.close();
  }
});

test('the bytes of a malformed proof are never echoed (no "got tag <first bytes>")', () => {
  const page = new TextEncoder().encode('INTERNAL SERVER PAGE, secret=hunter2 ..........');
  assert.throws(
    () => decodeGroth16Proof(page),
    (e: Error) => {
      assert.ok(!/\d{6,}|INTE|hunter2/.test(e.message), e.message);
      return true;
    },
  );
});

test('public addresses: loopback, private, link-local, mapped and reserved ranges are not', () => {
  for (const a of [
    '127.0.0.1',
    '127.9.9.9',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '64:ff9b::a00:1',
    'not an ip',
  ])
    assert.equal(isPublicAddress(a), false, a);
  for (const a of ['1.1.1.1', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111']) assert.equal(isPublicAddress(a), true, a);
});

test('SVC_ARTIFACT_HOSTS: hosts, ports and schemes; malformed entries are a CONFIG error', () => {
  assert.deepEqual(artifactHostsOf({ SVC_ARTIFACT_HOSTS: 'store.lan, http://minio:9000 https://[fd00::5]:8443' }), [
    { host: 'store.lan', http: false },
    { host: 'minio', http: true, port: 9000 },
    { host: '[fd00::5]', http: false, port: 8443 },
  ]);
  assert.deepEqual(artifactHostsOf({}), []);
  assert.throws(
    () => artifactHostsOf({ SVC_ARTIFACT_HOSTS: 'ftp://x' }),
    (e: CharmsError) => e.code === 'CONFIG',
  );
  assert.throws(
    () => artifactHostsOf({ SVC_ARTIFACT_HOSTS: 'https://x/path' }),
    (e: CharmsError) => e.code === 'CONFIG',
  );
});

test('gRPC replies: a status padded with megabytes of unknown fields is refused by its method cap before any decoding', { timeout: 20_000 }, async () => {
  const s = await setup({ kind: 'fulfilled', proof: new Uint8Array(10), afterPolls: 3 });
  try {
    s.net.padding.set('GetProofRequestStatus', 8 * 1024 * 1024);
    await assert.rejects(
      s.prove(),
      (e: unknown) => e instanceof GrpcError && e.code === GrpcCode.RESOURCE_EXHAUSTED && /response over 65536 bytes/.test(e.message),
    );
    s.net.padding.set('GetProofRequestStatus', 60 * 1024); // under the cap: decoded, the padding skipped
    s.net.padding.set('GetNonce', 3000);
    assert.equal((await s.prove()).length, 10);
    s.net.padding.set('GetNonce', 5000);
    await assert.rejects(s.client.getNonce(), (e: unknown) => e instanceof GrpcError && e.code === GrpcCode.RESOURCE_EXHAUSTED);
  } finally {
    await s.close();
  }
});

test('protobuf: unknown fields of a reply are stepped over, never materialized', () => {
  const status = { fulfillmentStatus: 3, executionStatus: 2, requestTxHash: new Uint8Array(32).fill(7), deadline: 99n, proofUri: 'https://store.example/p' };
  const msg = padded(encodeStatus(status), 3 * 100_000);
  const f = ProtoFields.parse(msg, tagsUpTo(7));
  assert.deepEqual(
    [...f.fields.keys()].sort((a, b) => a - b),
    [1, 2, 3, 4, 6],
    'only the known fields are kept',
  );
  assert.ok([...f.fields.values()].every((l) => l.length === 1));
  assert.deepEqual(decodeStatus(msg), status);
  // without a known set every field is kept (the fake network's own parsing)
  assert.equal(ProtoFields.parse(msg).fields.get(1000)?.length, 100_000);
  // unknown fields are still checked for framing
  assert.throws(() => ProtoFields.parse(Uint8Array.of(0xc0, 0x3e), tagsUpTo(7)), /truncated varint/);
  assert.throws(() => ProtoFields.parse(Uint8Array.of(0xc2, 0x3e, 0x05, 1), tagsUpTo(7)), /length past the end/);
});
