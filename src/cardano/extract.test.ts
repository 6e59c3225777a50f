import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { extractAndVerifySpell, spellToJson } from '../verify/index.js';
import { readSharedJson, readSharedText, sharedOrSkip, sharedPath } from '../testing/shared.js';
import { parseJson, toJsonCompact, toJsonPretty } from '../codec/json.js';
import { decodeCbor, encodeCbor } from '../codec/cbor.js';
import { Tagged, ValueMap, type Value } from '../codec/value.js';
import { fromHex, toHex } from '../util/bytes.js';
import { CharmsError } from '../errors.js';
import { encodeSpellCbor, spellToValue, type NormalizedSpell } from '../model/spell.js';
import { publicValuesFor } from '../groth16/public-values.js';
import { cardanoTxHash, parseCardanoTx, parseInputs, parseOutputs } from './tx.js';
import { extractAndVerifyCardano, findCardanoSpell, fillFromCardanoTx } from './extract.js';
import { proxyAddressForApps } from './scripts.js';
import { utxoIdToString } from '../model/primitives.js';

const V11 = '361927aed267ef049a5b9315aa7296493b385938d73340146b0af5d4637a02cf';
const chainHex = (id: string) => readSharedText('vectors', 'chain', `${id}.cardano.hex`).trim();
const errCode = (code: string, re?: RegExp) => (e: unknown) => e instanceof CharmsError && e.code === code && (re === undefined || re.test(e.message));

interface Expected {
  txid: string;
  has_spell: boolean;
  verified: boolean;
  version: number | null;
  spell: unknown;
  error: string | null;
}

test('every Cardano chain vector gives the expected verdict, version and exact spell, with and without mock', (t) => {
  if (!sharedOrSkip(t)) return;
  const files = readdirSync(sharedPath('vectors', 'chain')).filter((f) => f.endsWith('.cardano.hex'));
  assert.ok(files.length >= 8);
  let verified = 0;
  let rejected = 0;
  for (const f of files) {
    const id = f.replace('.cardano.hex', '');
    const hex = chainHex(id);
    const tx = parseCardanoTx(fromHex(hex));
    for (const mock of [false, true]) {
      const mf = `${id}.mock.json`;
      const exp = readSharedJson<Expected>(
        'vectors',
        'chain',
        'expected',
        mock && existsSync(sharedPath('vectors', 'chain', 'expected', mf)) ? mf : `${id}.json`,
      );
      assert.equal(toHex(cardanoTxHash(tx)), exp.txid, `${id} txid`);
      // has_spell: a (spell, proof) pair is found and decodes
      let version: number | null = null;
      try {
        version = findCardanoSpell(tx).spell.version;
      } catch (e) {
        assert.ok(e instanceof CharmsError, `${id}: ${e}`);
      }
      assert.equal(version !== null, exp.has_spell, `${id} has_spell`);
      assert.equal(version, exp.version, `${id} version`);
      let got: string | undefined;
      let err: unknown;
      try {
        got = spellToJson(extractAndVerifySpell({ cardano: hex }, mock));
      } catch (e) {
        err = e;
      }
      if (exp.verified) {
        assert.ok(got !== undefined, `${id} mock=${mock} should verify: ${(err as Error)?.message}`);
        assert.equal(got, toJsonPretty(parseJson(JSON.stringify(exp.spell))), `${id} mock=${mock}`);
        verified++;
      } else {
        assert.equal(got, undefined, `${id} mock=${mock} must not verify (${exp.error})`);
        assert.ok(err instanceof CharmsError, `${id}: a CharmsError, not ${err}`);
        rejected++;
      }
    }
  }
  // every vector was decided as its expectation file says; both verdicts are represented
  assert.equal(verified + rejected, files.length * 2);
  assert.ok(verified >= 6 && rejected >= 10, `verified ${verified}, rejected ${rejected}`);
});

