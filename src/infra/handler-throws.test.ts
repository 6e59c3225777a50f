import { test } from 'node:test';
import assert from 'node:assert/strict';
import { listenDual } from './http.js';
import type { Logger } from './log.js';
import { h1 } from '../testing/http.js';

test('a handler that throws: 500 INTERNAL without details, and the error is logged', async () => {
  const errors: [string, Record<string, unknown> | undefined][] = [];
  const log: Logger = { error: (m, f) => void errors.push([m, f]), warn() {}, info() {}, debug() {} };
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
