import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { MockBackend, type ProofBackend } from './backend.js';
import { proveSpellTx } from './prove.js';
import { CARDANO_MOCK_NOTICE } from './prove-cardano.js';
import { cardanoFundingTx, cardanoProveRequest, identityFor, templateApp } from '../testing/fixtures.js';
import { DEFAULT_CARDANO_FEE_ADDRESS } from '../cardano/builder.js';
import { cardanoAddressBytes } from '../cardano/address.js';
import { cardanoTxHash, parseCardanoTx, parseOutputs, bodyField } from '../cardano/tx.js';
import { assetNameForApp, policyIdForApp } from '../cardano/assets.js';
import { extractAndVerifySpell } from '../verify/index.js';
import { appFromString, utxoIdFromString } from '../model/primitives.js';
import { fromHex, toHex } from '../util/bytes.js';
import { CharmsError } from '../errors.js';
import { lineLogger } from '../infra/log.js';
import { shutdownRunner } from '../runner/index.js';

after(() => shutdownRunner());

// A mainnet base address of our own (the reference's default fee address works as any address).
const CHANGE = DEFAULT_CARDANO_FEE_ADDRESS;
const CHANGE_HEX = toHex(cardanoAddressBytes(CHANGE));
const FUND = cardanoFundingTx([
  { address: cardanoAddressBytes(CHANGE), lovelace: 50_000_000n },
  { address: cardanoAddressBytes(CHANGE), lovelace: 5_000_000n },
  { address: cardanoAddressBytes(CHANGE), lovelace: 30_000_000n },
]);
const FUND_ID = toHex(cardanoTxHash(parseCardanoTx(FUND)));
const COLLATERAL = utxoIdFromString(`${FUND_ID}:1`);

test('Cardano mint then spend, proved in mock mode, read back (mock) from the built transactions', async () => {
  const app = await templateApp();
  const in0 = `${FUND_ID}:0`;
  const nft = `n/${identityFor(in0)}/${app.vk}`;
  const logs: string[] = [];
  const deps = { backend: new MockBackend(), log: lineLogger((l) => logs.push(l.trimEnd())) };
  const mint = cardanoProveRequest(
    `version: 15\ntx:\n  ins: [${in0}]\n  outs:\n  - 0: {ticker: TOAD, remaining: 100000}\n  coins: [{amount: 2000000, dest: ${CHANGE_HEX}}]\napp_public_inputs:\n  ${nft}: ~\n`,
    [FUND],
    CHANGE,
    COLLATERAL,
    { binaries: [[fromHex(app.vk), app.wasm]], app_private_inputs: [[appFromString(nft), in0]] },
  );
  const { txs } = await proveSpellTx(mint, deps);
  assert.equal(txs.length, 1);
  assert.equal(txs[0]!.chain, 'cardano');
  assert.ok(logs.includes(CARDANO_MOCK_NOTICE), 'says the mock tx lacks the Scrolls witness');
  const tx1 = fromHex(txs[0]!.hex);
  const parsed = parseCardanoTx(tx1);
  assert.ok(!parsed.witnessSet.entries.some(([k]) => k === 0n), 'no vkey witnesses: not signed by Scrolls');
  const outs = parseOutputs(parsed);
  const a = appFromString(nft);
  assert.equal(outs[0]!.assets.get(toHex(policyIdForApp(a)))?.get(toHex(assetNameForApp(a))), 1n);
  assert.ok(bodyField(parsed, 9) !== undefined, 'mints the NFT');
  const s1 = extractAndVerifySpell({ cardano: tx1 }, true);
  assert.equal(s1.mock, true);
  assert.throws(
    () => extractAndVerifySpell({ cardano: tx1 }, false),
    (e) => e instanceof CharmsError,
  );
  const tx1id = toHex(cardanoTxHash(parsed));

  // spend the NFT (a simple transfer) with more ADA from the funding tx
  const spend = cardanoProveRequest(
    `version: 15\ntx:\n  ins: [${tx1id}:0, ${FUND_ID}:2]\n  outs:\n  - 0: {ticker: TOAD, remaining: 100000}\n  coins: [{amount: 3000000, dest: ${CHANGE_HEX}}]\napp_public_inputs:\n  ${nft}: ~\n`,
    [tx1, FUND],
    CHANGE,
    COLLATERAL,
  );
  const r2 = await proveSpellTx(spend, deps);
  const tx2 = fromHex(r2.txs[0]!.hex);
  const s2 = extractAndVerifySpell({ cardano: tx2 }, true);
  assert.deepEqual(
    s2.tx.ins!.map((u) => toHex(u.txid.slice().reverse()) + ':' + u.vout),
    [`${tx1id}:0`, `${FUND_ID}:2`],
  );
  assert.equal(bodyField(parseCardanoTx(tx2), 9), undefined, 'nothing minted or burned: the NFT moved');
});

test('Cardano prove: collateral required; a real prover without the Scrolls signer refuses (never a fake)', async () => {
  const req = cardanoProveRequest(
    `version: 15\ntx:\n  ins: [${FUND_ID}:0]\n  outs: [{}]\n  coins: [{amount: 2000000, dest: ${CHANGE_HEX}}]\napp_public_inputs: {}\n`,
    [FUND],
    CHANGE,
    COLLATERAL,
  );
  const { collateral_utxo: _, ...noColl } = req;
  await assert.rejects(
    proveSpellTx(noColl, { backend: new MockBackend() }),
    (e) => e instanceof CharmsError && e.code === 'INVALID_INPUT' && /Collateral UTXO is required/.test(e.message),
  );
  const real: ProofBackend = { name: 'real', mock: false, ready: async () => true, prove: async () => assert.fail('must not prove') };
  await assert.rejects(proveSpellTx(req, { backend: real }), (e) => e instanceof CharmsError && /Scrolls signer is not configured/.test(e.message));
});

