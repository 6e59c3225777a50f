import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildSpellTx, buildSpellTxDetailed, DUST_LIMIT, feeForWeight, satPerKwu, type BuildArgs } from './builder.js';
import { charmsFee, feeScriptFor, parseFeeSettings } from './fee-settings.js';
import { opReturnSpellPayload } from './spell-location.js';
import { parseTx, serializeTx, txidHex } from './tx.js';
import { readSharedJson, sharedOrSkip } from '../testing/shared.js';
import { fromHex, reversed, toHex } from '../util/bytes.js';
import { CharmsError } from '../errors.js';
import { BITCOIN_NETWORKS } from '../model/network.js';

/** The build vectors' common inputs, and the args of one case. */
function caseArgs(d: any, c: any): BuildArgs {
  const args: BuildArgs = {
    ins: d.spell_ins.map((s: string) => ({ txid: reversed(fromHex(s.split(':')[0]!)), vout: Number(s.split(':')[1]) })),
    prevOutValues: d.prev_output_values.map(BigInt),
    coins: d.spell_coins.map((x: { amount: number; dest: string }) => ({ amount: BigInt(x.amount), dest: fromHex(x.dest) })),
    spellPayload: fromHex(d.spell_onchain_data_hex),
    changeAddress: d.change_address,
    feeRate: Number(c.fee_rate),
  };
  if (c.fee_settings_yaml) {
    const s = parseFeeSettings(c.fee_settings_yaml);
    args.charmsFee = { script: feeScriptFor(s, BITCOIN_NETWORKS.testnet4)!, amount: charmsFee(s, 2_000_000n) };
  }
  return args;
}

test('every case of bitcoin-tx-build-vectors.json reproduces byte for byte (fee, change, charms fee output)', (t) => {
  if (!sharedOrSkip(t)) return;
  const d = readSharedJson('vectors', 'bitcoin-tx-build-vectors.json');
  // The prev tx really holds the input values the cases use.
  const prev = parseTx(fromHex(d.prev_tx_hex));
  assert.equal(txidHex(prev), d.prev_txid);
  assert.deepEqual(
    prev.outputs.map((o) => o.value),
    d.prev_output_values.map(BigInt),
  );
  let built = 0;
  for (const c of d.cases) {
    const args = caseArgs(d, c);
    if (c.error) {
      assert.throws(
        () => buildSpellTx(args),
        (e: unknown) => e instanceof CharmsError && e.code === 'INSUFFICIENT_FUNDS' && /\d+ sats short/.test(e.message),
        c.name,
      );
      continue;
    }
    const r = buildSpellTxDetailed(args);
    assert.equal(toHex(r.bytes), c.result.hex, c.name);
    assert.equal(r.fee, BigInt(c.result.fee), c.name);
    assert.equal(r.change, BigInt(c.result.change), c.name);
    assert.equal(r.weightForFee, BigInt(c.result.weight_used_for_fee), c.name);
    assert.equal(satPerKwu(Number(c.fee_rate)), BigInt(c.result.fee_rate_sat_per_kwu), c.name);
    const tx = parseTx(r.bytes);
    assert.equal(tx.outputs.length, 1 + (c.result.charms_fee_output ? 1 : 0) + 1 + (c.result.change_output_added ? 1 : 0), c.name);
    if (c.result.charms_fee_output) assert.equal(tx.outputs[1]!.value, BigInt(c.result.charms_fee_output));
    assert.equal(toHex(opReturnSpellPayload(tx)), d.spell_onchain_data_hex);
    built++;
  }
  assert.equal(built, 6);
});

test('the shortfall is named in sats (the reference would abort on Amount underflow)', (t) => {
  if (!sharedOrSkip(t)) return;
  const d = readSharedJson('vectors', 'bitcoin-tx-build-vectors.json');
  const c = d.cases.find((x: any) => x.fee_rate === 91);
  // weight 3086 × 22750 sat/kwu → 70207 sats fee; 70000 in − 546 out − 70207 = −753
  assert.throws(
    () => buildSpellTx(caseArgs(d, c)),
    (e: unknown) => e instanceof CharmsError && e.message.endsWith('fee 70207 sats; 753 sats short'),
  );
});

