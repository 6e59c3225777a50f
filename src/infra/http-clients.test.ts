/**
 * One client cannot take a server's every connection (slowloris): a cap per client address, the
 * header deadline, and trusted proxies whose `X-Forwarded-For` names the clients counted instead.
 * Real sockets on loopback: 127.0.0.1 and 127.0.0.2 are two clients (all of 127/8 is loopback).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import http from 'node:http';
import { listenDual, type Handler } from './http.js';
import { startMetricsServer } from './metrics-http.js';
import { limitsOf } from '../settings/limits.js';
import { h2 } from '../testing/http.js';
import { waitFor } from '../testing/wait.js';

/** A raw client from `from`: what it received, and a promise of the server closing it. */
function raw(port: number, from: string, first?: string) {
  const sock = net.connect({ port, host: '127.0.0.1', localAddress: from });
  let data = Buffer.alloc(0);
  let closed = false;
  sock.on('data', (d) => (data = Buffer.concat([data, d])));
  sock.on('error', () => {});
  sock.once('close', () => (closed = true));
  if (first !== undefined) sock.write(first);
  return { sock, isClosed: () => closed, text: () => data.toString('latin1') };
}

const until = (cond: () => boolean, what: string) => waitFor(cond, what, { intervalMs: 10, timeoutMs: 20_000 });

/** A GET from `from` with `headers`, over a connection of its own. */
function get(port: number, from: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, headers, localAddress: from, agent: false }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** `/slow` answers when released; `entered` counts the requests its handler has taken. */
function slowHandler() {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const state = { entered: 0, release };
  const handler: Handler = async (req) => {
    if (req.path === '/slow') {
      state.entered++;
      await released;
    }
    return { status: 200, headers: { 'content-type': 'text/plain' }, body: 'OK' };
  };
  return { state, handler };
}

test('many slow connections from one address do not starve another client (HTTP/1.1 and h2c)', { timeout: 60_000 }, async () => {
  const server = await listenDual(async () => ({ status: 200, headers: {}, body: 'OK' }), {
    host: '127.0.0.1',
    limits: { maxConnections: 20, maxConnectionsPerClient: 4, headersTimeoutMs: 60_000 },
  });
  const slow = Array.from({ length: 30 }, () => raw(server.port, '127.0.0.2', 'GET / HTTP/1.1\r\nHost: x\r\n'));
  try {
    // past its own cap, the slow client's connections are closed at once: it holds 4 of the 20
    await until(() => slow.filter((c) => c.isClosed()).length === 26, 'the slow client connections past its cap to be closed');
    await until(() => server.connections() === 4, 'the server to hold only the 4 connections under the cap');
    assert.ok(
      slow.every((c) => c.text() === ''),
      'refused without an answer',
    );
    // another client is served on both protocols while the slow one waits
    for (let i = 0; i < 5; i++) assert.equal((await get(server.port, '127.0.0.1', '/ready')).status, 200);
    assert.equal((await h2(server.port, 'GET', '/ready')).status, 200);
  } finally {
    for (const c of slow) c.sock.destroy();
    await server.close();
  }
});

test('the header deadline closes a slow client, and its slots come back', { timeout: 60_000 }, async () => {
  const server = await listenDual(async () => ({ status: 200, headers: {}, body: 'OK' }), {
    host: '127.0.0.1',
    limits: { maxConnectionsPerClient: 2, headersTimeoutMs: 300 },
  });
  // header bytes trickling in: always active, never done
  const trickle = [raw(server.port, '127.0.0.2', 'GET / HTTP/1.1\r\nX-Slow: '), raw(server.port, '127.0.0.2', 'GET / HTTP/1.1\r\nX-Slow: ')];
  const drip = setInterval(() => trickle.forEach((c) => c.sock.writable && c.sock.write('x')), 50);
  try {
    await until(() => trickle.every((c) => c.isClosed()), 'the header deadline to close both trickling connections');
    assert.ok(
      trickle.every((c) => c.text() === ''),
      'trickled headers never made a request',
    );
    await until(() => server.connections() === 0, 'the server to release them');
    assert.equal((await get(server.port, '127.0.0.2', '/ready')).status, 200, 'the client may connect again');
  } finally {
    clearInterval(drip);
    for (const c of trickle) c.sock.destroy();
    await server.close();
  }
});

