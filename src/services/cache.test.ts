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
  assert.throws(() => new RedisCache('http://127.0.0.1:6379'), (e: Error & { code?: string }) => e.code === 'CONFIG');
});
