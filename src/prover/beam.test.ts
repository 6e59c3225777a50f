/**
 * Beaming through the prove pipeline, in mock mode, read back with `extractAndVerifySpell(…, mock)`:
 * - Cardano → Bitcoin send: an NFT minted on Cardano is beamed out; its native token is burned;
 * - Bitcoin → Cardano send: an NFT minted on Bitcoin is beamed to a Cardano UTxO; receiving it on
 *   Cardano needs the source's finality proof (which cannot be made offline for a fresh mock tx:
 *   the request is refused with the finality rule);
 * - Cardano → Bitcoin receive: the real eBTC beam (Cardano tx 0f9b34a8…, its Scrolls finality
 *   signature) received on Bitcoin with --beamed-from, proved in mock mode.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { bech32 } from '@scure/base';
import { MockBackend } from './backend.js';
import { proveSpellTx } from './prove.js';
import { bitcoinProveRequest, cardanoFundingTx, cardanoProveRequest, funding, identityFor, templateApp } from '../testing/fixtures.js';
import { readSharedText, sharedOrSkip } from '../testing/shared.js';
import { DEFAULT_CARDANO_FEE_ADDRESS } from '../cardano/builder.js';
import { cardanoAddressBytes } from '../cardano/address.js';
import { bodyField, cardanoTxHash, parseCardanoTx, parseOutputs } from '../cardano/tx.js';
import { extractAndVerifySpell } from '../verify/index.js';
import { appFromString, utxoIdFromString } from '../model/primitives.js';
import { utxoHashWithNonce } from '../checker/check.js';
import { parsePrevTx } from '../model/inputs.js';
import { detectChain } from '../chains/detect.js';
import { fromHex, toHex } from '../util/bytes.js';
import type { ValueMap } from '../codec/value.js';
import { CharmsError } from '../errors.js';
import { shutdownRunner } from '../runner/index.js';

after(() => shutdownRunner());

const ADDR = DEFAULT_CARDANO_FEE_ADDRESS;
const ADDR_HEX = toHex(cardanoAddressBytes(ADDR));
const mock = { backend: new MockBackend() };

test('Cardano → Bitcoin send: the beamed-out NFT leaves the outputs, its token is burned, the spell keeps it', async () => {
  const app = await templateApp();
  const fund = cardanoFundingTx(
    [
      { address: cardanoAddressBytes(ADDR), lovelace: 30_000_000n },
      { address: cardanoAddressBytes(ADDR), lovelace: 5_000_000n },
    ],
    7,
  );
  const fundId = toHex(cardanoTxHash(parseCardanoTx(fund)));
  const in0 = `${fundId}:0`;
  const nft = `n/${identityFor(in0)}/${app.vk}`;
  const coll = utxoIdFromString(`${fundId}:1`);
  const minted = await proveSpellTx(
    cardanoProveRequest(
      `version: 15\ntx:\n  ins: [${in0}]\n  outs:\n  - 0: {ticker: TOAD, remaining: 100000}\n  coins: [{amount: 10000000, dest: ${ADDR_HEX}}]\napp_public_inputs:\n  ${nft}: ~\n`,
      [fund],
      ADDR,
      coll,
      { binaries: [[fromHex(app.vk), app.wasm]], app_private_inputs: [[appFromString(nft), in0]] },
    ),
    mock,
  );
  const tx1 = fromHex(minted.txs[0]!.hex);
  const tx1Id = toHex(cardanoTxHash(parseCardanoTx(tx1)));
  // beam it to a Bitcoin UTXO (the funding fixture's output 0) with a nonce
  const btcDest = utxoIdFromString(`${'1dc0a4ca1013a12f5b20c63d075347cf4940ba441fe3888a9533500ab80a62fa'}:0`);
  const hash = toHex(utxoHashWithNonce(btcDest, 42n));
  const beamed = await proveSpellTx(
    cardanoProveRequest(
      `version: 15\ntx:\n  ins: [${tx1Id}:0]\n  outs:\n  - 0: {ticker: TOAD, remaining: 100000}\n  beamed_outs: {0: ${hash}}\n  coins: [{amount: 2000000, dest: ${ADDR_HEX}}]\napp_public_inputs:\n  ${nft}: ~\n`,
      [tx1],
      ADDR,
      coll,
    ),
    mock,
  );
  const tx2 = fromHex(beamed.txs[0]!.hex);
  const s = extractAndVerifySpell({ cardano: tx2 }, true);
  assert.equal(toHex(s.tx.beamed_outs!.get(0)!), hash);
  const parsed = parseCardanoTx(tx2);
  assert.equal(parseOutputs(parsed)[0]!.assets.size, 0, 'no token in the beamed-out output');
  const mint = bodyField(parsed, 9) as ValueMap;
  assert.equal((mint.entries[0]![1] as ValueMap).entries[0]![1], -1n, 'the NFT token is burned');
});

test('Bitcoin → Cardano send in mock mode; the Cardano receive needs the source finality proof', async (t) => {
  if (!sharedOrSkip(t)) return;
  const app = await templateApp();
  const f = funding(readSharedText);
  const in0 = `${f.txid}:0`;
  const nft = `n/${identityFor(in0)}/${app.vk}`;
  const fund = cardanoFundingTx(
    [
      { address: cardanoAddressBytes(ADDR), lovelace: 30_000_000n },
      { address: cardanoAddressBytes(ADDR), lovelace: 5_000_000n },
    ],
    9,
  );
  const fundId = toHex(cardanoTxHash(parseCardanoTx(fund)));
  const placeholder = utxoIdFromString(`${fundId}:0`);
  const hash = toHex(utxoHashWithNonce(placeholder));
  const sent = await proveSpellTx(
    bitcoinProveRequest(
      f,
      `version: 15\ntx:\n  ins: [${in0}]\n  outs:\n  - 0: {ticker: TOAD, remaining: 100000}\n  beamed_outs: {0: ${hash}}\n  coins: [{amount: 1000, dest: ${f.dest}}]\napp_public_inputs:\n  ${nft}: ~\n`,
      [f.hex],
      { binaries: [[fromHex(app.vk), app.wasm]], app_private_inputs: [[appFromString(nft), in0]] },
    ),
    mock,
  );
  const btc = sent.txs[0]!.hex;
  const s = extractAndVerifySpell({ bitcoin: btc }, true);
  assert.equal(toHex(s.tx.beamed_outs!.get(0)!), hash);
  // receiving on Cardano: the placeholder is spent with --beamed-from; a plain Bitcoin tx is no finality proof
  const { txidHex, parseTx } = await import('../bitcoin/tx.js');
  const srcId = txidHex(parseTx(fromHex(btc)));
  const receive = cardanoProveRequest(
    `version: 15\ntx:\n  ins: [${fundId}:0]\n  outs:\n  - 0: {ticker: TOAD, remaining: 100000}\n  coins: [{amount: 3000000, dest: ${ADDR_HEX}}]\napp_public_inputs:\n  ${nft}: ~\n`,
    [fund],
    ADDR,
    utxoIdFromString(`${fundId}:1`),
    { tx_ins_beamed_source_utxos: new Map([[0, { utxo: utxoIdFromString(`${srcId}:0`) }]]) },
  );
  receive.prev_txs.push({ chain: 'bitcoin', hex: btc });
  await assert.rejects(proveSpellTx(receive, mock), (e) => e instanceof CharmsError && /needs a valid finality proof/.test(e.message));
});

test('Cardano → Bitcoin receive: the real eBTC beam (with its Scrolls finality signature) proved on Bitcoin in mock mode', async (t) => {
  if (!sharedOrSkip(t)) return;
  const SOURCE = '0f9b34a89b50794e36331d61e6ea7ea59fa3990fe3129fbf26fefb57f031d02a';
  const DEST_TX =
    '02000000000101716fdc9322d80bf1590bf11c808bc636dab249020e1baa9f29086e03f65c8c300200000000fdffffff022c01000000000000160014c82fdb303eb4298ee85c57aae0d065c0fc3879ca4006000000000000160014a916a1a21d6466f7fcabf9bd8778d8b9210a175d02473044022018bd3ac06fff40c6a84927a59944a0a1195960951d26d773b1b95bfb9fd1aed70220770e66005e1d248d6e8e4a4742beaabe97cd6eb8348a934f3df78d34a96d5d88012103795a0a445d83475154abb64108396d40d5d3e1f167083d2657b468baa628a6729e5d0e00';
  const DEST = 'e7d468ff6c9b04bfd2fa7fdbb3deb8a413bb5a1b1fcbec6d459bb720f94f1531';
  const source = parsePrevTx(readSharedText('vectors', 'chain', `${SOURCE}.cardano.finality.yaml`), detectChain);
  const EBTC = 't/0796f63ed48144b4ec69fb794fbc2290ae63acf945fb035d5474648b50ee43b6/fd0cac892e457454be0212fa7d9a0e1517d5bd6a33aa7c66a1f10f55e375c290';
  const BRO = 't/3d7fe7e4cea6121947af73d70e5119bebd8aa5b7edfe74bfaf6e779a1847bd9b/c975d4e0c292fb95efbda5c13312d6ac1d8b5aeff7f0f1e5578645a2da70ff5f';
  const dest = '0014a916a1a21d6466f7fcabf9bd8778d8b9210a175d';
  const req = bitcoinProveRequest(
    { hex: DEST_TX, txid: DEST, changeAddress: bech32.encode('bc', [0, ...bech32.toWords(fromHex(dest.slice(4)))]), dest },
    `version: 15\ntx:\n  ins: [${DEST}:0, ${DEST}:1]\n  outs:\n  - {0: 999, 1: 1}\n  coins: [{amount: 546, dest: ${dest}}]\napp_public_inputs:\n  ${EBTC}: ~\n  ${BRO}: ~\n`,
    [DEST_TX],
    { tx_ins_beamed_source_utxos: new Map([[0, { utxo: utxoIdFromString(`${SOURCE}:0`), nonce: 8885959633213070619n }]]), fee_rate: 1 },
  );
  req.prev_txs.push(source);
  const { txs } = await proveSpellTx(req, mock);
  const s = extractAndVerifySpell({ bitcoin: txs[0]!.hex }, true);
  assert.deepEqual(
    s.tx.ins!.map((u) => toHex(u.txid.slice().reverse())),
    [DEST, DEST],
  );
  assert.equal(s.tx.outs[0]!.get(0), 999n);
});
