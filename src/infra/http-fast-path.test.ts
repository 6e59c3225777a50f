/**
 * The HTTP/1.1 fast path (infra/http.ts): plain requests answered byte for byte as node's own
 * server answers them (the Date header aside), everything else handed to node's server with its
 * bytes, on the same connection.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { CharmsError } from '../errors.js';
import { errorResponse, listenDual, type Handler, type Listening } from './http.js';
import { silentLogger } from './log.js';
import { Rng } from '../testing/fuzz/harness.js';

/** Answers given at once (no promise: the hot reads of the index API), else `later`. */
const echo: Handler = (req) => {
  if (req.path === '/now') return { status: 200, headers: { 'content-type': 'application/json' }, body: '{"é":"at once"}' };
  if (req.path === '/now-throws') throw new Error('a bug, at once');
  if (req.path === '/now-empty') return { status: 200, headers: {}, body: '' };
  if (req.path === '/now-bytes') return { status: 201, headers: {}, body: new Uint8Array([104, 105]) };
  return later(req);
};

/** Shows what the handler saw: method, path, query, headers and body length. */
const later: Handler = async (req) => {
  if (req.path === '/throws') throw new Error('a bug');
  if (req.path === '/missing') return errorResponse(new CharmsError('NOT_FOUND', 'no such thing'), silentLogger);
  if (req.path === '/closes') return { status: 200, headers: { Connection: 'close' }, body: 'bye' };
  if (req.path === '/empty') return { status: 200, headers: { a: 'b' } };
  if (req.path === '/not-modified') return { status: 304, headers: {}, body: 'xx' };
  const body = await req.body(1024);
  const query = [...req.query];
  return {
    status: 200,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
    body: JSON.stringify({ method: req.method, path: req.path, query, headers: req.headers, body: body.length, text: 'héllo' }),
  };
};

/** Everything the server sends on one connection until it closes it (bounded by the test's timeout). */
const exchange = (port: number, bytes: string): Promise<string> => exchangeInPieces(port, [bytes]);

async function servers<T>(fn: (fast: Listening, node: Listening) => Promise<T>): Promise<T> {
  // short idle bounds: a connection the client leaves open ends soon after its last answer
  const limits = { idleTimeoutMs: 1000, headersTimeoutMs: 1000 };
  const fast = await listenDual(echo, { host: '127.0.0.1', port: 0, limits });
  const node = await listenDual(echo, { host: '127.0.0.1', port: 0, limits, http1: 'node' });
  try {
    return await fn(fast, node);
  } finally {
    await fast.close();
    await node.close();
  }
}

const H = 'Host: x\r\n';
const close = `GET /last HTTP/1.1\r\n${H}Connection: close\r\n\r\n`;