test('Charms fee output: existing payments to the fee script count; the top-up adds 300 sats', (t) => {
  if (!sharedOrSkip(t)) return;
  const d = readSharedJson('vectors', 'bitcoin-tx-build-vectors.json');
  const base = caseArgs(d, d.cases[0]);
  const script = fromHex('0014' + '11'.repeat(20));
  const outsOf = (a: BuildArgs) => parseTx(buildSpellTx(a)).outputs;
  // fully paid by a coin: no fee output
  const paid = outsOf({ ...base, coins: [...base.coins, { amount: 2500n, dest: script }], charmsFee: { script, amount: 2500n } });
  assert.equal(paid.filter((o) => toHex(o.script) === toHex(script)).length, 1);
  // partly paid: fee − existing + 300
  const partly = outsOf({ ...base, coins: [...base.coins, { amount: 357n, dest: script }], charmsFee: { script, amount: 3561n } });
  assert.equal(partly[2]!.value, 3561n - 357n + DUST_LIMIT);
  assert.equal(partly[2]!.value, 3504n); // the V12 mainnet transaction's output 4 pattern
  // zero fee: nothing added
  assert.equal(outsOf({ ...base, charmsFee: { script, amount: 0n } }).length, outsOf(base).length);
});

test('change: added iff ≥ 300 sats and not dust for its script (330 for this P2TR); fee maths as rust-bitcoin 0.32 (truncated sat/kwu, fee rounded up)', (t) => {
  if (!sharedOrSkip(t)) return;
  const d = readSharedJson('vectors', 'bitcoin-tx-build-vectors.json');
  const base = caseArgs(d, { fee_rate: 0 });
  const total = 70000n - 546n; // fee 0
  // the reference adds 300..329 sats of P2TR change too: dust, which nodes do not relay
  for (const [inputs, changeAdded] of [
    [[546n + 299n, 0n], false],
    [[546n + 329n, 0n], false],
    [[546n + 330n, 0n], true],
  ] as const) {
    const r = buildSpellTxDetailed({ ...base, prevOutValues: [...inputs] });
    assert.equal(r.tx.outputs.length, changeAdded ? 3 : 2);
  }
  assert.equal(buildSpellTxDetailed(base).change, total);
  assert.equal(satPerKwu(1.7), 425n);
  assert.equal(satPerKwu(1.001), 250n);
  assert.equal(satPerKwu(-1), 0n);
  assert.equal(satPerKwu(Number.NaN), 0n);
  assert.equal(satPerKwu(1e300), (1n << 64n) - 1n);
  assert.equal(feeForWeight(425n, 3086n), 1312n); // 1311.55 rounded up
  assert.equal(feeForWeight(500n, 3086n), 1543n);
  assert.throws(() => feeForWeight((1n << 64n) - 1n, 3086n), /overflows u64/);
  assert.throws(
    () => buildSpellTx({ ...base, changeAddress: 'nope' }),
    (e: unknown) => e instanceof CharmsError && e.code === 'INVALID_INPUT' && /^Invalid change address: nope$/.test(e.message),
  );
});

test('the unsigned transaction: version 2, locktime 0, empty scriptSigs, final sequences, legacy form', (t) => {
  if (!sharedOrSkip(t)) return;
  const d = readSharedJson('vectors', 'bitcoin-tx-build-vectors.json');
  const bytes = buildSpellTx(caseArgs(d, d.cases[0]));
  const tx = parseTx(bytes);
  assert.equal(tx.version, 2);
  assert.equal(tx.locktime, 0);
  assert.ok(tx.inputs.every((i) => i.scriptSig.length === 0 && i.sequence === 0xffffffff && i.witness.length === 0));
  assert.deepEqual(
    tx.inputs.map((i) => `${toHex(reversed(i.txid))}:${i.vout}`),
    d.spell_ins,
  );
  assert.equal(toHex(serializeTx(tx, { witness: false })), toHex(bytes));
});

test('no built transaction ever has an empty output script: 2 000 seeded random coin sets', (t) => {
  if (!sharedOrSkip(t)) return;
  const d = readSharedJson('vectors', 'bitcoin-tx-build-vectors.json');
  const base = caseArgs(d, d.cases[0]);
  let seed = 0x1234567;
  const rnd = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  let built = 0;
  let refused = 0;
  for (let i = 0; i < 2000; i++) {
    const coins = Array.from({ length: 1 + rnd(4) }, () => ({
      amount: BigInt(300 + rnd(5000)),
      dest: rnd(4) === 0 ? new Uint8Array(0) : Uint8Array.from({ length: 1 + rnd(40) }, () => rnd(256)),
    }));
    try {
      const tx = parseTx(buildSpellTx({ ...base, coins }));
      assert.ok(
        tx.outputs.every((o) => o.script.length > 0),
        `case ${i}`,
      );
      built++;
    } catch (e) {
      assert.ok(e instanceof CharmsError, String(e));
      if (coins.some((c) => c.dest.length === 0)) {
        assert.equal(e.code, 'INVALID_INPUT');
        assert.match(e.message, /empty script/);
        refused++;
      } else if (e.code === 'INVALID_INPUT') assert.match(e.message, /is dust/);
      else assert.equal(e.code, 'INSUFFICIENT_FUNDS');
    }
  }
  assert.ok(built > 100 && refused > 100, `built ${built}, refused ${refused}`);
});

