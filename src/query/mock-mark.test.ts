/**
 * `query-server --mock` marks the mock spells it serves (`"mock":true` after `version`); a real
 * spell keeps the former service's shape, with no `mock` field.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { fromHex } from '../util/bytes.js';
import { parseTx, txid } from '../bitcoin/tx.js';
import { txidToDisplay } from '../model/primitives.js';
import { bareSpellInputs } from '../model/request.js';
import { parseSpellText } from '../model/inputs.js';
import { MockBackend } from '../prover/backend.js';
import { proveSpellTx } from '../prover/prove.js';
import { funding } from '../testing/fixtures.js';
import { h1 } from '../testing/http.js';
import { readSharedJson, readSharedText, sharedOrSkip } from '../testing/shared.js';
import { shutdownRunner } from '../runner/index.js';
import { startQueryServer } from './service.js';

after(() => shutdownRunner());

test('query-server --mock serves a mock spell with "mock":true; a real spell has no mock field', async (t) => {
  if (!sharedOrSkip(t)) return;
  const f = funding(readSharedText);
  const spell = parseSpellText(`{"version":15,"tx":{"ins":["${f.txid}:0"],"outs":[{}],"coins":[{"amount":1000,"dest":"${f.dest}"}]},"app_public_inputs":{}}`);
  const { txs } = await proveSpellTx(
    { ...bareSpellInputs(spell, [{ chain: 'bitcoin', hex: f.hex }], 'bitcoin'), change_address: f.changeAddress, fee_rate: 2 },
    { backend: new MockBackend() },
  );
  const mockHex = txs[0]!.hex;
  const mockId = txidToDisplay(txid(parseTx(fromHex(mockHex))));
  const legacy = readSharedJson('vectors', 'spell-query-legacy-shape.json');
  const server = await startQueryServer({ host: '127.0.0.1', port: 0, mock: true });
  try {
    const r = await h1(server.port, 'PUT', `/spells/${mockId}`, JSON.stringify({ tx_hex: mockHex }), { 'content-type': 'application/json' });
    assert.equal(r.status, 200, r.body.toString());
    assert.match(r.body.toString(), /^\{"version":15,"mock":true,"apps":\{\}/);
    // the real V12 spell: byte for byte the former service's answer
    const v12 = readSharedJson('vectors', 'bitcoin-v12-spell-tx-decoded.json');
    const realId = txidToDisplay(txid(parseTx(fromHex(v12.tx_hex))));
    const real = await h1(server.port, 'PUT', `/spells/${realId}`, JSON.stringify({ tx_hex: v12.tx_hex }), { 'content-type': 'application/json' });
    assert.equal(real.status, 200, real.body.toString());
    assert.equal(real.body.toString(), legacy.response_json_text);
  } finally {
    await server.close();
  }
});