test('specific rejection reasons match the reference (no spell output, no redeemers, mock)', (t) => {
  if (!sharedOrSkip(t)) return;
  const run = (id: string, mock: boolean) => () => extractAndVerifyCardano(fromHex(chainHex(id)), mock);
  assert.throws(run('974cd8137ec7bd73cebcd27d3c532db11b532a803731d236d36b75870130381e', false), errCode('NO_SPELL', /no spell output/));
  assert.throws(run('eccae11ca6a14d28871961311e1cd3d5e75e5ca246c9ca3ced908d7f3fdb33c9', true), errCode('NO_SPELL', /no spell output/));
  assert.throws(run('bc9a36a4dee10d681684d924ace6fcb52974885bafcf17b6f970a83a212b06b2', false), errCode('INVALID_SPELL', /no redeemers/));
  assert.throws(run('2ac8d998633263244c43b06930098f1e9fa6ea942a8952501f8736fafa9d3778', false), errCode('PROOF_INVALID', /mock/));
  assert.throws(
    run('2ac8d998633263244c43b06930098f1e9fa6ea942a8952501f8736fafa9d3778', true),
    errCode('INVALID_SPELL', /withdraw redeemer with input permutation/),
  );
  assert.throws(run('neg-6', false), errCode('PROOF_INVALID'));
});

test('cardano-v11-tx.json: the decoded spell, inputs, permutation, outputs and public values of cardano-tx-decoded.json', (t) => {
  if (!sharedOrSkip(t)) return;
  const hex: string = readSharedJson('vectors', 'cardano-v11-tx.json').cardano;
  const d = readSharedJson('vectors', 'cardano-tx-decoded.json');
  const bytes = fromHex(hex);
  const tx = parseCardanoTx(bytes);
  assert.equal(toHex(cardanoTxHash(tx)), d.cardano_tx_body_hash);
  assert.deepEqual(parseInputs(tx).map(utxoIdToString), d.tx_inputs_in_cbor_order);
  const outs = parseOutputs(tx);
  assert.equal(outs.length, d.outputs.length);
  outs.forEach((o, i) => assert.equal(toHex(o.address), d.outputs[i].address));
  const spell = extractAndVerifyCardano(bytes, false);
  assert.deepEqual(
    spell.tx.ins!.map(utxoIdToString),
    d.withdraw_redeemer_permutation.map((p: number) => d.tx_inputs_in_cbor_order[p]),
  );
  assert.equal(spellToJson(spell), toJsonPretty(parseJson(JSON.stringify(d.spell))));
  // the public values the proof commits to, byte for byte (independent of the proof verifier)
  assert.equal(toHex(publicValuesFor(spell.version, encodeSpellCbor(spell), false)), d.public_values_hex);
});

test('finality-form vector: the tx verifies and gives the decoded spell', (t) => {
  if (!sharedOrSkip(t)) return;
  const d = readSharedJson('vectors', 'cardano-finality-tx-decoded.json');
  const spell = extractAndVerifySpell({ cardano: d.tx_hex }, false);
  assert.equal(toHex(cardanoTxHash(parseCardanoTx(fromHex(d.tx_hex)))), d.cardano_tx_body_hash);
  assert.equal(spellToJson(spell), toJsonPretty(parseJson(JSON.stringify(d.spell))));
});

/** Byte range [start, end) of the spell datum's chunked byte string inside the raw tx; end is its 0xff. */
function datumRange(tx: Uint8Array): [number, number] {
  const at = Buffer.from(tx).indexOf(Buffer.from([0x5f, 0x58, 0x40])); // indefinite bytes, 64-byte chunks
  assert.ok(at > 0);
  let i = at + 1;
  while (tx[i] !== 0xff) {
    assert.ok(tx[i]! >= 0x40 && tx[i]! <= 0x58);
    i += tx[i] === 0x58 ? 2 + tx[i + 1]! : 1 + (tx[i]! - 0x40);
  }
  return [at, i];
}

test('any flipped byte in the spell datum (spell or proof) makes verification fail', (t) => {
  if (!sharedOrSkip(t)) return;
  const tx = fromHex(chainHex(V11));
  const [start, end] = datumRange(tx);
  const payload = findCardanoSpell(parseCardanoTx(tx));
  assert.equal(payload.proof.length, 260);
  let flips = 0;
  let nullToUndefined = 0;
  assert.equal(end - start, 1 + 16 * 66 + 2 + (1070 - 16 * 64)); // 17 chunks, 1070 payload bytes
  for (let i = start + 1; i < end; i += 5) {
    const bad = Uint8Array.from(tx);
    bad[i]! ^= 0x01;
    // a null (f6) in Data flipped to undefined (f7): ciborium reads undefined as null, so the
    // spell is the same and verifies, as in the reference; a 0xf6 argument byte must still fail
    if (tx[i] === 0xf6) {
      try {
        assert.equal(extractAndVerifyCardano(bad, false).version, 11);
        nullToUndefined++;
      } catch (e) {
        assert.ok(e instanceof CharmsError, `flip at byte ${i}`);
      }
    } else assert.throws(() => extractAndVerifyCardano(bad, false), CharmsError, `flip at byte ${i}`);
    flips++;
  }
  // the proof is the tail of the payload: flip each of its last 300 bytes, in mock mode too
  for (let i = end - 300; i < end; i += 3) {
    const bad = Uint8Array.from(tx);
    bad[i]! ^= 0x10;
    assert.throws(() => extractAndVerifyCardano(bad, true), CharmsError, `proof flip at byte ${i}`);
    flips++;
  }
  assert.ok(flips > 300, `${flips} flips`);
  assert.ok(nullToUndefined >= 1, 'at least one Data null was flipped to undefined and accepted');
});

