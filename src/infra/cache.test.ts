import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { RedisCache } from './cache.js';
import { createLogger } from './log.js';
import { startRedis } from '../testing/redis.js';
import { hasRedisServer, skipOrFail } from '../testing/require.js';
import { waitFor } from '../testing/wait.js';

test('a paused Redis (SIGSTOP) costs one command timeout, not one per request; the cache comes back after SIGCONT', async (t) => {
  if (!hasRedisServer()) return skipOrFail(t, 'redis-server not installed (CI installs it)');
  const redis = await startRedis();
  const lines: string[] = [];
  const log = createLogger('info', (l) => void lines.push(l));
  const cache = new RedisCache(redis.url, { commandTimeoutMs: 300, probeIntervalMs: 100, log });
  try {
    assert.equal(await cache.ready(), true);
    let computed = 0;
    const compute = async () => (computed++, Uint8Array.of(computed));
    await cache.getOrCompute('warm', compute);
    redis.proc.kill('SIGSTOP');
    for (let i = 0; i < 5; i++) assert.deepEqual([...(await cache.getOrCompute(`k${i}`, compute))], [computed]);
    assert.equal(computed, 6, 'every request was computed');
    const timeouts = lines.filter((l) => l.includes('cache unavailable'));
    assert.equal(timeouts.length, 1, `one failure noticed, later requests skip Redis: ${timeouts.join('')}`);
    assert.equal(await cache.ready(), false);
    redis.proc.kill('SIGCONT');
    await waitFor(() => cache.ready(), 'the cache to see Redis again', { intervalMs: 50 });
    assert.ok(lines.some((l) => l.includes('cache available again')));
    await cache.getOrCompute('after', compute);
    await cache.getOrCompute('after', compute);
    assert.equal(computed, 7, 'the cache works again');
  } finally {
    await cache.close();
    redis.proc.kill('SIGCONT');
    redis.proc.kill('SIGKILL');
  }
});

