import http2 from 'node:http2';
import { hasRedisServer, skipOrFail } from '../testing/require.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';
import { startProveServer } from './server.js';
import { DEFAULT_LEASE_MS, MemoryCache, RedisCache } from '../infra/cache.js';
import { Redis } from 'ioredis';
import { startRedis } from '../testing/redis.js';
import { CharmsError } from '../errors.js';
import { h1, h2, type Reply } from '../testing/http.js';
import { waitFor } from '../testing/wait.js';

test('one port speaks HTTP/1.1 and h2c; JSON/CBOR negotiation; error mapping; CORS; /ready', async () => {
  let calls = 0;
  const server = await startProveServer({
    host: '127.0.0.1',
    port: 0,
    cache: new MemoryCache(),
    ready: async () => true,
    prove: async ({ body, format }) => {
      calls++;
      const text = Buffer.from(body).toString();
      if (text === 'bad') throw new CharmsError('INVALID_SPELL', 'spell is wrong');
      if (text === 'transient') throw new CharmsError('PROVER_TRANSIENT', 'transient prover failure: try again');
      if (text === 'boom') throw new Error('unexpected');
      return new TextEncoder().encode(format === 'cbor' ? 'CBOR' : '[{"bitcoin":"00"}]');
    },
  });
  try {
    for (const send of [h1, h2]) {
      const ready = await send(server.port, 'GET', '/ready');
      assert.equal(ready.status, 200);
      assert.equal(ready.body.toString(), 'OK');
      const j = await send(server.port, 'POST', '/spells/prove', 'x', { 'content-type': 'application/json' });
      assert.equal(j.status, 200);
      assert.equal(j.headers['content-type'], 'application/json');
      assert.equal(j.body.toString(), '[{"bitcoin":"00"}]');
      const c = await send(server.port, 'POST', '/spells/prove', 'x', { 'content-type': 'application/cbor; charset=binary' });
      assert.equal(c.headers['content-type'], 'application/cbor');
      assert.equal(c.body.toString(), 'CBOR');
      const bad = await send(server.port, 'POST', '/spells/prove', 'bad');
      assert.equal(bad.status, 400);
      assert.deepEqual(JSON.parse(bad.body.toString()), { error: 'spell is wrong', code: 'INVALID_SPELL' });
      assert.equal((await send(server.port, 'POST', '/spells/prove', 'transient')).status, 500);
      const boom = await send(server.port, 'POST', '/spells/prove', 'boom');
      assert.equal(boom.status, 500);
      assert.equal(JSON.parse(boom.body.toString()).code, 'INTERNAL');
      assert.equal((await send(server.port, 'GET', '/nope')).status, 404);
      const pre = await send(server.port, 'OPTIONS', '/spells/prove', undefined, { origin: 'http://x', 'access-control-request-method': 'POST' });
      assert.equal(pre.headers['access-control-allow-origin'], '*');
      assert.equal(pre.headers['access-control-max-age'], '3600');
    }
    const before = calls;
    await h1(server.port, 'POST', '/spells/prove', 'x');
    assert.equal(calls, before, 'identical request answered from the cache');
    await h1(server.port, 'POST', '/spells/prove', 'y');
    assert.equal(calls, before + 1, 'a different request is proved');
  } finally {
    await server.close();
  }
});