/** Re-encodes the v11 tx with its withdraw-redeemer permutation replaced. */
function withPermutation(perm: number[]): Uint8Array {
  const v = decodeCbor(fromHex(chainHex(V11))) as Value[];
  const ws = v[1] as ValueMap;
  const reds = ws.entries.find(([k]) => k === 5n)![1] as Value[][];
  const reward = reds.find((r) => r[0] === 3n)!;
  assert.deepEqual(decodeCbor(reward[2] as Uint8Array), [0n, 2n, 1n]);
  reward[2] = encodeCbor(perm.map(BigInt));
  return encodeCbor(v);
}

test('the input permutation must be a bijection (documented divergence: the reference accepts repeats)', (t) => {
  if (!sharedOrSkip(t)) return;
  // re-encoding does not change the body (definite-length re-encoding aside, the rules run before the proof)
  for (const perm of [
    [0, 2, 0],
    [0, 0, 0],
    [0, 2],
    [0, 2, 1, 1],
    [0, 2, 3],
    [2, 2, 1],
  ])
    assert.throws(() => extractAndVerifyCardano(withPermutation(perm), true), errCode('INVALID_SPELL', /not a permutation/), perm.join(','));
  // a bijection in the wrong order is well-formed but the proof does not cover it
  assert.throws(() => extractAndVerifyCardano(withPermutation([1, 0, 2]), false), errCode('PROOF_INVALID'));
  // the original one still verifies after the witness-set re-encoding (witnesses are not hashed)
  const ok = extractAndVerifyCardano(withPermutation([0, 2, 1]), false);
  assert.equal(ok.tx.ins!.length, 3);
});

// ---- rule tests on modified copies of the v11 tx (fill only, no proof) ----

interface Mutable {
  v: Value[];
  body: ValueMap;
  outs: Value[];
}
function v11Mutable(): Mutable {
  const v = decodeCbor(fromHex(chainHex(V11))) as Value[];
  const body = v[0] as ValueMap;
  const outs = body.entries.find(([k]) => k === 1n)![1] as Value[];
  return { v, body, outs };
}
const outField = (o: Value, k: number) => (o as ValueMap).entries.find(([key]) => key === BigInt(k));
function fillMutated(m: Mutable, edit?: (s: NormalizedSpell) => NormalizedSpell): NormalizedSpell {
  const tx = parseCardanoTx(encodeCbor(m.v));
  const s = findCardanoSpell(tx).spell;
  return fillFromCardanoTx(edit ? edit(s) : s, tx);
}

test('rules: proxy address for non-token charms, exact CNT amounts, beamed outputs, Byron addresses', (t) => {
  if (!sharedOrSkip(t)) return;
  // unmodified: fills exactly as the verified spell
  assert.equal(fillMutated(v11Mutable()).tx.coins!.length, 2);

  // output 0 holds a c/ (non-token) charm: moving it to a key address breaks the proxy rule
  let m = v11Mutable();
  outField(m.outs[0]!, 0)![1] = Uint8Array.from([0x61, ...new Uint8Array(28).fill(7)]);
  assert.throws(() => fillMutated(m), errCode('INVALID_SPELL', /proxy script address/));

  // an output without non-token charms must not sit at the empty app set's proxy address
  m = v11Mutable();
  outField(m.outs[1]!, 0)![1] = proxyAddressForApps([]);
  assert.throws(() => fillMutated(m), errCode('INVALID_SPELL', /proxy script address of no apps/));
  // ... but the empty set's proxy address behind a base address with any stake part is the same credential
  m = v11Mutable();
  outField(m.outs[1]!, 0)![1] = Uint8Array.from([0x11, ...proxyAddressForApps([]).subarray(1), ...new Uint8Array(28)]);
  assert.throws(() => fillMutated(m), errCode('INVALID_SPELL', /proxy script address of no apps/));

  // Byron address: no payment credential
  m = v11Mutable();
  // (a well-formed one: [#6.24(cbor [root, {}, 0]), CRC-32 of that cbor]; CML refuses a bad CRC)
  outField(m.outs[0]!, 0)![1] = fromHex('82d818582183581c' + '11'.repeat(28) + 'a0001a4e47c474');
  assert.throws(() => fillMutated(m), errCode('INVALID_SPELL', /payment credential/));

  // output 1 is beamed out, so its token charms need no CNTs; un-beamed, they are missing
  m = v11Mutable();
  assert.throws(
    () =>
      fillMutated(m, (s) => {
        const { beamed_outs: _, ...tx } = s.tx;
        return { ...s, tx };
      }),
    errCode('INVALID_SPELL', /short of its charms|expected/),
  );
});

