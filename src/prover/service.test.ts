import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startProveServer } from '../prove-server/server.js';
import { bodyHandler, LocalProveService } from './service.js';
import { MockBackend } from './backend.js';
import { readSharedJson, readSharedText, sharedOrSkip } from '../testing/shared.js';
import { funding } from '../testing/fixtures.js';
import { h1, h2 } from '../testing/http.js';
import { fromHex } from '../util/bytes.js';
import { decodeCbor } from '../codec/cbor.js';
import { extractAndVerifySpell } from '../verify/index.js';
import { shutdownRunner } from '../runner/index.js';

after(() => shutdownRunner());

test('POST /spells/prove with the real pipeline: JSON and CBOR requests, each kind of bad request', async (t) => {
  if (!sharedOrSkip(t)) return;
  const service = new LocalProveService({ backend: new MockBackend() });
  const server = await startProveServer({ host: '127.0.0.1', port: 0, prove: bodyHandler(service), ready: () => service.ready() });
  try {
    const v = readSharedJson('vectors', 'prove-request-vectors.json');
    // the vector requests decode (JSON and CBOR) and reach the spell rules: their inputs' transactions are not given
    const json = await h1(server.port, 'POST', '/spells/prove', v.full_request_json_text, { 'content-type': 'application/json' });
    assert.equal(json.status, 400);
    assert.equal(JSON.parse(json.body.toString()).code, 'INVALID_SPELL');
    assert.match(JSON.parse(json.body.toString()).error, /prev_txs MUST contain transactions creating input UTXOs/);
    const cbor = await h2(server.port, 'POST', '/spells/prove', fromHex(v.full_request_cbor_hex), { 'content-type': 'application/cbor' });
    assert.equal(cbor.status, 400);
    assert.equal(JSON.parse(cbor.body.toString()).code, 'INVALID_SPELL');
    const bad: [string | Uint8Array, string, string, RegExp][] = [
      ['{not json', 'application/json', 'INVALID_INPUT', /^Invalid JSON/],
      [Uint8Array.of(0xff, 0x00), 'application/cbor', 'CBOR_DECODE', /^Invalid CBOR/],
      ['{"spell": "zz"}', 'application/json', 'INVALID_INPUT', /spell/],
      [v.full_request_json_text.replace('"chain":"bitcoin"', '"chain":"dogecoin"'), 'application/json', 'INVALID_INPUT', /unknown chain/],
      [v.full_request_json_text.replace(/"change_address":"[^"]*",?/, ''), 'application/json', 'INVALID_INPUT', /missing field `change_address`/],
    ];
    for (const [body, ct, code, re] of bad) {
      const r = await h1(server.port, 'POST', '/spells/prove', body, { 'content-type': ct });
      assert.equal(r.status, 400, String(body).slice(0, 40));
      const e = JSON.parse(r.body.toString());
      assert.equal(e.code, code);
      assert.match(e.error, re);
    }
    // a valid request is proved: the reply is in the request's format
    const f = funding(readSharedText);
    const spell = `{"version":15,"tx":{"ins":["${f.txid}:0"],"outs":[{}],"coins":[{"amount":1000,"dest":"${f.dest}"}]},"app_public_inputs":{}}`;
    const { parseSpellText } = await import('../model/inputs.js');
    const { encodeSpellCbor } = await import('../model/spell.js');
    const { toHex } = await import('../util/bytes.js');
    const req = JSON.stringify({
      spell: toHex(encodeSpellCbor(parseSpellText(spell))),
      prev_txs: [{ bitcoin: f.hex }],
      change_address: f.changeAddress,
      fee_rate: 2.0,
      chain: 'bitcoin',
    });
    const ok = await h1(server.port, 'POST', '/spells/prove', req, { 'content-type': 'application/json' });
    assert.equal(ok.status, 200, ok.body.toString());
    const [{ bitcoin }] = JSON.parse(ok.body.toString());
    assert.equal(extractAndVerifySpell({ bitcoin }, true).mock, true);
    const okCbor = await h2(
      server.port,
      'POST',
      '/spells/prove',
      (await import('../codec/cbor.js')).encodeCbor(
        (await import('../model/request.js')).proveRequestToValue(
          (await import('../model/request.js')).proveRequestFromValue((await import('../codec/json.js')).parseJson(req), true),
          false,
        ),
      ),
      { 'content-type': 'application/cbor' },
    );
    assert.equal(okCbor.status, 200);
    assert.equal(okCbor.headers['content-type'], 'application/cbor');
    const decoded = decodeCbor(okCbor.body) as unknown[];
    assert.equal(decoded.length, 1);
    // not enough funds: a clear 400 naming the shortfall (the reference would panic)
    const poor = req.replace('"fee_rate":2', '"fee_rate":500');
    const r = await h1(server.port, 'POST', '/spells/prove', poor);
    assert.equal(r.status, 400);
    assert.match(JSON.parse(r.body.toString()).error, /sufficient value to cover outputs and fees/);
    assert.equal(JSON.parse(r.body.toString()).code, 'INSUFFICIENT_FUNDS');
  } finally {
    await server.close();
  }
});

test('mock mode refuses a Bitcoin spell with a Scrolls output (empty dest or not) with 400 UNSUPPORTED: nothing is built', async (t) => {
  if (!sharedOrSkip(t)) return;
  const service = new LocalProveService({ backend: new MockBackend() });
  const server = await startProveServer({ host: '127.0.0.1', port: 0, prove: bodyHandler(service), ready: () => service.ready() });
  try {
    const f = funding(readSharedText);
    const { parseSpellText } = await import('../model/inputs.js');
    const { encodeSpellCbor } = await import('../model/spell.js');
    const { toHex } = await import('../util/bytes.js');
    const body = (dest: string) =>
      JSON.stringify({
        spell: toHex(
          encodeSpellCbor(
            parseSpellText(
              `{"version":15,"tx":{"ins":["${f.txid}:0"],"outs":[{},{}],"coins":[{"amount":1000,"dest":"${f.dest}"},{"amount":1000,"dest":"${dest}"}],"scrolls":[1]},"app_public_inputs":{}}`,
            ),
          ),
        ),
        prev_txs: [{ bitcoin: f.hex }],
        change_address: f.changeAddress,
        fee_rate: 2.0,
        chain: 'bitcoin',
      });
    for (const dest of ['', f.dest]) {
      const r = await h1(server.port, 'POST', '/spells/prove', body(dest), { 'content-type': 'application/json' });
      assert.equal(r.status, 400, r.body.toString());
      const e = JSON.parse(r.body.toString());
      assert.equal(e.code, 'UNSUPPORTED');
      assert.match(e.error, /Scrolls output\(s\) #1: mock mode cannot bind Scrolls outputs/);
      assert.match(e.error, /real prover server/);
    }
  } finally {
    await server.close();
  }
});

test('POST /spells/prove: a 50 000-deep JSON array or CBOR nesting is a 400 {error, code}, not a 500', async () => {
  const service = new LocalProveService({ backend: new MockBackend() });
  const server = await startProveServer({ host: '127.0.0.1', port: 0, prove: bodyHandler(service), ready: () => service.ready() });
  try {
    const deep = `{"spell": ${'['.repeat(50_000)}0${']'.repeat(50_000)}}`;
    const cbor = new Uint8Array(50_001).fill(0x81); // 50 000 nested one-element arrays
    cbor[50_000] = 0x00;
    for (const send of [h1, h2]) {
      const j = await send(server.port, 'POST', '/spells/prove', deep, { 'content-type': 'application/json' });
      assert.equal(j.status, 400, j.body.toString().slice(0, 200));
      assert.equal(JSON.parse(j.body.toString()).code, 'INVALID_INPUT');
      const c = await send(server.port, 'POST', '/spells/prove', cbor, { 'content-type': 'application/cbor' });
      assert.equal(c.status, 400, c.body.toString().slice(0, 200));
      assert.equal(JSON.parse(c.body.toString()).code, 'CBOR_DECODE');
    }
  } finally {
    await server.close();
  }
});