test('Cardano prove asks the Scrolls signer for a real proof and returns what it signed', async () => {
  const req = cardanoProveRequest(
    `version: 15\ntx:\n  ins: [${FUND_ID}:0]\n  outs: [{}]\n  coins: [{amount: 2000000, dest: ${CHANGE_HEX}}]\napp_public_inputs: {}\n`,
    [FUND],
    CHANGE,
    COLLATERAL,
  );
  const seen: Uint8Array[] = [];
  const real: ProofBackend = { name: 'fake-real', mock: false, ready: async () => true, prove: async () => new Uint8Array(356).fill(1) };
  const scrolls = { signCardanoTx: async (tx: Uint8Array) => (seen.push(tx), Uint8Array.of(...tx, 0)) };
  const { txs } = await proveSpellTx(req, { backend: real, scrolls } as Parameters<typeof proveSpellTx>[1]);
  assert.equal(seen.length, 1);
  assert.equal(txs[0]!.hex, toHex(seen[0]!) + '00');
});

test('server: a Cardano ProveRequest answers [{"cardano": hex}] with the not-submittable notice header in mock mode; funds short is a 400', async () => {
  const { startProveServer } = await import('../prove-server/server.js');
  const { bodyHandler, LocalProveService } = await import('./service.js');
  const { proveRequestToValue } = await import('../model/request.js');
  const { toJsonCompact } = await import('../codec/json.js');
  const { h1 } = await import('../testing/http.js');
  const service = new LocalProveService({ backend: new MockBackend() });
  const server = await startProveServer({ host: '127.0.0.1', port: 0, prove: bodyHandler(service), ready: () => service.ready() });
  try {
    const spell = (amount: number) =>
      `version: 15\ntx:\n  ins: [${FUND_ID}:0]\n  outs: [{}]\n  coins: [{amount: ${amount}, dest: ${CHANGE_HEX}}]\napp_public_inputs: {}\n`;
    const body = (amount: number) => toJsonCompact(proveRequestToValue(cardanoProveRequest(spell(amount), [FUND], CHANGE, COLLATERAL), true));
    const ok = await h1(server.port, 'POST', '/spells/prove', body(2_000_000), { 'content-type': 'application/json' });
    assert.equal(ok.status, 200, ok.body.toString());
    const [entry] = JSON.parse(ok.body.toString());
    assert.deepEqual(Object.keys(entry), ['cardano']);
    assert.equal(extractAndVerifySpell({ cardano: fromHex(entry.cardano) }, true).mock, true);
    assert.equal(ok.headers['x-charms-notice'], CARDANO_MOCK_NOTICE);
    const short = await h1(server.port, 'POST', '/spells/prove', body(49_000_000), { 'content-type': 'application/json' });
    assert.equal(short.status, 400);
    assert.equal(JSON.parse(short.body.toString()).code, 'INVALID_INPUT');
    assert.match(JSON.parse(short.body.toString()).error, /short of the outputs/);
  } finally {
    await server.close();
  }
});

test("a Cardano prev tx without a spell: its native tokens of the spell's token apps are read as charms (check and prove)", async () => {
  const TOKEN = appFromString(`t/${'ab'.repeat(32)}/${'cd'.repeat(32)}`);
  const wallet = cardanoFundingTx(
    [{ address: cardanoAddressBytes(CHANGE), lovelace: 20_000_000n, assets: [[toHex(policyIdForApp(TOKEN)), toHex(assetNameForApp(TOKEN)), 40n]] }],
    11,
  );
  const walletId = toHex(cardanoTxHash(parseCardanoTx(wallet)));
  const transfer = (amounts: number[]) =>
    cardanoProveRequest(
      `version: 15\ntx:\n  ins: [${walletId}:0]\n  outs:\n${amounts.map((a) => `  - 0: ${a}\n`).join('')}  coins:\n${amounts.map(() => `  - {amount: 2000000, dest: ${CHANGE_HEX}}\n`).join('')}app_public_inputs:\n  t/${'ab'.repeat(32)}/${'cd'.repeat(32)}: ~\n`,
      [wallet],
      CHANGE,
      COLLATERAL,
    );
  // 40 tokens held as plain native assets move as 30 + 10 charms: a simple transfer, no mint
  const { txs, check } = await proveSpellTx(transfer([30, 10]), { backend: new MockBackend() });
  assert.match(check.notices.join('\n'), /simple transfer/i);
  const tx = parseCardanoTx(fromHex(txs[0]!.hex));
  assert.equal(bodyField(tx, 9), undefined, 'nothing minted or burned');
  const outs = parseOutputs(tx);
  assert.deepEqual(
    [0, 1].map((i) => outs[i]!.assets.get(toHex(policyIdForApp(TOKEN)))?.get(toHex(assetNameForApp(TOKEN)))),
    [30n, 10n],
  );
  assert.deepEqual([...extractAndVerifySpell({ cardano: fromHex(txs[0]!.hex) }, true).tx.outs.map((o) => o.get(0))], [30n, 10n]);
  // 50 out of 40 in is no simple transfer, and the token's contract is not given: refused
  await assert.rejects(proveSpellTx(transfer([50]), { backend: new MockBackend() }), (e) => e instanceof CharmsError && e.code !== 'INTERNAL');
});
