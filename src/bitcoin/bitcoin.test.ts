import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { parseTx, serializeTx, txidHex } from './tx.js';
import { addressToScript, scriptToAddress, isStandardScript } from './address.js';
import { buildSpellTx } from './builder.js';
import { charmsFee, feeScriptFor, parseFeeSettings } from './fee-settings.js';
import { opReturnSpellPayload, witnessSpellPayload } from './spell-location.js';
import { readSharedJson, readSharedText, sharedOrSkip, sharedPath } from '../testing/shared.js';
import { fromHex, reversed, toHex } from '../util/bytes.js';
import { CharmsError } from '../errors.js';

test('every chain vector parses and re-serializes byte for byte; txids match file names', (t) => {
  if (!sharedOrSkip(t)) return;
  for (const f of readdirSync(sharedPath('vectors', 'chain')).filter((f) => f.endsWith('.bitcoin.hex'))) {
    const hex = readSharedText('vectors', 'chain', f).trim();
    const tx = parseTx(fromHex(hex));
    assert.equal(toHex(serializeTx(tx)), hex, f);
    if (!f.startsWith('neg-')) assert.equal(txidHex(tx), f.slice(0, 64));
  }
});

test('truncated or padded transactions are INVALID_TX errors', (t) => {
  if (!sharedOrSkip(t)) return;
  const hex = readSharedJson('vectors', 'bitcoin-v12-spell-tx-decoded.json').tx_hex as string;
  const b = fromHex(hex);
  for (const cut of [1, 5, 40, b.length - 1]) assert.throws(() => parseTx(b.subarray(0, cut)), (e: unknown) => e instanceof CharmsError && e.code === 'INVALID_TX');
  assert.throws(() => parseTx(fromHex(hex + '00')), /trailing/);
});

test('spell payloads are found where the reference looks (OP_RETURN, Taproot witness)', (t) => {
  if (!sharedOrSkip(t)) return;
  const v12 = readSharedJson('vectors', 'bitcoin-v12-spell-tx-decoded.json');
  assert.equal(toHex(opReturnSpellPayload(parseTx(fromHex(v12.tx_hex)))), v12.payload_hex);
  const w = readSharedJson('vectors', 'bitcoin-witness-era-spell-txs.json');
  const list = (Array.isArray(w) ? w : Object.values(w)).filter((x: any) => x && typeof x === 'object' && typeof x.tx_hex === 'string');
  assert.ok(list.length >= 2);
  for (const x of list as { tx_hex: string }[]) {
    const tx = parseTx(fromHex(x.tx_hex));
    assert.throws(() => opReturnSpellPayload(tx), /exactly one spell OP_RETURN/);
    assert.ok(witnessSpellPayload(tx).length > 500);
  }
  const plain = parseTx(fromHex(readSharedText('vectors', 'chain', '4125a400a51213b256b3b8087717e429712787d943e65f045063f4ea011bfe36.bitcoin.hex').trim()));
  assert.throws(() => witnessSpellPayload(plain), /expected OP_FALSE/);
});