test("a trusted proxy's clients are capped each by itself, by the X-Forwarded-For entry the proxy added", { timeout: 60_000 }, async () => {
  const { state, handler } = slowHandler();
  const server = await listenDual(handler, {
    host: '127.0.0.1',
    limits: { maxConnectionsPerClient: 2, trustedProxies: limitsOf({ SVC_TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/8' }).trustedProxies },
  });
  try {
    // two slow requests of client A (the left entries are what A wrote itself: not believed)
    const a = [
      get(server.port, '127.0.0.1', '/slow', { 'x-forwarded-for': '203.0.113.7' }),
      get(server.port, '127.0.0.1', '/slow', { 'x-forwarded-for': '198.51.100.1, 203.0.113.7, 10.1.2.3' }),
    ];
    await until(() => state.entered === 2, 'the two requests of client A to reach the handler');
    // the proxy itself holds 3 connections (more than the cap of 2): it is not capped as one client
    const third = await get(server.port, '127.0.0.1', '/slow', { 'x-forwarded-for': '192.0.2.99, 203.0.113.7' });
    assert.equal(third.status, 429, "client A's third request in progress is refused");
    assert.equal(JSON.parse(third.body).code, 'TOO_MANY_REQUESTS');
    const viaH2 = await h2(server.port, 'GET', '/slow', undefined, { 'x-forwarded-for': '203.0.113.7' });
    assert.equal(viaH2.status, 429, 'on h2c too');
    // client B behind the same proxy is served meanwhile, and so are requests without the header
    const b = get(server.port, '127.0.0.1', '/slow', { 'x-forwarded-for': '[2001:db8::1]:4711' });
    await until(() => state.entered === 3, 'client B to reach the handler');
    assert.equal((await get(server.port, '127.0.0.1', '/ready')).status, 200);
    state.release();
    assert.deepEqual(
      (await Promise.all([...a, b])).map((r) => r.status),
      [200, 200, 200],
    );
    // A's requests answered: A is served again
    assert.equal((await get(server.port, '127.0.0.1', '/ready', { 'x-forwarded-for': '203.0.113.7' })).status, 200);
  } finally {
    state.release();
    await server.close();
  }
});

test('X-Forwarded-For from an address that is not a trusted proxy is ignored: the client is capped by its own address', { timeout: 60_000 }, async () => {
  const { state, handler } = slowHandler();
  const server = await listenDual(handler, {
    host: '127.0.0.1',
    limits: { maxConnectionsPerClient: 2, trustedProxies: limitsOf({ SVC_TRUSTED_PROXIES: '127.0.0.1' }).trustedProxies },
  });
  try {
    const held = [
      get(server.port, '127.0.0.2', '/slow', { 'x-forwarded-for': '203.0.113.1' }),
      get(server.port, '127.0.0.2', '/slow', { 'x-forwarded-for': '203.0.113.2' }),
    ];
    await until(() => state.entered === 2, 'the two requests to reach the handler');
    await assert.rejects(
      get(server.port, '127.0.0.2', '/slow', { 'x-forwarded-for': '203.0.113.3' }),
      /ECONNRESET|socket hang up/,
      'a third connection is closed, whatever the header claims',
    );
    assert.equal(state.entered, 2);
    state.release();
    assert.deepEqual(
      (await Promise.all(held)).map((r) => r.status),
      [200, 200],
    );
  } finally {
    state.release();
    await server.close();
  }
});

test('SVC_MAX_CONNECTIONS_PER_CLIENT and SVC_TRUSTED_PROXIES come from the settings loader; bad values are configuration errors', () => {
  const l = limitsOf({ SVC_MAX_CONNECTIONS_PER_CLIENT: '8', SVC_TRUSTED_PROXIES: '172.17.0.1 10.0.0.0/8,fd00::/8' });
  assert.equal(l.maxConnectionsPerClient, 8);
  assert.deepEqual(l.trustedProxies, [
    { address: '172.17.0.1', prefix: 32, family: 'ipv4' },
    { address: '10.0.0.0', prefix: 8, family: 'ipv4' },
    { address: 'fd00::', prefix: 8, family: 'ipv6' },
  ]);
  assert.deepEqual(limitsOf({}).trustedProxies, []);
  for (const bad of ['proxy.internal', '10.0.0.0/33', '10.0.0.1/8/1', 'fd00::/129'])
    assert.throws(
      () => limitsOf({ SVC_TRUSTED_PROXIES: bad }),
      (e: Error & { code?: string }) => e.code === 'CONFIG' && e.message.includes('SVC_TRUSTED_PROXIES'),
      bad,
    );
  assert.throws(() => limitsOf({ SVC_MAX_CONNECTIONS_PER_CLIENT: '0' }), /SVC_MAX_CONNECTIONS_PER_CLIENT must be a positive integer/);
});

test('an IPv4 proxy is recognised on a dual-stack listener (IPv4-mapped peer addresses)', { timeout: 30_000 }, async () => {
  const { state, handler } = slowHandler();
  const server = await listenDual(handler, {
    host: '::',
    limits: { maxConnectionsPerClient: 1, trustedProxies: limitsOf({ SVC_TRUSTED_PROXIES: '127.0.0.1' }).trustedProxies },
  });
  try {
    const first = get(server.port, '127.0.0.1', '/slow', { 'x-forwarded-for': '203.0.113.7' });
    await until(() => state.entered === 1, 'the first request to reach the handler');
    // trusted: a second connection is kept, and its other client is served
    const other = get(server.port, '127.0.0.1', '/slow', { 'x-forwarded-for': '203.0.113.8' });
    await until(() => state.entered === 2, "the other client's request to reach the handler");
    assert.equal((await get(server.port, '127.0.0.1', '/ready', { 'x-forwarded-for': '203.0.113.7' })).status, 429);
    state.release();
    assert.deepEqual(
      (await Promise.all([first, other])).map((r) => r.status),
      [200, 200],
    );
  } finally {
    state.release();
    await server.close();
  }
});

test('the SVC_METRICS_ADDR listener has the same per-address cap and header deadline as every server', { timeout: 60_000 }, async () => {
  const own = await startMetricsServer('127.0.0.1', 0, { maxConnectionsPerClient: 3, headersTimeoutMs: 60_000 });
  const idle = Array.from({ length: 10 }, () => raw(own.port, '127.0.0.2'));
  try {
    await until(() => idle.filter((c) => c.isClosed()).length === 7, 'the idle connections past the cap of 3 to be closed');
    await until(() => own.connections() === 3, 'the listener to hold only the 3 under the cap');
    const scrape = await get(own.port, '127.0.0.1', '/metrics');
    assert.equal(scrape.status, 200, 'another address is served meanwhile');
    assert.match(scrape.body, /# HELP /);
    assert.equal((await get(own.port, '127.0.0.1', '/other')).status, 404);
  } finally {
    for (const c of idle) c.sock.destroy();
    await own.close();
  }
  const deadline = await startMetricsServer('127.0.0.1', 0, { headersTimeoutMs: 300 });
  const slow = raw(deadline.port, '127.0.0.2', 'GET /metrics HTTP/1.1\r\n');
  try {
    await until(() => slow.isClosed(), 'the header deadline to close a client that never ends its headers');
    assert.equal(slow.text(), '');
  } finally {
    slow.sock.destroy();
    await deadline.close();
  }
});