test('rules: CNTs of charms are taken out of content; excess or missing amounts are rejected', async (t) => {
  if (!sharedOrSkip(t)) return;
  const { expectedTokens } = await import('./assets.js');
  const base = fillMutated(v11Mutable());
  const apps = base.app_public_inputs.map(([a]) => a);
  const unbeam = (s: NormalizedSpell): NormalizedSpell => {
    const { beamed_outs: _, ...tx } = s.tx;
    return { ...s, tx };
  };
  const charms1 = [...base.tx.outs[1]!.entries()].map(([k, d]) => [apps[k]!, d] as [(typeof apps)[0], Value]);
  const exp = expectedTokens(charms1);
  assert.equal(exp.size, 1); // three t/ apps sharing one vk → one policy, three asset names
  const [policy, names] = [...exp][0]!;
  assert.equal(names.size, 3);
  const setAssets = (m: Mutable, extra: bigint, foreign: boolean) => {
    const o = m.outs[1] as ValueMap;
    const f = outField(o, 1)!;
    const inner = new ValueMap([...names].map(([n, q]) => [fromHex(n), q + extra]));
    const ma = new ValueMap([[fromHex(policy), inner]]);
    if (foreign) ma.entries.unshift([new Uint8Array(28).fill(0xee), new ValueMap([[fromHex('abcd'), 5n]])]);
    f[1] = [f[1] as bigint, ma];
  };
  // exact amounts + a foreign token: complies, content keeps only the foreign token
  let m = v11Mutable();
  setAssets(m, 0n, true);
  const s = fillMutated(m, unbeam);
  assert.equal(toJsonCompact(s.tx.coins![1]!.content!), `{"multiasset":{"${'ee'.repeat(28)}":{"abcd":5}}}`);
  // one more of each: excess
  m = v11Mutable();
  setAssets(m, 1n, false);
  assert.throws(() => fillMutated(m, unbeam), errCode('INVALID_SPELL', /expected \d+ of native token/));
  // one less: missing
  m = v11Mutable();
  setAssets(m, -1n, false);
  assert.throws(() => fillMutated(m, unbeam), errCode('INVALID_SPELL', /short of its charms/));
  // beamed out, the CNTs present stay in content (nothing is subtracted)
  m = v11Mutable();
  setAssets(m, 0n, false);
  const beamed = fillMutated(m);
  assert.equal(((beamed.tx.coins![1]!.content as ValueMap).get('multiasset') as ValueMap).size, 1);
});