test('a 33 MiB body is refused with 413 without being read whole (Content-Length and chunked)', async () => {
  let proveCalls = 0;
  const server = await startProveServer({ host: '127.0.0.1', port: 0, ready: async () => true, prove: async () => (proveCalls++, new Uint8Array()) });
  try {
    const size = 33 * 1024 * 1024;
    // declared length: answered before any body byte is sent
    const declared = await new Promise<Reply>((resolve, reject) => {
      const sock = net.connect(server.port, '127.0.0.1', () => sock.write(`POST /spells/prove HTTP/1.1\r\nHost: x\r\nContent-Length: ${size}\r\n\r\n`));
      let data = '';
      sock.on('data', (d) => {
        data += d.toString();
        if (data.includes('\r\n\r\n') && data.includes('}')) {
          sock.destroy();
          resolve({ status: Number(data.split(' ')[1]), headers: {}, body: Buffer.from(data.slice(data.indexOf('\r\n\r\n') + 4)) });
        }
      });
      sock.on('error', reject);
    });
    assert.equal(declared.status, 413);
    assert.equal(JSON.parse(declared.body.toString()).code, 'PAYLOAD_TOO_LARGE');
    // chunked: the server answers 413 and closes while we are still sending
    let sent = 0;
    const chunked = await new Promise<number>((resolve) => {
      const req = http.request({ host: '127.0.0.1', port: server.port, method: 'POST', path: '/spells/prove', agent: false }, (res) => {
        resolve(res.statusCode!);
        res.resume();
        req.destroy();
      });
      req.on('error', () => {});
      const chunk = Buffer.alloc(1024 * 1024, 0x61);
      const pump = () => {
        while (sent < size) {
          sent += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });
    assert.equal(chunked, 413);
    assert.equal(proveCalls, 0);
    // h2c, declared and undeclared length: the 413 must arrive as a real response (a reset stream
    // or session error fails the test)
    const h2big = (declare: boolean) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        // the client buffers what it has not sent yet: let it hold the whole body
        const session = http2.connect(`http://127.0.0.1:${server.port}`, { maxSessionMemory: 128 });
        let status = 0;
        const chunks: Buffer[] = [];
        const done = (e?: Error) => {
          session.destroy();
          if (status === 0) reject(e ?? new Error('no HTTP/2 response before the stream ended'));
          else resolve({ status, body: Buffer.concat(chunks).toString() });
        };
        session.on('error', done);
        const req = session.request({ ':method': 'POST', ':path': '/spells/prove', ...(declare ? { 'content-length': String(size) } : {}) });
        req.on('response', (h) => (status = Number(h[':status'])));
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => done());
        req.on('error', done);
        const chunk = Buffer.alloc(1024 * 1024, 0x61);
        let left = size;
        const pump = () => {
          while (left > 0 && !req.destroyed) {
            left -= chunk.length;
            if (!req.write(chunk)) return void req.once('drain', pump);
          }
          if (!req.destroyed) req.end();
        };
        pump();
      });
    for (const declare of [true, false]) {
      const r = await h2big(declare);
      assert.equal(r.status, 413, `h2c, content-length ${declare ? 'declared' : 'absent'}`);
      assert.equal(JSON.parse(r.body).code, 'PAYLOAD_TOO_LARGE');
    }
    assert.equal(proveCalls, 0);
  } finally {
    await server.close();
  }
});

/** A Redis client for the test's own reads: gives up at once when Redis is gone (no reconnect loop). */
const redisClient = (url: string) => {
  const c = new Redis(url, { maxRetriesPerRequest: 0, retryStrategy: () => null, commandTimeout: 2000 });
  c.on('error', () => {});
  return c;
};
const countOf = async (url: string, key: string): Promise<number> => {
  const c = redisClient(url);
  try {
    return Number((await c.get(key)) ?? '0');
  } finally {
    c.disconnect();
  }
};
const lockKeyOf = (body: string) => `svc:lock:${createHash('sha256').update('json:').update(body).digest('hex')}`;

/** A prove server in a child process (src/testing/prove-server-child.ts); fails if it does not start in 20 s. */
function startChild(
  url: string,
  counter: string,
  delayMs: number,
  leaseMs: number | 'default',
): Promise<{ port: number; proc: ChildProcess; exited: Promise<void> }> {
  const script = fileURLToPath(new URL('../testing/prove-server-child.js', import.meta.url));
  const proc = spawn(process.execPath, [script, url, counter, String(delayMs), String(leaseMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the prove server child did not print its port within 20 s')), 20_000);
    proc.stdout!.once('data', (d) => {
      clearTimeout(timer);
      resolve({ port: Number(d.toString().trim()), proc, exited });
    });
    proc.once('exit', (c) => {
      clearTimeout(timer);
      reject(new Error(`child exited ${c}`));
    });
  });
}

test('two server processes sharing Redis: 50 concurrent identical requests → one proof; Redis down → still serving', async (t) => {
  if (!hasRedisServer()) return skipOrFail(t, 'redis-server not installed (CI installs it)');
  const redis = await startRedis();
  const children: ChildProcess[] = [];
  try {
    const a = await startChild(redis.url, 'count:A', 400, 60_000);
    children.push(a.proc);
    const b = await startChild(redis.url, 'count:A', 400, 60_000);
    children.push(b.proc);
    const body = JSON.stringify({ same: 'request' });
    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? h1 : h2)(i % 4 < 2 ? a.port : b.port, 'POST', '/spells/prove', body)));
    assert.ok(replies.every((r) => r.status === 200));
    assert.equal(new Set(replies.map((r) => r.body.toString())).size, 1);
    assert.equal(await countOf(redis.url, 'count:A'), 1, 'the prover ran once');
    // Redis killed mid-run: both servers keep answering (computing without the cache)
    redis.proc.kill('SIGKILL');
    for (const s of [a, b]) await waitFor(async () => (await h1(s.port, 'GET', '/ready')).status === 503, '/ready to report the cache unusable');
    for (const s of [a, b]) {
      const r = await h1(s.port, 'POST', '/spells/prove', JSON.stringify({ after: 'redis died' }));
      assert.equal(r.status, 200);
      assert.equal((await h1(s.port, 'GET', '/ready')).status, 503, '/ready reports the cache is unusable');
    }
  } finally {
    for (const c of children) c.kill('SIGKILL');
    redis.proc.kill('SIGKILL');
  }
});