test('HTTP/1.1 fast path: the same bytes as node’s server for plain requests, and node’s answer for the rest', { timeout: 60_000 }, async () => {
  const sequences: [string, string][] = [
    [
      'plain GETs, HEAD, query, percent-escapes, header whitespace',
      `GET /a/b%20c?x=1&y=a+b&z HTTP/1.1\r\n${H}X-A:  v w \r\n\r\nHEAD /h HTTP/1.1\r\nhost: y\r\n\r\n${close}`,
    ],
    ['a target URL parsing refuses (400, the server lives on)', `GET //[/ HTTP/1.1\r\n${H}\r\nGET /[ok] HTTP/1.1\r\n${H}\r\n${close}`],
    [
      'targets URL parsing rewrites (dot segments, //, fragment, escapes)',
      `GET /../x/./y/%2e%2E/z?q=%41#frag HTTP/1.1\r\n${H}\r\nGET //evil/x HTTP/1.1\r\n${H}\r\nGET /a"b<c>?d=" HTTP/1.1\r\n${H}\r\n${close}`,
    ],
    [
      'error answers, a handler that throws, answers without a body, 304',
      `GET /missing HTTP/1.1\r\n${H}\r\nGET /throws HTTP/1.1\r\n${H}\r\nGET /empty HTTP/1.1\r\n${H}\r\nGET /not-modified HTTP/1.1\r\n${H}\r\n${close}`,
    ],
    [
      'answers given at once (a text body, an empty one, bytes), a handler that throws at once, HEAD',
      `GET /now HTTP/1.1\r\n${H}\r\nGET /now-throws HTTP/1.1\r\n${H}\r\nGET /now-empty HTTP/1.1\r\n${H}\r\nHEAD /now HTTP/1.1\r\n${H}\r\nGET /now-bytes HTTP/1.1\r\n${H}\r\n${close}`,
    ],
    ['an answer that closes the connection itself', `GET /closes HTTP/1.1\r\n${H}\r\nGET /never HTTP/1.1\r\n${H}\r\n\r\n`],
    [
      'a body: handed to node mid-connection, later GETs too',
      `GET /1 HTTP/1.1\r\n${H}\r\nPOST /2 HTTP/1.1\r\n${H}Content-Length: 5\r\n\r\nhelloGET /3 HTTP/1.1\r\n${H}\r\n${close}`,
    ],
    ['chunked body', `POST /c HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n${close}`],
    ['duplicate headers (node joins them)', `GET /d HTTP/1.1\r\n${H}X-A: 1\r\nx-a: 2\r\n\r\n${close}`],
    ['no Host (node: 400)', 'GET /n HTTP/1.1\r\n\r\n'],
    ['HTTP/1.0', 'GET /old HTTP/1.0\r\n\r\n'],
    ['a method node does not know (400)', `FOO /m HTTP/1.1\r\n${H}\r\n${close}`],
    ['a method without a body', `DELETE /m HTTP/1.1\r\n${H}\r\n${close}`],
    ['a malformed request line', `GET  /sp HTTP/1.1\r\n${H}\r\n`],
    ['an obsolete folded header (400)', `GET /f HTTP/1.1\r\n${H}X-F: a\r\n b\r\n\r\n${close}`],
    ['a head over the fast path’s 8 KiB (node takes it)', `GET /big HTTP/1.1\r\n${H}X-Big: ${'b'.repeat(10_000)}\r\n\r\n${close}`],
    ['a head over node’s 16 KiB (431)', `GET /huge HTTP/1.1\r\n${H}X-Big: ${'b'.repeat(20_000)}\r\n\r\n`],
    ['`HTTP/2.0` in a request line, an unread body (the transport is HTTP/1 all the same)', `GET /missing HTTP/2.0\r\n${H}Content-Length: 5\r\n\r\n`],
    ['OPTIONS keeps the connection on both paths', `OPTIONS /o HTTP/1.1\r\n${H}\r\n${close}`],
    ['Connection: upgrade', `GET /u HTTP/1.1\r\n${H}Connection: upgrade\r\nUpgrade: websocket\r\n\r\n${close}`],
    ['HEAD of an answer without a body (no chunked framing)', `HEAD /empty HTTP/1.1\r\n${H}\r\nGET /empty HTTP/1.1\r\n${H}\r\n${close}`],
    ['LF-only line ends (node: 400 at once, not silence at the deadline)', 'GET /lf HTTP/1.1\nHost: x\n\n'],
    ['an unfinished head that cannot be plain (node: 400 at once)', 'GET /x HTTP/1.1\r\nBad Name: v\r\n'],
    ['an unfinished head with a method node does not know', 'FOO /x HTTP/1.1\r\n'],
  ];
  await servers(async (fast, node) => {
    for (const [what, bytes] of sequences) {
      const [a, b] = await Promise.all([exchange(fast.port, bytes), exchange(node.port, bytes)]);
      assert.ok(b.startsWith('HTTP/1.1 '), `${what}: node answered`);
      assert.equal(a, b, what);
    }
  });
});

/** What the server answers to `pieces`, each written once the previous one is handed to the kernel (Date masked). */
function exchangeInPieces(port: number, pieces: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    sock.setNoDelay(true);
    const chunks: Buffer[] = [];
    sock.on('data', (d) => chunks.push(d));
    sock.on('error', reject);
    sock.once('close', () =>
      resolve(
        Buffer.concat(chunks)
          .toString('latin1')
          .replace(/\r\nDate: [^\r]*/g, '\r\nDate: <now>'),
      ),
    );
    let i = 0;
    const send = (): void => {
      if (i < pieces.length && !sock.destroyed) sock.write(pieces[i++]!, () => setImmediate(send));
    };
    send();
  });
}

test('HTTP/1.1 fast path: heads split across TCP segments get node’s answers', { timeout: 60_000 }, async () => {
  const plain = `GET /s?x=1 HTTP/1.1\r\n${H}X-A: v\r\n\r\nHEAD /empty HTTP/1.1\r\n${H}\r\n${close}`;
  const cases: [string, string[]][] = [
    ['a byte at a time', [...plain]],
    ['cut inside CRLF CRLF', plain.split(/(?<=\r\n\r)/)],
    ['cut after a request line', plain.split(/(?<=HTTP\/1\.1\r\n)/)],
    ['a bad header line, then nothing more', ['GET /x HTTP/1.1\r\n', 'Host: x\r\n', 'X\x01: y\r\n']],
    ['a bare LF, then nothing more', ['GET /x HTTP/1.1\r\n', 'Host: x\n']],
  ];
  await servers(async (fast, node) => {
    for (const [what, pieces] of cases) {
      const [a, b] = await Promise.all([exchangeInPieces(fast.port, pieces), exchangeInPieces(node.port, pieces)]);
      assert.ok(b.startsWith('HTTP/1.1 '), `${what}: node answered`);
      assert.equal(a, b, what);
    }
  });
});

