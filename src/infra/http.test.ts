import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import http2 from 'node:http2';
import { listenDual, type Handler, type Listening } from './http.js';
import { limitsOf, DEFAULT_SERVER_LIMITS } from '../settings/limits.js';
import { h1, h2 } from '../testing/http.js';
import { waitFor } from '../testing/wait.js';

const echo: Handler = async (req) => {
  if (req.method === 'POST') {
    const b = await req.body(1024 * 1024);
    return { status: 200, headers: {}, body: `got ${b.length}` };
  }
  return { status: 200, headers: { 'content-type': 'text/plain' }, body: 'OK' };
};

/** A raw client: what it received, and a promise of the server closing it. */
function raw(port: number, first?: string | Buffer) {
  const sock = net.connect(port, '127.0.0.1');
  let data = Buffer.alloc(0);
  sock.on('data', (d) => (data = Buffer.concat([data, d])));
  sock.on('error', () => {});
  const closed = new Promise<void>((r) => sock.once('close', () => r()));
  if (first !== undefined) sock.write(first);
  return { sock, closed, text: () => data.toString('latin1') };
}

const until = (cond: () => boolean) => waitFor(cond, 'the server to reach the state the test waits for', { intervalMs: 10, timeoutMs: 20_000 });

test('slow clients are dropped on both protocols: idle, partial preface, partial headers, trickled headers, partial bodies, idle keep-alive and h2 sessions', {
  timeout: 30_000,
}, async () => {
  const server = await listenDual(echo, { host: '127.0.0.1', port: 0, limits: { headersTimeoutMs: 300, bodyTimeoutMs: 300, idleTimeoutMs: 300 } });
  try {
    const idle = raw(server.port);
    const partialPreface = raw(server.port, 'PRI * HTTP/2.0\r\n');
    const partialHeaders = raw(server.port, 'POST /spells/prove HTTP/1.1\r\nHost: x\r\n');
    const partialBody = raw(server.port, 'POST /spells/prove HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789');
    const h2NoRequest = raw(server.port, Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), Buffer.from('000000040000000000', 'hex')]));
    // one header byte every 50 ms: always active, never done
    const trickle = raw(server.port, 'GET /ready HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    const drip = setInterval(() => trickle.sock.writable && trickle.sock.write('x'), 50);
    // a complete request on a keep-alive connection, then silence
    const keepAlive = raw(server.port, 'GET /ready HTTP/1.1\r\nHost: x\r\n\r\n');
    await Promise.all([idle.closed, partialPreface.closed, partialHeaders.closed, partialBody.closed, h2NoRequest.closed, trickle.closed, keepAlive.closed]);
    clearInterval(drip);
    assert.match(partialBody.text(), /^HTTP\/1\.1 408 /, 'a body that never comes is answered 408');
    assert.match(partialBody.text(), /"code":"REQUEST_TIMEOUT"/);
    assert.match(keepAlive.text(), /^HTTP\/1\.1 200 /, 'the keep-alive request itself was answered');
    assert.equal(trickle.text(), '', 'trickled headers never made a request');

    // h2: a stream whose body stops half-way gets 408 and is closed; an idle session is closed
    const session = http2.connect(`http://127.0.0.1:${server.port}`);
    session.on('error', () => {});
    const sessionClosed = new Promise<void>((r) => session.once('close', () => r()));
    const stream = session.request({ ':method': 'POST', ':path': '/x', 'content-length': '100' });
    stream.on('error', () => {});
    stream.write(Buffer.alloc(10));
    stream.resume();
    const status = await new Promise<number>((r) => stream.once('response', (h) => r(Number(h[':status']))));
    assert.equal(status, 408);
    await new Promise<void>((r) => stream.once('close', () => r()));
    await sessionClosed;
    await until(() => server.connections() === 0);
  } finally {
    await server.close();
  }
});

test('a connection cap: past it new connections are closed at once; served again when slots free up', { timeout: 30_000 }, async () => {
  const server = await listenDual(echo, { host: '127.0.0.1', port: 0, limits: { maxConnections: 5, headersTimeoutMs: 60_000 } });
  try {
    const held = Array.from({ length: 5 }, () => raw(server.port));
    await until(() => server.connections() === 5);
    const refused = raw(server.port, 'GET /ready HTTP/1.1\r\nHost: x\r\n\r\n');
    await refused.closed;
    assert.equal(refused.text(), '', 'refused without an answer');
    for (const c of held) c.sock.destroy();
    await until(() => server.connections() === 0);
    assert.equal((await h1(server.port, 'GET', '/ready')).status, 200);
    assert.equal((await h2(server.port, 'GET', '/ready')).status, 200);
  } finally {
    await server.close();
  }
});

