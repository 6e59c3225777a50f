import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CharmsError, HTTP_STATUS, type ErrorCode } from '../errors.js';
import { isNoSpell, spellOrNone } from './index.js';
import { readSharedText, sharedOrSkip } from '../testing/shared.js';

test('the "no spell, or a real error?" rule decides by code', () => {
  const noSpell: ErrorCode[] = ['NO_SPELL', 'INVALID_SPELL', 'PROOF_INVALID', 'CBOR_DECODE', 'UNSUPPORTED', 'INVALID_INPUT', 'APP_FAILED'];
  const real: ErrorCode[] = [
    'INVALID_TX',
    'INTERNAL',
    'IO',
    'CONFIG',
    'PAYLOAD_TOO_LARGE',
    'UPSTREAM_FAILED',
    'UPSTREAM_UNAVAILABLE',
    'SCROLLS_REFUSED',
    'REQUEST_TIMEOUT',
    'SERVER_BUSY',
    'RELAY_LOOP',
  ];
  for (const c of noSpell) assert.equal(isNoSpell(new CharmsError(c, 'x')), true, c);
  for (const c of real) assert.equal(isNoSpell(new CharmsError(c, 'x')), false, c);
  // the message plays no part: a "version" in the text no longer turns a parse error into "no spell"
  assert.equal(isNoSpell(new CharmsError('INVALID_TX', 'unexpected end of data reading version')), false);
  assert.equal(isNoSpell(new TypeError('a bug')), false);
  for (const c of Object.keys(HTTP_STATUS))
    assert.ok(
      [
        ...noSpell,
        ...real,
        'NOT_FOUND',
        'METHOD_NOT_ALLOWED',
        'PROVER_UNAVAILABLE',
        'PROVER_TRANSIENT',
        'SPELL_UNEXECUTABLE',
        'PROOF_UNVERIFIED',
        'INSUFFICIENT_FUNDS',
        'PROVER_ANSWER_INVALID',
        'TOO_MANY_REQUESTS',
      ].includes(c as ErrorCode),
      `${c} is classified in this test`,
    );
});

test('spellOrNone: undefined for a tx without a spell, throws for an unreadable tx', (t) => {
  assert.throws(
    () => spellOrNone({ bitcoin: '0200' }),
    (e: unknown) => e instanceof CharmsError && e.code === 'INVALID_TX',
  );
  if (!sharedOrSkip(t)) return;
  const plain = readSharedText('vectors', 'chain', '4125a400a51213b256b3b8087717e429712787d943e65f045063f4ea011bfe36.bitcoin.hex').trim();
  assert.equal(spellOrNone({ bitcoin: plain }), undefined);
});