// ---- transactions no node would relay: refused with the reason (stricter than the reference)
import { checkFeeRate, dustThreshold, MAX_STANDARD_TX_WEIGHT } from './builder.js';
import { preflightProveRequest } from './preflight.js';

const P2TR = fromHex(`5120${'ab'.repeat(32)}`);
const CHANGE_P2WPKH = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
const invalid = (re: RegExp) => (e: unknown) => e instanceof CharmsError && e.code === 'INVALID_INPUT' && re.test(e.message);
function hostileArgs(nIns: number, nOuts: number, amount = 1000n): BuildArgs {
  return {
    ins: Array.from({ length: nIns }, (_, i) => ({ txid: new Uint8Array(32).fill(i % 251), vout: i })),
    prevOutValues: Array.from({ length: nIns }, () => 100_000_000n),
    coins: Array.from({ length: nOuts }, () => ({ amount, dest: P2TR })),
    spellPayload: new Uint8Array(200).fill(1),
    changeAddress: CHANGE_P2WPKH,
    feeRate: 2,
  };
}
const preflightOf = (a: BuildArgs) =>
  preflightProveRequest({
    changeAddress: a.changeAddress,
    mock: true,
    ins: a.ins,
    prevOutValues: a.prevOutValues,
    coins: a.coins,
    charmsFee: 0n,
    feeRate: a.feeRate,
    spellCborLenForEstimate: 200,
    ...(a.maxFeeRate !== undefined ? { maxFeeRate: a.maxFeeRate } : {}),
  });

test("dust thresholds are Bitcoin Core's at 3 sat/vB", () => {
  assert.equal(dustThreshold(P2TR), 330n);
  assert.equal(dustThreshold(fromHex(`0014${'11'.repeat(20)}`)), 294n);
  assert.equal(dustThreshold(fromHex(`76a914${'11'.repeat(20)}88ac`)), 546n);
  assert.equal(dustThreshold(fromHex(`a914${'11'.repeat(20)}87`)), 540n);
  assert.equal(dustThreshold(fromHex('6a01ff')), 0n);
});

test('over the standard weight (3 000 inputs, 5 000 outputs): 400 with the reason, before proving and in the builder', () => {
  for (const a of [hostileArgs(3000, 1), hostileArgs(1, 5000)]) {
    assert.throws(() => preflightOf(a), invalid(new RegExp(`over the standard limit of ${MAX_STANDARD_TX_WEIGHT}`)));
    assert.throws(() => buildSpellTx(a), invalid(/over the standard limit/));
  }
  // a large but standard transaction still builds
  const ok = buildSpellTxDetailed(hostileArgs(100, 100));
  assert.ok(ok.weightForFee < BigInt(MAX_STANDARD_TX_WEIGHT));
});

test('dust outputs (0 and 1 sat) are refused; 330 sats to P2TR is not dust', () => {
  for (const amount of [0n, 1n, 329n]) {
    assert.throws(() => preflightOf(hostileArgs(1, 1, amount)), invalid(/output #0 of \d+ sats is dust \(below 330 sats/));
    assert.throws(() => buildSpellTx(hostileArgs(1, 1, amount)), invalid(/is dust/));
  }
  assert.ok(buildSpellTx(hostileArgs(1, 1, 330n)));
});

test('absurd and negative fee rates are refused; the cap is configurable', () => {
  for (const feeRate of [1e9, 10_001, -5, Number.NaN, Infinity]) {
    const a = { ...hostileArgs(1, 1), feeRate };
    assert.throws(() => preflightOf(a), invalid(/fee_rate/), String(feeRate));
    assert.throws(() => buildSpellTx(a), invalid(/fee_rate/), String(feeRate));
  }
  assert.ok(buildSpellTx({ ...hostileArgs(1, 1), feeRate: 10_000 }));
  assert.throws(() => checkFeeRate(50, 20), invalid(/cap of 20 sat\/vB/));
  assert.throws(() => buildSpellTx({ ...hostileArgs(1, 1), feeRate: 50, maxFeeRate: 20 }), invalid(/cap of 20/));
});

test("change below the change script's dust threshold goes to the fee instead of a dust output", () => {
  // P2PKH change: dust below 546, so a change of 300..545 is not added
  const a = { ...hostileArgs(1, 1), changeAddress: '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2' };
  const probe = buildSpellTxDetailed({ ...a, prevOutValues: [0n + 1000n + 10_000n] });
  const fee = probe.fee;
  const r = buildSpellTxDetailed({ ...a, prevOutValues: [1000n + fee + 400n] });
  assert.equal(r.change, 400n);
  assert.equal(r.tx.outputs.length, 2, 'coin and OP_RETURN only');
});
