import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { listenDual } from './http.js';
import { h1 } from '../testing/http.js';

/** Sends raw bytes and reads until the server closes (bounded by a timeout). */
function raw(port: number, bytes: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(bytes));
    const chunks: Buffer[] = [];
    s.setTimeout(5_000, () => s.destroy(new Error('no answer within 5 s')));
    s.on('data', (c) => chunks.push(c));
    s.on('error', (e) => ((e as NodeJS.ErrnoException).code === 'ECONNRESET' ? resolve(Buffer.concat(chunks).toString('latin1')) : reject(e)));
    s.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
  });
}

test('requests the HTTP parser refuses get a 400 / 431 with {error, code}, not a silent close', async () => {
  const server = await listenDual(async () => ({ status: 200, headers: {}, body: 'ok' }), { host: '127.0.0.1', port: 0 });
  try {
    const cases: [Buffer, number][] = [
      [Buffer.concat([Buffer.from('GET /v1/addresses/'), Buffer.from([0xff, 0xfe, 0xc0]), Buffer.from('/balances HTTP/1.1\r\nHost: x\r\n\r\n')]), 400],
      [Buffer.from('BREW /v1/status HTTP/1.1\r\nHost: x\r\n\r\n'), 400],
      [Buffer.from('GARBAGE\r\n\r\n'), 400],
      [Buffer.from('POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n'), 400],
      [Buffer.from(`GET /${'a'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`), 431],
    ];
    for (const [bytes, status] of cases) {
      const answer = await raw(server.port, bytes);
      assert.match(answer, new RegExp(`^HTTP/1\\.1 ${status} `), bytes.subarray(0, 40).toString('latin1'));
      const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
      assert.equal(body.code, 'INVALID_INPUT');
      assert.equal(typeof body.error, 'string');
    }
    // the server goes on answering
    assert.equal((await h1(server.port, 'GET', '/fine')).status, 200);
  } finally {
    await server.close();
  }
});

test('a refused request after answered ones on a kept-alive connection gets its 400 too (both HTTP/1.1 paths)', async () => {
  for (const http1 of ['fast', 'node'] as const) {
    const server = await listenDual(async () => ({ status: 200, headers: {}, body: 'ok' }), { host: '127.0.0.1', port: 0, http1 });
    try {
      const answer = await new Promise<string>((resolve, reject) => {
        const s = net.connect(server.port, '127.0.0.1', () => s.write('GET /first HTTP/1.1\r\nHost: x\r\n\r\n'));
        const chunks: Buffer[] = [];
        let sent = false;
        s.setTimeout(5_000, () => s.destroy(new Error('no answer within 5 s')));
        s.on('data', (c) => {
          chunks.push(c);
          // the first answer is in: the next request on the connection is one the parser refuses
          if (!sent && Buffer.concat(chunks).toString('latin1').endsWith('\r\n\r\nok')) {
            sent = true;
            s.write('BREW /second HTTP/1.1\r\nHost: x\r\n\r\n');
          }
        });
        s.on('error', (e) => ((e as NodeJS.ErrnoException).code === 'ECONNRESET' ? resolve(Buffer.concat(chunks).toString('latin1')) : reject(e)));
        s.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
      });
      const second = answer.slice(answer.indexOf('\r\n\r\nok') + 6);
      assert.match(second, /^HTTP\/1\.1 400 /, `${http1}: ${JSON.stringify(answer)}`);
      assert.equal(JSON.parse(second.slice(second.indexOf('\r\n\r\n') + 4)).code, 'INVALID_INPUT');
    } finally {
      await server.close();
    }
  }
});
