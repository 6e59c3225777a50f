import { test } from 'node:test';
import assert from 'node:assert/strict';
import { listenDual, type Handler } from './http.js';
import type { Logger } from './log.js';
import { h1, h2 } from '../testing/http.js';

test('a handler that throws: 500 INTERNAL without details, and the error is logged', async () => {
  const errors: [string, Record<string, unknown> | undefined][] = [];
  const log: Logger = { error: (m, f) => void errors.push([m, f]), warn() {}, info() {}, debug() {}, warnAlways() {} };
  const server = await listenDual(
    async () => {
      throw new TypeError('a bug in the handler');
    },
    { host: '127.0.0.1', port: 0, log },
  );
  try {
    const r = await h1(server.port, 'GET', '/x');
    assert.equal(r.status, 500);
    assert.deepEqual(JSON.parse(r.body.toString()), { error: 'internal error', code: 'INTERNAL' });
    assert.equal(errors.length, 1);
    assert.equal(errors[0]![0], 'request handler threw');
    assert.match(String(errors[0]![1]?.error), /TypeError: a bug in the handler/);
  } finally {
    await server.close();
  }
});

test('an answer with an invalid header is a 500 on both HTTP/1.1 paths, not an unhandled rejection', async () => {
  const handler: Handler = async () => ({ status: 200, headers: { 'x-bad': 'a\nb' }, body: 'x' });
  for (const http1 of ['fast', 'node'] as const) {
    const server = await listenDual(handler, { host: '127.0.0.1', port: 0, http1 });
    try {
      const a = await h1(server.port, 'GET', '/bad');
      assert.equal(a.status, 500, `${http1} HTTP/1.1`);
      assert.equal(JSON.parse(a.body.toString()).code, 'INTERNAL');
      // h2c carries such a value (nghttp2 does not refuse it): answered, and the server lives on
      assert.equal((await h2(server.port, 'GET', '/bad')).status, 200, 'h2c');
      assert.equal((await h1(server.port, 'GET', '/bad')).status, 500, `${http1}: still serving`);
    } finally {
      await server.close();
    }
  }
});
