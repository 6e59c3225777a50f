import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CharmsError, HTTP_STATUS, type ErrorCode } from '../errors.js';
import { errorResponse } from './http.js';
import { silentLogger } from './log.js';

test('both servers answer errors by the code → status table, JSON {error, code}, cause kept in 4xx text only', () => {
  for (const [code, status] of Object.entries(HTTP_STATUS) as [ErrorCode, number][]) {
    const r = errorResponse(new CharmsError(code, 'top', { cause: new Error('inner detail') }), silentLogger);
    assert.equal(r.status, status, code);
    const body = JSON.parse(String(r.body));
    assert.equal(body.code, code);
    assert.equal(body.error, status < 500 ? 'top: inner detail' : 'top', code);
  }
  const bug = errorResponse(new TypeError('x is undefined'), silentLogger);
  assert.equal(bug.status, 500);
  assert.deepEqual(JSON.parse(String(bug.body)), { error: 'internal error: the failure was logged; retry later', code: 'INTERNAL' });
});