test('content: datum (hash and inline, detailed schema with sorted keys) and script references; V10 has none', (t) => {
  if (!sharedOrSkip(t)) return;
  const m = v11Mutable();
  const datum = new Tagged(121n, [
    1n,
    -5n,
    fromHex('ab'),
    [2n],
    new ValueMap([[3n, 4n]]),
    new Tagged(2n, fromHex('010000000000000000')), // 2^64: beyond u64 → f64 in serde_json
    new Tagged(1281n, []),
    new Tagged(102n, [300n, [0n]]),
  ]);
  (m.outs[0] as ValueMap).entries.push([2n, [1n, new Tagged(24n, encodeCbor(datum))]]);
  (m.outs[0] as ValueMap).entries.push([3n, new Tagged(24n, encodeCbor([3n, fromHex('4e4d01000033222220051200120011')]))]);
  (m.outs[1] as ValueMap).entries.push([2n, [0n, new Uint8Array(32).fill(0xdd)]]);
  const s = fillMutated(m);
  const c0 = s.tx.coins![0]!.content as ValueMap;
  assert.deepEqual(
    c0.entries.map(([k]) => k),
    ['multiasset', 'datum', 'script_ref'],
  );
  const json = toJsonCompact(c0.get('datum')!);
  assert.equal(
    json.replace(/1\.8446744073709552e\+?19|18446744073709552000(\.0)?/, 'BIG'),
    '{"Datum":{"datum":{"constructor":0,"fields":[{"int":1},{"int":-5},{"bytes":"ab"},{"list":[{"int":2}]},{"map":[{"k":{"int":3},"v":{"int":4}}]},{"int":BIG},{"constructor":8,"fields":[]},{"constructor":300,"fields":[{"int":0}]}]}}}',
  );
  const big = ((((c0.get('datum') as ValueMap).get('Datum') as ValueMap).get('datum') as ValueMap).get('fields') as Value[])[5] as ValueMap;
  assert.equal(typeof big.get('int'), 'number');
  assert.equal(toJsonCompact(c0.get('script_ref')!), '{"PlutusV3":{"script":"4e4d01000033222220051200120011"}}');
  assert.equal(toJsonCompact((s.tx.coins![1]!.content as ValueMap).get('datum')!), `{"Hash":{"datum_hash":"${'dd'.repeat(32)}"}}`);
  // version ≤ 10: content dropped
  const v10 = fillFromCardanoTx({ ...findCardanoSpell(parseCardanoTx(encodeCbor(m.v))).spell, version: 10 }, parseCardanoTx(encodeCbor(m.v)));
  assert.ok(v10.tx.coins!.every((c) => c.content === undefined));
  // native script references are not supported (yet): a clear error
  (m.outs[0] as ValueMap).entries.pop();
  (m.outs[0] as ValueMap).entries.push([3n, new Tagged(24n, encodeCbor([0n, [0n, new Uint8Array(28)]]))]);
  assert.throws(() => fillMutated(m), errCode('UNSUPPORTED'));
  void spellToValue;
});

test('spell search: only the last two outputs; outs must be fewer than tx outputs', (t) => {
  if (!sharedOrSkip(t)) return;
  // the v11 tx has 4 outputs with the spell at #2 (second to last, change at #3)
  assert.equal(findCardanoSpell(parseCardanoTx(encodeCbor(v11Mutable().v))).spell.version, 11);
  // one plain output appended: the spell is third from the end → not found
  let m = v11Mutable();
  const plain = new ValueMap([
    [0n, fromHex('61' + '22'.repeat(28))],
    [1n, 1000000n],
  ]);
  m.outs.push(plain);
  assert.throws(() => findCardanoSpell(parseCardanoTx(encodeCbor(m.v))), errCode('NO_SPELL'));
  // change replaced by an output whose inline datum is not bytes: skipped, the spell is found
  m = v11Mutable();
  m.outs.splice(
    3,
    1,
    new ValueMap([
      [0n, fromHex('61' + '22'.repeat(28))],
      [1n, 1000000n],
      [2n, [1n, new Tagged(24n, encodeCbor(new Tagged(121n, [])))]],
    ]),
  );
  assert.equal(findCardanoSpell(parseCardanoTx(encodeCbor(m.v))).spell.version, 11);
  // an inline datum that is not Plutus data makes the transaction invalid (as CML's parser does)
  m = v11Mutable();
  m.outs.splice(
    3,
    1,
    new ValueMap([
      [0n, fromHex('61' + '22'.repeat(28))],
      [1n, 1000000n],
      [2n, [1n, new Tagged(24n, encodeCbor('text'))]],
    ]),
  );
  assert.throws(() => parseOutputs(parseCardanoTx(encodeCbor(m.v))), errCode('INVALID_TX'));
  // outs.len() must be < outputs (strict; the spell output is itself an output)
  m = v11Mutable();
  m.outs.splice(3, 1); // 3 outputs, spell has 2 outs: fine
  assert.equal(fillMutated(m).tx.coins!.length, 2);
  m = v11Mutable();
  const sp = m.outs[2]!;
  m.outs.splice(1, 3, sp); // 2 outputs: [out0, spell output]
  assert.throws(() => fillMutated(m), errCode('INVALID_SPELL', /outs mismatch/));
});