test('the lock holder renews its short lease while it proves: a long proof is not started twice', async (t) => {
  if (!hasRedisServer()) return skipOrFail(t, 'redis-server not installed (CI installs it)');
  const redis = await startRedis();
  const children: ChildProcess[] = [];
  const c = redisClient(redis.url);
  try {
    // a 3 s proof under a 600 ms lease: without renewal the lease lapses five times over
    const a = await startChild(redis.url, 'count:R', 3000, 600);
    children.push(a.proc);
    const b = await startChild(redis.url, 'count:R', 3000, 600);
    children.push(b.proc);
    const body = 'renewed-lease';
    const first = h1(a.port, 'POST', '/spells/prove', body);
    const lockKey = lockKeyOf(body);
    await waitFor(async () => (await c.get('count:R')) === '1', 'the holder to start proving');
    // watch the lock for well past the first lease: it is held all along, never with more than one lease left
    const heldSince = Date.now();
    let samples = 0;
    await waitFor(
      async () => {
        const pttl = await c.pttl(lockKey);
        assert.ok(pttl > 0 && pttl <= 600, `the lock is held with a short, renewed lease (PTTL ${pttl} after ${Date.now() - heldSince} ms)`);
        samples++;
        return Date.now() - heldSince > 1500;
      },
      'the lock to outlive two leases',
      { intervalMs: 50 },
    );
    assert.ok(samples > 3);
    const second = h1(b.port, 'POST', '/spells/prove', body);
    const [r1, r2] = await Promise.all([first, second]);
    assert.equal(r1.status, 200);
    assert.equal(r2.body.toString(), r1.body.toString());
    assert.equal(await countOf(redis.url, 'count:R'), 1, "the waiter got the holder's result");
  } finally {
    c.disconnect();
    for (const ch of children) ch.kill('SIGKILL');
    redis.proc.kill('SIGKILL');
  }
});

test('a holder that dies mid-proof is taken over after one lease, not after the proof time', async (t) => {
  if (!hasRedisServer()) return skipOrFail(t, 'redis-server not installed (CI installs it)');
  const redis = await startRedis();
  const children: ChildProcess[] = [];
  const c = redisClient(redis.url);
  try {
    // the default lease; the dead holder's proof would have taken 10 minutes
    const slow = await startChild(redis.url, 'count:B', 600_000, 'default');
    children.push(slow.proc);
    const body = 'lock-takeover';
    void h1(slow.port, 'POST', '/spells/prove', body).catch(() => undefined);
    const lockKey = lockKeyOf(body);
    // the holder took the lock and started its proof (it counts before proving)
    await waitFor(async () => (await c.get('count:B')) === '1' && (await c.exists(lockKey)) === 1, 'the holder to take the lock and start proving');
    slow.proc.kill('SIGKILL'); // the lock holder dies mid-proof
    await slow.exited;
    const pttl = await c.pttl(lockKey);
    assert.ok(pttl > 0 && pttl <= DEFAULT_LEASE_MS, `the dead holder's lock lapses within one lease (PTTL ${pttl})`);
    const other = await startChild(redis.url, 'count:B', 100, 'default');
    children.push(other.proc);
    const r = await h1(other.port, 'POST', '/spells/prove', body);
    assert.equal(r.status, 200);
    assert.equal(await c.exists(lockKey), 0, 'the new holder released the lock');
    assert.equal(await countOf(redis.url, 'count:B'), 2);
  } finally {
    c.disconnect();
    for (const ch of children) ch.kill('SIGKILL');
    redis.proc.kill('SIGKILL');
  }
});

test('CACHE_URL pointing at something that is not Redis: the server stays up and proves without the cache', async () => {
  // an HTTP server where Redis was expected
  const notRedis = http.createServer((_req, res) => res.writeHead(400).end('not redis'));
  await new Promise<void>((r) => notRedis.listen(0, '127.0.0.1', () => r()));
  const url = `redis://127.0.0.1:${(notRedis.address() as net.AddressInfo).port}`;
  let child: ChildProcess | undefined;
  try {
    const s = await startChild(url, 'count:X', 10, 'default');
    child = s.proc;
    let exited = false;
    child.once('exit', () => (exited = true));
    for (const body of ['one', 'two', 'one']) {
      const r = await h1(s.port, 'POST', '/spells/prove', body);
      assert.equal(r.status, 200, body);
    }
    assert.equal((await h2(s.port, 'GET', '/ready')).status, 503, '/ready says the cache is unusable');
    assert.equal(exited, false, 'the process is alive');
  } finally {
    child?.kill('SIGKILL');
    notRedis.close();
  }
});

test('RedisCache degrades to computing directly when Redis is unreachable', async () => {
  const cache = new RedisCache('redis://127.0.0.1:1', { leaseMs: 1000 });
  const v = await cache.getOrCompute('k', async () => Uint8Array.of(7));
  assert.deepEqual([...v], [7]);
  assert.equal(await cache.ready(), false);
  await cache.close();
});