test('HTTP/1.1 fast path: pipelined requests answered in order, OPTIONS keeps the connection', { timeout: 60_000 }, async () => {
  await servers(async (fast) => {
    const n = 50;
    let bytes = `OPTIONS /v1/x HTTP/1.1\r\n${H}\r\n`;
    for (let i = 0; i < n; i++) bytes += `GET /p/${i} HTTP/1.1\r\n${H}\r\n`;
    const got = await exchange(fast.port, bytes + close);
    assert.match(got, /^HTTP\/1\.1 204 No Content\r\naccess-control-allow-origin: \*\r\n/);
    const paths = [...got.matchAll(/"path":"([^"]*)"/g)].map((m) => m[1]);
    assert.deepEqual(paths, [...Array.from({ length: n }, (_, i) => `/p/${i}`), '/last']);
  });
});

test('HTTP/1.1 fast path: a drain answers the request in progress 503 and closes', { timeout: 60_000 }, async () => {
  let release!: () => void;
  const started = new Promise<void>((r) => (release = r));
  const hang: Handler = () => {
    release();
    return new Promise(() => {}); // never answers: the drain cuts it
  };
  const server = await listenDual(hang, { host: '127.0.0.1', port: 0 });
  try {
    const answer = exchange(server.port, `GET /slow HTTP/1.1\r\n${H}\r\n`);
    await started;
    assert.deepEqual(await server.drain(50), { finished: 0, cut: 1 });
    const got = await answer;
    assert.match(got, /^HTTP\/1\.1 503 Service Unavailable\r\n/);
    assert.match(got, /\r\nconnection: close\r\n/);
    assert.match(got, /"code":"SERVER_BUSY"/);
  } finally {
    await server.close();
  }
});

/** A random request head from pieces that are plain, nearly plain or hostile (latin1: one byte per char). */
function randomHead(rng: Rng): string {
  const methods = ['GET', 'GET', 'GET', 'HEAD', 'OPTIONS', 'DELETE', 'get', 'G T', '', 'FOO', 'PRI', 'GET\x00'];
  const pieces = [
    '/',
    '/',
    'v1',
    'a',
    '%',
    '%2',
    '%2e',
    '%2F',
    '..',
    '.',
    '?',
    '?x=1&y',
    '&',
    '=',
    '#',
    '//',
    '[',
    ']',
    '"',
    '<',
    ' ',
    '\x7f',
    '\x80',
    '\xc3\xa9',
    '+',
    ';',
    '@',
    ':',
    '~',
    '\t',
  ];
  let target = rng.int(10) === 0 ? rng.pick(['*', 'http://x/y', 'x', '']) : '/';
  for (let i = rng.int(8); i > 0; i--) target += rng.pick(pieces);
  const version = rng.pick(['HTTP/1.1', 'HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'http/1.1', 'HTTP/1.1 ', 'HTTP/1.10']);
  const eol = () => (rng.int(20) === 0 ? rng.pick(['\n', '\r', '\r\r\n']) : '\r\n');
  let head = `${rng.pick(methods)}${rng.int(15) === 0 ? '  ' : ' '}${target} ${version}${eol()}`;
  const names = [
    'Host',
    'host',
    'HOST',
    'X-A',
    'x-a',
    'Connection',
    'Accept',
    'Bad Name',
    'X:Y',
    '',
    'X-\x80',
    'Keep-Alive',
    'Content-Length',
    'Expect',
    'Transfer-Encoding',
    '__proto__',
    'constructor',
  ];
  const values = [
    'x',
    'x',
    '',
    ' ',
    '\t',
    'close',
    'keep-alive',
    'Keep-Alive',
    'upgrade',
    'CLOSE',
    'a b',
    ' v ',
    '\x01',
    '\x7f',
    '\x80\xff',
    '\xc3\xa9',
    '0',
    '5',
    'chunked',
    '100-continue',
  ];
  if (rng.int(10) !== 0) head += `Host: x${eol()}`;
  for (let i = rng.int(5); i > 0; i--)
    head += `${rng.pick(names)}${rng.pick([':', ': ', ' :', ':  '])}${rng.pick(values)}${rng.int(8) === 0 ? ' ' : ''}${eol()}`;
  return head + '\r\n';
}

test('HTTP/1.1 fast path: random request heads get node’s answer, byte for byte (differential fuzz)', { timeout: 120_000 }, async () => {
  const rng = new Rng(Number(process.env.FUZZ_SEED ?? 0x5eed_f457));
  const cases = Array.from({ length: Number(process.env.FUZZ_N ?? 160) }, () => randomHead(rng) + close);
  const differ: string[] = [];
  await servers(async (fast, node) => {
    for (let i = 0; i < cases.length; i += 8) {
      await Promise.all(
        cases.slice(i, i + 8).map(async (bytes) => {
          const [a, b] = await Promise.all([exchange(fast.port, bytes), exchange(node.port, bytes)]);
          if (a !== b) differ.push(`${JSON.stringify(bytes)}\n fast: ${JSON.stringify(a.slice(0, 300))}\n node: ${JSON.stringify(b.slice(0, 300))}`);
        }),
      );
    }
  });
  assert.deepEqual(differ, [], `${differ.length} of ${cases.length} heads answered differently`);
});