test('h2c: a body over the limit is refused with 413 as soon as it is declared or received, without reading the rest', { timeout: 30_000 }, async () => {
  let reads = 0;
  const server = await listenDual(
    async (req) => {
      reads++;
      const b = await req.body(32 * 1024 * 1024);
      return { status: 200, headers: {}, body: `got ${b.length}` };
    },
    { host: '127.0.0.1', port: 0 },
  );
  const session = http2.connect(`http://127.0.0.1:${server.port}`);
  session.on('error', () => {});
  try {
    const send = (headers: Record<string, string>, bytes: number) => {
      const stream = session.request({ ':method': 'POST', ':path': '/spells/prove', ...headers });
      stream.on('error', () => {});
      const chunk = Buffer.alloc(1024 * 1024);
      let sent = 0;
      const pump = () => {
        while (sent < bytes && !stream.destroyed) {
          sent += chunk.length;
          if (!stream.write(chunk)) return void stream.once('drain', pump);
        }
        // never end(): the server must close the stream by itself
      };
      pump();
      const status = new Promise<number>((r) => stream.once('response', (h) => r(Number(h[':status']))));
      const body: Buffer[] = [];
      stream.on('data', (d) => body.push(d));
      // the answer is complete while the client has not finished its request
      const ended = new Promise<void>((r) => stream.once('end', () => r()));
      return { status, ended, body: () => Buffer.concat(body).toString(), sent: () => sent };
    };
    // declared 33 MiB, 1 MiB sent
    const declared = send({ 'content-length': String(33 * 1024 * 1024) }, 1024 * 1024);
    assert.equal(await declared.status, 413);
    await declared.ended;
    assert.equal(JSON.parse(declared.body()).code, 'PAYLOAD_TOO_LARGE');
    // no length declared: refused once 32 MiB are passed, long before the client would stop
    const streamed = send({}, 1024 * 1024 * 1024);
    assert.equal(await streamed.status, 413);
    await streamed.ended;
    assert.ok(streamed.sent() < 64 * 1024 * 1024, `the client sent ${streamed.sent()} bytes`);
    assert.equal(reads, 2);
    // the refused streams hold none of the session's flow-control window: it still serves
    const next = session.request({ ':method': 'POST', ':path': '/spells/prove' });
    next.end(Buffer.alloc(1024 * 1024));
    const chunks: Buffer[] = [];
    next.on('data', (d) => chunks.push(d));
    await new Promise<void>((r) => next.once('end', () => r()));
    assert.equal(Buffer.concat(chunks).toString(), `got ${1024 * 1024}`);
  } finally {
    session.destroy();
    await server.close();
  }
});

test('a global in-flight body budget: concurrent large bodies past it get 503 (retry), and the budget comes back', { timeout: 30_000 }, async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let held = false;
  const server: Listening = await listenDual(
    async (req) => {
      const b = await req.body(1024 * 1024);
      if (req.path === '/hold') {
        held = true;
        await gate;
      }
      return { status: 200, headers: {}, body: `got ${b.length}` };
    },
    { host: '127.0.0.1', port: 0, limits: { inflightBodyBytes: 1024 * 1024 } },
  );
  try {
    const body = Buffer.alloc(800 * 1024, 0x61);
    const holding = h1(server.port, 'POST', '/hold', body);
    await until(() => held); // the first body arrived whole and its handler holds it
    for (const send of [h1, h2]) {
      const busy = await send(server.port, 'POST', '/other', body);
      assert.equal(busy.status, 503);
      assert.equal(JSON.parse(busy.body.toString()).code, 'SERVER_BUSY');
      assert.equal(busy.headers['retry-after'], '1');
    }
    // chunked (no declared length) is counted as it arrives
    const chunked = await new Promise<number>((resolve, reject) => {
      const s = raw(server.port, 'POST /other HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
      s.sock.write(`${(300 * 1024).toString(16)}\r\n`);
      s.sock.write(Buffer.alloc(300 * 1024));
      s.sock.write('\r\n0\r\n\r\n');
      s.closed.then(() => resolve(Number(s.text().split(' ')[1])), reject);
    });
    assert.equal(chunked, 503);
    release();
    assert.equal((await holding).status, 200);
    assert.equal((await h1(server.port, 'POST', '/other', body)).status, 200, 'the budget was given back');
    assert.equal((await h2(server.port, 'POST', '/other', body)).status, 200);
  } finally {
    await server.close();
  }
});

test('limits come from SVC_* variables; bad values are configuration errors', () => {
  assert.deepEqual(limitsOf({}), DEFAULT_SERVER_LIMITS);
  const l = limitsOf({ SVC_MAX_CONNECTIONS: '64', SVC_BODY_TIMEOUT_MS: '1000', SVC_INFLIGHT_BODY_BYTES: '1048576' });
  assert.equal(l.maxConnections, 64);
  assert.equal(l.bodyTimeoutMs, 1000);
  assert.equal(l.inflightBodyBytes, 1048576);
  assert.throws(() => limitsOf({ SVC_MAX_CONNECTIONS: '0' }), /SVC_MAX_CONNECTIONS must be a positive integer/);
  assert.throws(
    () => limitsOf({ SVC_IDLE_TIMEOUT_MS: 'soon' }),
    (e: Error & { code?: string }) => e.code === 'CONFIG',
  );
});

test('a client that never reads its answer does not hold the connection for ever (both HTTP/1.1 paths, close or keep-alive)', async () => {
  const answer = Buffer.alloc(4 * 1024 * 1024, 0x78); // more than the socket buffers take: 'finish' never comes
  for (const http1 of ['fast', 'node'] as const)
    for (const connection of ['', 'Connection: close\r\n']) {
      const server = await listenDual(async () => ({ status: 200, headers: { 'content-type': 'text/plain' }, body: answer }), {
        host: '127.0.0.1',
        port: 0,
        limits: { idleTimeoutMs: 100, headersTimeoutMs: 100 },
        http1,
      });
      const sock = net.connect(server.port, '127.0.0.1');
      sock.on('error', () => {});
      sock.pause(); // never reads
      try {
        sock.write(`GET /big HTTP/1.1\r\nHost: x\r\n${connection}\r\n`);
        await waitFor(() => server.connections() === 1, 'the connection');
        // the deadline is 200 ms per MiB still unread (about 1 s here)
        await waitFor(() => server.connections() === 0, `${http1} ${JSON.stringify(connection)}: the connection dropped`);
      } finally {
        sock.destroy();
        await server.close();
      }
    }
});
