/**
 * A token's life, end to end and offline, in mock mode: mint an NFT, mint tokens against its
 * supply, transfer them (a simple transfer, no binaries), and an over-mint rejected by the
 * contract. Each transaction is proven, built, then read back and verified.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readSharedText, sharedOrSkip } from '../testing/shared.js';
import { bitcoinProveRequest, funding, identityFor, templateApp } from '../testing/fixtures.js';
import { appFromString } from '../model/primitives.js';
import type { ProveRequest } from '../model/request.js';
import { proveSpellTx } from './prove.js';
import { MockBackend, UnavailableBackend, backendFor, missingForRealProving } from './backend.js';
import { proverConfig } from '../settings/settings.js';
import { extractAndVerifySpell } from '../verify/index.js';
import { parseTx, txidHex } from '../bitcoin/tx.js';
import { fromHex } from '../util/bytes.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { shutdownRunner } from '../runner/index.js';
import { CharmsError } from '../errors.js';

after(() => shutdownRunner());

test('mint NFT → mint tokens → transfer → over-mint rejected (mock proofs, real app contract)', async (t) => {
  if (!sharedOrSkip(t)) return;
  const app = await templateApp();
  const f = funding(readSharedText);
  const utxo0 = `${f.txid}:0`;
  const id = identityFor(utxo0);
  const nft = `n/${id}/${app.vk}`;
  const tok = `t/${id}/${app.vk}`;
  const backend = new MockBackend();
  const req = (yaml: string, prev: string[], opts: Partial<ProveRequest> = {}): ProveRequest =>
    bitcoinProveRequest(f, yaml, prev, { binaries: [[sha256(app.wasm), app.wasm]], ...opts });
  const coin = `{amount: 1000, dest: ${f.dest}}`;

  const mint = await proveSpellTx(
    req(
      `version: 15\ntx:\n  ins: [${utxo0}]\n  outs:\n  - 0: {ticker: TEST, remaining: 100000}\n  coins: [${coin}]\napp_public_inputs:\n  ${nft}: ~\n`,
      [f.hex],
      {
        app_private_inputs: [[appFromString(nft), utxo0]],
      },
    ),
    { backend },
  );
  assert.equal(mint.check.cycles.length, 1);
  assert.ok(mint.check.cycles[0]! > 0n);
  const tx1 = mint.txs[0]!.hex;
  const s1 = extractAndVerifySpell({ bitcoin: tx1 }, true);
  assert.equal(s1.mock, true);
  assert.throws(() => extractAndVerifySpell({ bitcoin: tx1 }, false), /mock/);
  const tx1id = txidHex(parseTx(fromHex(tx1)));

  const mintTokens = await proveSpellTx(
    req(
      `version: 15\ntx:\n  ins: [${tx1id}:0, ${f.txid}:1]\n  outs:\n  - 0: {ticker: TEST, remaining: 30580}\n  - 1: 69420\n  coins: [${coin}, ${coin}]\napp_public_inputs:\n  ${nft}: ~\n  ${tok}: ~\n`,
      [tx1, f.hex],
    ),
    { backend },
  );
  assert.equal(mintTokens.check.cycles.length, 2);
  const tx2 = mintTokens.txs[0]!.hex;
  const s2 = extractAndVerifySpell({ bitcoin: tx2 }, true);
  assert.equal(s2.tx.outs[1]!.get(1), 69420n);
  const tx2id = txidHex(parseTx(fromHex(tx2)));
  assert.equal(parseTx(fromHex(tx2)).outputs.length, 4, 'coins, OP_RETURN, change');

  const transfer = await proveSpellTx(
    req(
      `version: 15\ntx:\n  ins: [${tx2id}:1, ${tx2id}:3]\n  outs:\n  - 0: 420\n  - 0: 69000\n  coins: [${coin}, ${coin}]\napp_public_inputs:\n  ${tok}: ~\n`,
      [tx2],
      {
        binaries: [],
      },
    ),
    { backend },
  );
  assert.deepEqual(transfer.check.cycles, [0n]);
  assert.match(transfer.check.notices.join('\n'), /simple transfer w\.r\.t\. app: t\//);
  const s3 = extractAndVerifySpell({ bitcoin: transfer.txs[0]!.hex }, true);
  assert.deepEqual([...s3.tx.outs.map((o) => o.get(0))], [420n, 69000n]);

  // creating tokens without binaries is not a simple transfer
  await assert.rejects(
    proveSpellTx(
      req(`version: 15\ntx:\n  ins: [${tx2id}:1]\n  outs:\n  - 0: 99999\n  coins: [${coin}]\napp_public_inputs:\n  ${tok}: ~\n`, [tx2], { binaries: [] }),
      { backend },
    ),
    /not a simple transfer for: \[t\//,
  );
  // over-mint: lowering remaining by 30580 but minting 40000 is refused by the contract
  await assert.rejects(
    proveSpellTx(
      req(
        `version: 15\ntx:\n  ins: [${tx2id}:0, ${tx2id}:3]\n  outs:\n  - 0: {ticker: TEST, remaining: 0}\n  - 1: 40000\n  coins: [${coin}, ${coin}]\napp_public_inputs:\n  ${nft}: ~\n  ${tok}: ~\n`,
        [tx2],
      ),
      { backend },
    ),
    (e: unknown) => e instanceof CharmsError && e.code === 'APP_FAILED' && /app contract for n\//.test(e.message),
  );
  // an input not created by the given prev_txs
  await assert.rejects(
    proveSpellTx(
      req(`version: 15\ntx:\n  ins: [${tx2id}:1]\n  outs:\n  - 0: 69420\n  coins: [${coin}]\napp_public_inputs:\n  ${tok}: ~\n`, [tx1], { binaries: [] }),
      { backend },
    ),
    /prev_txs/,
  );
});

test('the mock proof in a proven transaction passes the reference verification procedure', async (t) => {
  if (!sharedOrSkip(t)) return;
  const f = funding(readSharedText);
  const r = await proveSpellTx(
    bitcoinProveRequest(f, `version: 15\ntx:\n  ins: [${f.txid}:0]\n  outs: [{}]\n  coins: [{amount: 1000, dest: ${f.dest}}]\napp_public_inputs: {}\n`, [
      f.hex,
    ]),
    { backend: new MockBackend() },
  );
  const s = extractAndVerifySpell({ bitcoin: r.txs[0]!.hex }, true);
  assert.equal(s.mock, true);
});

test('a real backend without configuration refuses to prove and says what is missing', async () => {
  const b = await backendFor(proverConfig({ APP_ZK_PROVER: 'network' }));
  assert.ok(b instanceof UnavailableBackend);
  assert.equal(await b.ready(), false);
  assert.match((await b.unavailable?.()) ?? '', /NETWORK_PRIVATE_KEY/);
  // cpu: an honest refusal naming the alternatives; a Moongate URL: named as such
  assert.match(missingForRealProving(proverConfig({})) ?? '', /APP_ZK_PROVER=network.*ZK_GPU_SERVICE_URL.*--mock/);
  assert.match(missingForRealProving(proverConfig({ SP1_GPU_SERVICE_URL: 'http://localhost:3000/twirp/' })) ?? '', /Moongate/);
  assert.equal(missingForRealProving(proverConfig({ ZK_GPU_SERVICE_URL: 'http://gw:50051' })), undefined);
  assert.equal(missingForRealProving(proverConfig({ APP_ZK_PROVER: 'network', NETWORK_PRIVATE_KEY: '11'.repeat(32) })), undefined);
  await assert.rejects(b.prove(), (e: unknown) => e instanceof CharmsError && e.code === 'PROVER_UNAVAILABLE' && /NETWORK_PRIVATE_KEY/.test(e.message));
  assert.throws(() => proverConfig({ APP_ZK_PROVER: 'gpu' }), /APP_ZK_PROVER must be cpu or network/);
  assert.equal(proverConfig({ APP_SP1_PROVER: 'network', SPELL_SP1_PROVER: 'network' }).spellProver, 'network');
  assert.equal(proverConfig({ MOCK: '1' }).mock, true);
  assert.equal(proverConfig({ CHARMS_PROVE_API_URL: 'http://x/spells/prove' }).proveApiUrl, 'http://x/spells/prove');
});
