import { test } from 'node:test';
import assert from 'node:assert/strict';
import { preflightProveRequest, type PreflightArgs } from './preflight.js';
import { buildSpellTx } from './builder.js';
import { charmsFee, parseFeeSettings } from './fee-settings.js';
import { readSharedJson, sharedOrSkip } from '../testing/shared.js';
import { fromHex, reversed } from '../util/bytes.js';
import { CharmsError } from '../errors.js';

function caseArgs(d: any, c: any): PreflightArgs {
  return {
    changeAddress: d.change_address,
    mock: false,
    ins: d.spell_ins.map((s: string) => ({ txid: reversed(fromHex(s.split(':')[0]!)), vout: Number(s.split(':')[1]) })),
    prevOutValues: d.prev_output_values.map(BigInt),
    coins: d.spell_coins.map((x: { amount: number; dest: string }) => ({ amount: BigInt(x.amount), dest: fromHex(x.dest) })),
    charmsFee: c.fee_settings_yaml ? charmsFee(parseFeeSettings(c.fee_settings_yaml), 2_000_000n) : 0n,
    feeRate: Number(c.fee_rate),
    spellCborLenForEstimate: c.preflight_spell_cbor_len,
  };
}

const err = (code: string, text: string) => (e: unknown) => e instanceof CharmsError && e.code === code && e.message === text;

test('every build vector: the preflight estimate, vsize and verdict match', (t) => {
  if (!sharedOrSkip(t)) return;
  const d = readSharedJson('vectors', 'bitcoin-tx-build-vectors.json');
  for (const c of d.cases) {
    const r = preflightProveRequest(caseArgs(d, c));
    assert.equal(c.preflight_passes, true);
    assert.equal(r.estimatedBitcoinFee, BigInt(c.preflight_estimated_bitcoin_fee), c.name);
    assert.equal(r.txVsize, c.preflight_tx_vsize, c.name);
    assert.equal(r.network.coreChain, d.network_from_change_address);
    assert.equal(r.totalSatsIn, 70000n);
  }
});

test('the fee_rate 91 case passes the preflight but not the builder (the reference would abort)', (t) => {
  if (!sharedOrSkip(t)) return;
  const d = readSharedJson('vectors', 'bitcoin-tx-build-vectors.json');
  const c = d.cases.find((x: any) => x.fee_rate === 91);
  const a = caseArgs(d, c);
  assert.equal(preflightProveRequest(a).estimatedBitcoinFee, 47957n);
  assert.throws(
    () =>
      buildSpellTx({
        ins: a.ins,
        prevOutValues: a.prevOutValues as bigint[],
        coins: a.coins,
        spellPayload: fromHex(d.spell_onchain_data_hex),
        changeAddress: a.changeAddress,
        feeRate: a.feeRate,
      }),
    (e: unknown) => e instanceof CharmsError && e.code === 'INSUFFICIENT_FUNDS',
  );
});

test('insufficient funds: Σin must exceed Σcoins + charms fee + estimate (strictly)', (t) => {
  if (!sharedOrSkip(t)) return;
  const d = readSharedJson('vectors', 'bitcoin-tx-build-vectors.json');
  const a = caseArgs(d, d.cases[0]); // estimate 1054, coins 546
  const insufficient = (e: unknown) =>
    e instanceof CharmsError && e.code === 'INSUFFICIENT_FUNDS' && e.message.startsWith('spell inputs must have sufficient value to cover outputs and fees: ');
  // the reference's sentence, then every number the verdict was made on and the shortfall
  assert.throws(
    () => preflightProveRequest({ ...a, prevOutValues: [1054n + 546n, 0n] }),
    err(
      'INSUFFICIENT_FUNDS',
      'spell inputs must have sufficient value to cover outputs and fees: inputs 1600 sats; outputs 546 sats + charms fee 0 sats + estimated bitcoin fee 1054 sats (at 2 sat/vB) = 1600 sats; 1 sats short: add a funding input or lower the fee rate',
    ),
  );
  assert.ok(preflightProveRequest({ ...a, prevOutValues: [1054n + 546n, 1n] }));
  assert.throws(() => preflightProveRequest({ ...a, prevOutValues: [1054n + 546n, 1n], charmsFee: 1n }), insufficient);
  // fee_rate is truncated to whole sat/vB: 2.9 counts as 2
  assert.equal(preflightProveRequest({ ...a, feeRate: 2.9 }).estimatedBitcoinFee, 1054n);
});

test('change address networks: main and testnet4; regtest only on a mock prover', (t) => {
  if (!sharedOrSkip(t)) return;
  const d = readSharedJson('vectors', 'bitcoin-tx-build-vectors.json');
  const a = caseArgs(d, d.cases[0]);
  const bcrt = 'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080';
  assert.throws(
    () => preflightProveRequest({ ...a, changeAddress: bcrt.toUpperCase() }),
    err('INVALID_INPUT', `Unsupported network of change address: Address<NetworkUnchecked>(${bcrt})`),
  );
  assert.equal(preflightProveRequest({ ...a, changeAddress: bcrt, mock: true }).network.coreChain, 'regtest');
  assert.equal(preflightProveRequest({ ...a, changeAddress: 'mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn', mock: false }).network.coreChain, 'testnet4');
  assert.equal(preflightProveRequest({ ...a, changeAddress: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4' }).network.coreChain, 'main');
  assert.throws(
    () => preflightProveRequest({ ...a, changeAddress: 'nope' }),
    (e: unknown) => e instanceof CharmsError && e.code === 'INVALID_INPUT',
  );
});

test('output scripts must be address scripts (empty Scrolls dests excepted); missing prev outputs; overflow', (t) => {
  if (!sharedOrSkip(t)) return;
  const d = readSharedJson('vectors', 'bitcoin-tx-build-vectors.json');
  const a = caseArgs(d, d.cases[0]);
  const badOuts = err('INVALID_INPUT', 'all output addresses must be valid for the network');
  assert.throws(() => preflightProveRequest({ ...a, coins: [{ amount: 546n, dest: fromHex('6a01ff') }] }), badOuts);
  assert.throws(() => preflightProveRequest({ ...a, coins: [{ amount: 546n, dest: new Uint8Array(0) }] }), badOuts);
  assert.ok(preflightProveRequest({ ...a, coins: [{ amount: 546n, dest: new Uint8Array(0) }], scrolls: [0] }));
  assert.throws(
    () => preflightProveRequest({ ...a, prevOutValues: [50000n, undefined] }),
    err('INVALID_INPUT', `utxo not found in prev_txs: ${d.spell_ins[1]}`),
  );
  const max = (1n << 64n) - 1n;
  assert.throws(() => preflightProveRequest({ ...a, prevOutValues: [max, 1n] }), err('INVALID_INPUT', 'total input sats overflow u64'));
  assert.throws(
    () => preflightProveRequest({ ...a, coins: [a.coins[0]!, { ...a.coins[0]!, amount: max }] }),
    err('INVALID_INPUT', 'total output sats overflow u64'),
  );
  assert.throws(() => preflightProveRequest({ ...a, charmsFee: max }), err('INVALID_INPUT', 'total required sats (outputs + fees) overflow u64'));
  assert.throws(() => preflightProveRequest({ ...a, feeRate: 1e19, maxFeeRate: Infinity }), err('INVALID_INPUT', 'estimated bitcoin fee overflow u64'));
});