test('util dest: every address kind maps to its scriptPubKey and back', (t) => {
  if (!sharedOrSkip(t)) return;
  for (const v of readSharedJson('vectors', 'util-dest-bitcoin-vectors.json').bitcoin) {
    const { script, network } = addressToScript(v.addr);
    assert.equal(toHex(script), v.dest, v.addr);
    assert.equal(network, v.network === 'test' ? 'testnet4' : v.network);
    assert.ok(isStandardScript(script));
    assert.equal(scriptToAddress(script, network), v.addr);
  }
  for (const bad of ['', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5', '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3', 'BC1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4'.replace('BC1q', 'bC1q')])
    assert.throws(() => addressToScript(bad), (e: unknown) => e instanceof CharmsError && e.code === 'INVALID_INPUT');
});

test('spell-tx builder reproduces every build vector; funds short is an error naming the shortfall', (t) => {
  if (!sharedOrSkip(t)) return;
  const d = readSharedJson('vectors', 'bitcoin-tx-build-vectors.json');
  let built = 0;
  for (const c of d.cases) {
    const args = {
      ins: d.spell_ins.map((s: string) => ({ txid: reversed(fromHex(s.split(':')[0]!)), vout: Number(s.split(':')[1]) })),
      prevOutValues: d.prev_output_values.map(BigInt),
      coins: d.spell_coins.map((x: { amount: number; dest: string }) => ({ amount: BigInt(x.amount), dest: fromHex(x.dest) })),
      spellPayload: fromHex(d.spell_onchain_data_hex),
      changeAddress: d.change_address,
      feeRate: Number(c.fee_rate),
      ...(c.fee_settings_yaml
        ? (() => {
            const s = parseFeeSettings(c.fee_settings_yaml);
            return { charmsFee: { script: feeScriptFor(s, 'testnet4')!, amount: charmsFee(s, 2_000_000n) } };
          })()
        : {}),
    };
    if (c.error) {
      assert.throws(() => buildSpellTx(args), (e: unknown) => e instanceof CharmsError && e.code === 'INSUFFICIENT_FUNDS' && /sats short/.test(e.message));
      continue;
    }
    assert.equal(toHex(buildSpellTx(args)), c.result.hex, c.name);
    built++;
  }
  assert.equal(built, 6);
});

test('fee settings: validated like the reference; fee = cycles × rate / 10^6 + base', () => {
  const s = parseFeeSettings('fee_addresses:\n  bitcoin:\n    main: bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4\nfee_rate: 1000\nfee_base: 500\n');
  assert.equal(charmsFee(s, 2_000_000n), 2500n);
  assert.equal(feeScriptFor(s, 'testnet4'), undefined);
  assert.throws(() => parseFeeSettings('fee_addresses: {cardano: {mainnet: x}}\nfee_rate: 1\nfee_base: 1\n'), /bitcoin is required/);
  assert.throws(() => parseFeeSettings('fee_addresses:\n  bitcoin:\n    main: tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7\nfee_rate: 1\nfee_base: 1\n'), /not valid for main/);
  assert.throws(() => parseFeeSettings('fee_addresses:\n  bitcoin:\n    mainnet: x\nfee_rate: 1\nfee_base: 1\n'), /unknown Bitcoin chain/);
});

test('Bitcoin finality proofs (merkle block + headers) of real mainnet transactions', async (t) => {
  if (!sharedOrSkip(t)) return;
  const { verifyBitcoinFinality, targetFromBits, workOf } = await import('./finality.js');
  const { parseYaml } = await import('../codec/yaml.js');
  const { chainTxFromValue } = await import('../model/request.js');
  for (const id of ['8d70833ad1ce5d84cffb76fdc6038d669c6cf1808f3f84f3f0d83cad712e33a3', '0d4fb0b026c366eec15e5abef7e6461d6464d4e24bc91c367ba4c4142cc24fa6']) {
    const tx = chainTxFromValue(parseYaml(readSharedText('vectors', 'chain', `${id}.bitcoin.finality.yaml`)), id);
    assert.ok(tx.chain === 'bitcoin' && tx.proof);
    if (tx.chain !== 'bitcoin' || !tx.proof) continue;
    assert.ok(verifyBitcoinFinality(tx.hex, tx.proof.proof, tx.proof.headers), id);
    assert.equal(verifyBitcoinFinality(tx.hex, tx.proof.proof, tx.proof.headers.slice(0, 1)), false, 'not enough work');
    assert.equal(verifyBitcoinFinality(tx.hex, tx.proof.proof, [...tx.proof.headers].reverse()), false, 'headers must chain');
    const otherTx = readSharedText('vectors', 'chain', '4125a400a51213b256b3b8087717e429712787d943e65f045063f4ea011bfe36.bitcoin.hex').trim();
    assert.equal(verifyBitcoinFinality(otherTx, tx.proof.proof, tx.proof.headers), false, 'the block must contain the tx');
  }
  assert.ok(workOf(targetFromBits(0x1701e2a0)) * 6n >= workOf(targetFromBits(0x16507000)));
});
