/**
 * A prerequisite transaction whose spell is a mock counts as carrying no spell outside mock mode
 * (as in the reference); the error that follows then names that transaction and `--mock`.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { sha256 } from '@noble/hashes/sha2.js';
import { CharmsError } from '../errors.js';
import { utf8 } from '../util/bytes.js';
import { parseTx, txid } from '../bitcoin/tx.js';
import { fromHex } from '../util/bytes.js';
import { txidToDisplay, utxoIdFromString, type App, type Data } from '../model/primitives.js';
import type { NormalizedSpell } from '../model/spell.js';
import { bareSpellInputs } from '../model/request.js';
import { MockBackend } from '../prover/backend.js';
import { proveSpellTx } from '../prover/prove.js';
import { funding } from '../testing/fixtures.js';
import { readSharedText, sharedOrSkip } from '../testing/shared.js';
import { shutdownRunner } from '../runner/index.js';
import { checkSpell, type RunApp } from './check.js';

after(() => shutdownRunner());

const WASM = utf8('\0asm a token app for the mock prev test');
const TOKEN: App = { tag: 't', identity: sha256(utf8('mock prev token')), vk: sha256(WASM) };
const okRunner: RunApp = async () => ({ ok: true, cycles: 1n, stderr: '' });

test('spending a mock-spell output without mock mode: the error names the prev tx and --mock', async (t) => {
  if (!sharedOrSkip(t)) return;
  const f = funding(readSharedText);
  const dest = fromHex(f.dest);
  const mint: NormalizedSpell = {
    version: 15,
    tx: { ins: [utxoIdFromString(`${f.txid}:0`)], outs: [new Map<number, Data>([[0, 5n]])], coins: [{ amount: 20000n, dest }] },
    app_public_inputs: [[TOKEN, null]],
    versioned_apps: [],
    mock: false,
  };
  const minted = await proveSpellTx(
    { ...bareSpellInputs(mint, [{ chain: 'bitcoin', hex: f.hex }], 'bitcoin'), binaries: [[TOKEN.vk, WASM]], change_address: f.changeAddress, fee_rate: 2 },
    { backend: new MockBackend(), runApp: okRunner },
  );
  const mockTx = minted.txs[0]!.hex;
  const mockTxid = txidToDisplay(txid(parseTx(fromHex(mockTx))));
  const transfer: NormalizedSpell = {
    version: 15,
    tx: { ins: [utxoIdFromString(`${mockTxid}:0`)], outs: [new Map<number, Data>([[0, 5n]])], coins: [{ amount: 1000n, dest }] },
    app_public_inputs: [[TOKEN, null]],
    versioned_apps: [],
    mock: false,
  };
  const inputs = bareSpellInputs(transfer, [{ chain: 'bitcoin', hex: mockTx }], 'bitcoin');
  // in mock mode the mock spell counts: a simple transfer
  const ok = await checkSpell({ ...inputs, mock: true, runApp: okRunner });
  assert.deepEqual(ok.cycles, [0n]);
  // without it, the tokens seem to come from nowhere, and the error says why
  await assert.rejects(checkSpell({ ...inputs, mock: false, runApp: okRunner }), (e: unknown) => {
    assert.ok(e instanceof CharmsError);
    assert.match(e.message, /^binaries must contain exactly the required app binaries\./);
    assert.ok(e.message.includes(`note: prev tx ${mockTxid} carries a mock spell`), e.message);
    assert.match(e.message, /pass --mock/);
    return true;
  });
});