test('a CACHE_URL that is not Redis (garbage replies, or a server that hangs up) degrades like a dead Redis', async () => {
  for (const behave of ['garbage', 'hangup', 'error-reply'] as const) {
    const fake = net.createServer((s) => {
      s.on('error', () => {});
      s.on('data', () => {
        if (behave === 'garbage') s.write('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
        else if (behave === 'error-reply') s.write('-ERR unknown command\r\n');
        else s.destroy();
      });
    });
    await new Promise<void>((r) => fake.listen(0, '127.0.0.1', () => r()));
    const cache = new RedisCache(`redis://127.0.0.1:${(fake.address() as net.AddressInfo).port}`, { commandTimeoutMs: 300, connectTimeoutMs: 300 });
    try {
      for (let i = 0; i < 3; i++) assert.deepEqual([...(await cache.getOrCompute(`k${i}`, async () => Uint8Array.of(i)))], [i], behave);
      assert.equal(await cache.ready(), false, behave);
    } finally {
      await cache.close();
      fake.close();
    }
  }
});

test('rediss:// is accepted (TLS by ioredis); other schemes are configuration errors', async () => {
  const c = new RedisCache('rediss://127.0.0.1:1', { connectTimeoutMs: 200 });
  await c.close();
  assert.throws(
    () => new RedisCache('http://127.0.0.1:6379'),
    (e: Error & { code?: string }) => e.code === 'CONFIG',
  );
});

// ---- issue 24 items 1 and 7: memory bounded in bytes; Redis entries are not trusted

import { Redis } from 'ioredis';
import { MemoryCache } from './cache.js';
import { startProveServer } from '../prove-server/server.js';
import { h1 } from '../testing/http.js';
import { createHash } from 'node:crypto';

test('the in-process cache is bounded in bytes: 40 answers of 8 MiB keep at most the configured 64 MiB', async () => {
  const cache = new MemoryCache({ maxBytes: 64 * 1024 * 1024 });
  for (let i = 0; i < 40; i++) await cache.getOrCompute(`k${i}`, async () => new Uint8Array(8 * 1024 * 1024).fill(i));
  assert.ok(cache.bytes <= 64 * 1024 * 1024, `held ${cache.bytes}`);
  assert.equal(cache.size, 7, 'the most recent ones (each 8 MiB plus its key)');
  // the newest is a hit, the oldest was evicted
  let computed = 0;
  await cache.getOrCompute('k39', async () => (computed++, new Uint8Array(1)));
  await cache.getOrCompute('k0', async () => (computed++, new Uint8Array(1)));
  assert.equal(computed, 1);
  // an answer larger than the bound is answered but not kept
  const big = await cache.getOrCompute('big', async () => new Uint8Array(65 * 1024 * 1024));
  assert.equal(big.length, 65 * 1024 * 1024);
  assert.ok(cache.bytes <= 64 * 1024 * 1024);
  // a small view into a large buffer is kept as its own bytes, not pinning the buffer
  const view = new Uint8Array(32 * 1024 * 1024).subarray(0, 10);
  const bounded = new MemoryCache({ maxBytes: 1024 });
  await bounded.getOrCompute('v', async () => view);
  const again = await bounded.getOrCompute('v', async () => new Uint8Array(0));
  assert.equal(again.buffer.byteLength, 10);
  // the entry count bound still holds
  const few = new MemoryCache({ maxEntries: 3 });
  for (let i = 0; i < 10; i++) await few.getOrCompute(`k${i}`, async () => Uint8Array.of(i));
  assert.equal(few.size, 3);
});

const SECRET = 'the cluster secret';
const enc = new TextEncoder();

test('Redis: a forged or garbage entry under a key is never served; entries authenticate with the shared secret only', async (t) => {
  if (!hasRedisServer()) return skipOrFail(t, 'redis-server not installed (CI installs it)');
  const redis = await startRedis();
  const raw = new Redis(redis.url);
  const a = new RedisCache(redis.url, { secret: SECRET });
  const b = new RedisCache(redis.url, { secret: SECRET });
  const other = new RedisCache(redis.url, { secret: 'another secret' });
  try {
    const real = enc.encode('[{"bitcoin":"the real answer"}]');
    for (const forged of ['[{"bitcoin":"pays the attacker"}]', '\u0000\u0001garbage', '']) {
      const key = `k-${forged.length}`;
      await raw.set(`svc:result:${key}`, forged);
      let computed = 0;
      const v = await a.getOrCompute(key, async () => (computed++, real));
      assert.deepEqual(Buffer.from(v).toString(), Buffer.from(real).toString(), JSON.stringify(forged));
      assert.equal(computed, 1);
      // the stored entry now authenticates: served to a server with the same secret without computing
      assert.deepEqual(Buffer.from(await b.getOrCompute(key, async () => enc.encode('recomputed'))).toString(), Buffer.from(real).toString());
      // a forged copy of a real entry moved to another key does not authenticate there
      await raw.set('svc:result:moved', (await raw.getBuffer(`svc:result:${key}`))!);
      assert.equal(Buffer.from(await b.getOrCompute('moved', async () => enc.encode('fresh'))).toString(), 'fresh');
      // a server with another secret does not take it either
      assert.equal(Buffer.from(await other.getOrCompute(key, async () => enc.encode('mine'))).toString(), 'mine');
    }
  } finally {
    raw.disconnect();
    await Promise.all([a.close(), b.close(), other.close()]);
    redis.proc.kill('SIGKILL');
  }
});

test('Redis: a lock without TTL does not hang a request; a live holder is waited for at most maxLockWaitMs', async (t) => {
  if (!hasRedisServer()) return skipOrFail(t, 'redis-server not installed (CI installs it)');
  const redis = await startRedis();
  const raw = new Redis(redis.url);
  const lines: string[] = [];
  const cache = new RedisCache(redis.url, { secret: SECRET, leaseMs: 300, log: createLogger('info', (l) => void lines.push(l)) });
  const holder = new RedisCache(redis.url, { secret: SECRET, leaseMs: 300 });
  const waiter = new RedisCache(redis.url, { secret: SECRET, leaseMs: 300, maxLockWaitMs: 500 });
  try {
    await raw.set('svc:lock:stuck', 'forever'); // no expiry: no server writes such a lock
    const v = await cache.getOrCompute('stuck', async () => Uint8Array.of(1));
    assert.deepEqual([...v], [1]);
    assert.ok(lines.some((l) => l.includes('lock without a lease')));
    // a holder that keeps renewing for long: the waiter stops waiting after 500 ms and computes
    let release!: () => void;
    const slow = holder.getOrCompute('slow', () => new Promise<Uint8Array>((r) => (release = () => r(Uint8Array.of(2)))));
    await waitFor(async () => (await raw.exists('svc:lock:slow')) === 1, 'the holder took the lock');
    const t0 = performance.now();
    const mine = await waiter.getOrCompute('slow', async () => Uint8Array.of(3));
    assert.deepEqual([...mine], [3]);
    assert.ok(performance.now() - t0 >= 500);
    release();
    assert.deepEqual([...(await slow)], [2]);
  } finally {
    raw.disconnect();
    await Promise.all([cache.close(), holder.close(), waiter.close()]);
    redis.proc.kill('SIGKILL');
  }
});

test('the proving server never answers a forged Redis entry written before the request was sent', async (t) => {
  if (!hasRedisServer()) return skipOrFail(t, 'redis-server not installed (CI installs it)');
  const redis = await startRedis();
  const raw = new Redis(redis.url);
  const cache = new RedisCache(redis.url, { secret: SECRET });
  const server = await startProveServer({ host: '127.0.0.1', port: 0, cache, ready: async () => true, prove: async () => enc.encode('[{"bitcoin":"00"}]') });
  try {
    const body = '{"the":"request"}';
    const key = createHash('sha256').update('json:').update(body).digest('hex');
    await raw.set(`svc:result:${key}`, '[{"bitcoin":"pays the attacker"}]');
    const r = await h1(server.port, 'POST', '/spells/prove', body);
    assert.equal(r.status, 200);
    assert.equal(r.body.toString(), '[{"bitcoin":"00"}]');
  } finally {
    await server.close();
    raw.disconnect();
    await cache.close();
    redis.proc.kill('SIGKILL');
  }
});
