import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readSharedJson, readSharedText, sharedOrSkip } from '../testing/shared.js';
import { CborWriter, decodeCbor } from '../codec/cbor.js';
import { Tagged, ValueMap } from '../codec/value.js';
import { fromHex, toHex } from '../util/bytes.js';
import { CharmsError } from '../errors.js';
import { appFromString, utxoIdFromString, type App, type Data } from '../model/primitives.js';
import type { NormalizedSpell } from '../model/spell.js';
import { cardanoTxHash, parseCardanoTx, parseOutputs, parseRedeemers, bodyField, type Assets, type CardanoOutput } from './tx.js';
import { extractAndVerifyCardano, findSpellPayload, inputPermutation as readPermutation } from './extract.js';
import {
  buildCardanoTx,
  cardanoFeeAddressBytes,
  exUnitsFee,
  heuristicFee,
  inputPermutation,
  parseContent,
  plutusV3LanguageView,
  scriptDataHash,
  scrollsRewardAccount,
  spellOutputLovelace,
  versionRedeemer,
  V15_REFERENCE_INPUT,
} from './builder.js';
import { MAINNET_PROTOCOL_PARAMS as P, parseCardanoProtocolParams } from './protocol-params.js';
import { assetNameForApp, policyIdForApp } from './assets.js';
import { plutusDataCbor, plutusDataFromDetailedJson } from './plutus-encode.js';
import { plutusDataToDetailedJson } from './plutus-data.js';
import { proxyAddressForApps } from './scripts.js';

const REAL = '712fcb00421d163794c22eef627c5e49f3d3f19ea95953871f90286e1bf6f66c';
const refuses = (re: RegExp) => (e: unknown) => e instanceof CharmsError && e.code === 'INVALID_INPUT' && re.test(e.message);

test('builder numbers match the build vectors (min-ADA, fee, redeemers, script_data_hash, reward account)', (t) => {
  if (!sharedOrSkip(t)) return;
  const v = readSharedJson('vectors', 'cardano-build-vectors.json');
  assert.equal(spellOutputLovelace(57, v.spell_output_min_ada.datum_cbor_len, P), BigInt(v.spell_output_min_ada.result));
  assert.equal(heuristicFee(v.fee.measured_tx_size, P), BigInt(v.fee.result));
  assert.equal(toHex(plutusV3LanguageView(P)).slice(0, v.language_views_cbor_prefix_hex.length), v.language_views_cbor_prefix_hex);
  assert.equal(P.plutusV3CostModel.length, v.protocol_json.plutusV3CostModelLength);
  assert.equal(toHex(scriptDataHash(fromHex(v.withdraw_redeemer.redeemers_cbor_hex), P)), v.script_data_hash.result);
  assert.equal(toHex(scrollsRewardAccount(1)), v.reward_account_mainnet_hex);
  const w = new CborWriter();
  w.bytes(versionRedeemer(15));
  assert.equal(toHex(w.finish()), v.v15_mint_and_spend_redeemer_cbor_hex);
  assert.equal(`${V15_REFERENCE_INPUT.hash}#${V15_REFERENCE_INPUT.index}`, v.v15_reference_input);
  // the same parameters read from the JSON file format give the same numbers
  const fromFile = parseCardanoProtocolParams(readSharedText('keys', 'cardano-protocol-params.json'));
  assert.deepEqual(fromFile, P);
});

test('ex-unit prices are exact: 250000/150000000 cost 25240, the withdraw units 5048', () => {
  assert.equal(exUnitsFee(250_000n, 150_000_000n, P), 25240n);
  assert.equal(exUnitsFee(50_000n, 30_000_000n, P), 5048n);
});

test('the input permutation maps spell order to sorted order (real vector [0, 2, 1])', () => {
  const ins = [
    '632eaa5275f8100a018606c2f3bfd35127d78a5e37bcee340a0bd232cc7aee95:0',
    'ce50f4fff47d1ab9c604049c35adbd9a29e283c9f2514466c431273d4c08cf9f:0',
    '7a67e71100f64ea4a77dcd04c0bd09a4e478d83c10c788b1c6c12bb2cfa1f35e:0',
  ].map((s) => utxoIdFromString(s));
  assert.deepEqual(inputPermutation(ins), [0, 2, 1]);
});

/** The real tx with output 0's two policies swapped into byte order (pallas emitted them unsorted). */
function realTxSorted(hex: string): string {
  const usdm = '581cc48cbb3d5e57ed56e276bc45f99ab39abe94e6cd7ac39fb402da47ada1480014df105553444d1a00989680';
  const snek = '581c279c909f348e533da5808898f87f9a14bb2c3dfbbacccd631d927a3fa144534e454b1903e8';
  assert.ok(hex.includes(usdm + snek));
  return hex.replace(usdm + snek, snek + usdm);
}

test('rebuilds mainnet tx 712fcb00… body byte for byte (canonical asset order), fee 313365', (t) => {
  if (!sharedOrSkip(t)) return;
  const hex = readSharedText('vectors', 'chain', `${REAL}.cardano.hex`).trim();
  const bytes = fromHex(hex);
  const spell = extractAndVerifyCardano(bytes, false);
  const real = parseCardanoTx(bytes);
  const outs = parseOutputs(real);
  const spellData = findSpellPayload(outs);
  const change = outs[3]!;
  // One funding input holding everything the outputs and the fee take (no mint in this tx); the
  // other two carry only ADA. The builder only needs lovelace and assets of the spent outputs.
  const assets: Assets = new Map();
  for (const o of outs) for (const [p, m] of o.assets) assets.set(p, new Map(m));
  const total = outs.reduce((s, o) => s + o.lovelace, 0n) + 313_365n;
  const prevOutputs: CardanoOutput[] = [
    { address: change.address, lovelace: total - 2n, assets },
    { address: change.address, lovelace: 1n, assets: new Map() },
    { address: change.address, lovelace: 1n, assets: new Map() },
  ];
  const coll = bodyField(real, 13) as Tagged;
  const ref = bodyField(real, 18) as Tagged;
  const firstRef = (v: Tagged) => {
    const [h, i] = (v.value as [Uint8Array, bigint][])[0]!;
    return { txid: Uint8Array.from(h).reverse(), vout: Number(i) };
  };
  const built = buildCardanoTx({
    spell,
    prevOutputs,
    inputCharms: spell.tx.ins!.map(() => []),
    changeAddress: change.address,
    feeAddress: change.address, // V11-era txs paid the spell output to the change address
    spellData,
    collateral: firstRef(coll),
    referenceInput: firstRef(ref),
  });
  assert.equal(built.fee, 313_365n);
  assert.equal(built.change, change.lovelace);
  assert.deepEqual(built.permutation, [0, 2, 1]);
  const mine = parseCardanoTx(built.tx);
  const theirs = parseCardanoTx(fromHex(realTxSorted(hex)));
  assert.equal(toHex(mine.bodyBytes), toHex(theirs.bodyBytes));
  // redeemers exactly as on chain; no vkey witnesses (signers add them)
  assert.deepEqual(
    mine.witnessSet.entries.map(([k]) => k),
    [5n],
  );
  assert.deepEqual(parseRedeemers(mine), parseRedeemers(real));
  // and the built tx reads back with the same spell
  assert.deepEqual(readPermutation(mine, 3), [0, 2, 1]);
  assert.equal(toHex(cardanoTxHash(theirs)).length, 64);
});

// ------------------------------------------------------------------------------ synthetic

const TOKEN = appFromString(`t/${'11'.repeat(32)}/${'22'.repeat(32)}`);
const NFT = appFromString(`n/${'33'.repeat(32)}/${'44'.repeat(32)}`);
const CHANGE = cardanoFeeAddressBytes(); // any mainnet base address will do
const FOREIGN = '55'.repeat(28);

const utxo = (h: string, vout = 0) => utxoIdFromString(`${h.repeat(32)}:${vout}`);

function spellWith(outs: Map<number, Data>[], coins: { amount: bigint; dest: Uint8Array; content?: Data }[], apps: App[] = [TOKEN, NFT]): NormalizedSpell {
  return {
    version: 15,
    tx: { ins: [utxo('bb'), utxo('aa', 1)], outs, coins },
    app_public_inputs: apps.map((a) => [a, null] as [App, Data]),
    versioned_apps: [],
    mock: true,
  };
}

const base = (spell: NormalizedSpell, prevOutputs: CardanoOutput[], inputCharms: [App, Data][][] = [[], []]) => ({
  spell,
  prevOutputs,
  inputCharms,
  changeAddress: CHANGE,
  feeAddress: CHANGE,
  spellData: new Uint8Array(300).fill(7),
  collateral: utxo('cc', 2),
});

test('a mint: CNTs in the output, mint map, policy scripts, Mint redeemers in policy order, V15 reference input', () => {
  const spell = spellWith(
    [
      new Map<number, Data>([
        [0, 1000n],
        [1, null],
      ]),
    ],
    [{ amount: 2_000_000n, dest: CHANGE }],
  );
  const r = buildCardanoTx(
    base(spell, [
      { address: CHANGE, lovelace: 20_000_000n, assets: new Map() },
      { address: CHANGE, lovelace: 1_000_000n, assets: new Map() },
    ]),
  );
  const tx = parseCardanoTx(r.tx);
  const mint = bodyField(tx, 9) as ValueMap;
  const pt = toHex(policyIdForApp(TOKEN));
  const pn = toHex(policyIdForApp(NFT));
  assert.deepEqual(
    mint.entries.map(([p]) => toHex(p as Uint8Array)),
    [pt, pn].sort(),
  );
  const outs = parseOutputs(tx);
  assert.equal(outs.length, 3); // coin, spell, change
  assert.equal(outs[0]!.assets.get(pt)!.get(toHex(assetNameForApp(TOKEN))), 1000n);
  assert.equal(outs[0]!.assets.get(pn)!.get(toHex(assetNameForApp(NFT))), 1n);
  assert.deepEqual(
    parseRedeemers(tx)!.map((x) => [x.tag, x.index]),
    [
      [1, 0n],
      [1, 1n],
      [3, 0n],
    ],
  );
  assert.deepEqual(readPermutation(tx, 2), [1, 0]);
  const scripts = (tx.witnessSet.entries.find(([k]) => k === 7n)![1] as Tagged).value as Uint8Array[];
  assert.equal(scripts.length, 2);
  const ref = (bodyField(tx, 18) as Tagged).value as [Uint8Array, bigint][];
  assert.equal(toHex(ref[0]![0]!), V15_REFERENCE_INPUT.hash);
  assert.equal(bodyField(tx, 15), 1n);
  const sum = outs.reduce((s, o) => s + o.lovelace, 0n) + (bodyField(tx, 2) as bigint);
  assert.equal(sum, 21_000_000n, 'balanced: inputs = outputs + fee');
});

test('burning a charm token and keeping a foreign token via content; spending a proxy UTxO', () => {
  const SCROLL = appFromString(`c/${'66'.repeat(32)}/${'77'.repeat(32)}`);
  const content = new ValueMap([['multiasset', new ValueMap([[FOREIGN, new ValueMap([['abcd', 5n]])]])]]);
  const spell = spellWith([new Map()], [{ amount: 3_000_000n, dest: CHANGE, content }], [TOKEN, SCROLL]);
  const pt = toHex(policyIdForApp(TOKEN));
  const nameT = toHex(assetNameForApp(TOKEN));
  const proxyAddr = proxyAddressForApps([SCROLL]);
  const inAssets: Assets = new Map([
    [pt, new Map([[nameT, 40n]])],
    [FOREIGN, new Map([['abcd', 5n]])],
  ]);
  const r = buildCardanoTx(
    base(
      spell,
      [
        { address: CHANGE, lovelace: 10_000_000n, assets: inAssets },
        { address: proxyAddr, lovelace: 5_000_000n, assets: new Map() },
      ],
      [[[TOKEN, 40n]], [[SCROLL, null]]],
    ),
  );
  const tx = parseCardanoTx(r.tx);
  const mint = bodyField(tx, 9) as ValueMap;
  assert.equal(mint.entries.length, 1);
  assert.equal((mint.entries[0]![1] as ValueMap).entries[0]![1], -40n);
  const outs = parseOutputs(tx);
  assert.equal(outs[0]!.assets.get(FOREIGN)!.get('abcd'), 5n);
  // input aa…:1 sorts first: the proxy UTxO is spent at index 0
  assert.deepEqual(
    parseRedeemers(tx)!.map((x) => [x.tag, x.index]),
    [
      [0, 0n],
      [1, 0n],
      [3, 0n],
    ],
  );
});

test('refuses what the reference would build wrongly: foreign token burned, funds short, below min-ADA, many policies', () => {
  const spell = spellWith([new Map()], [{ amount: 2_000_000n, dest: CHANGE }]);
  const foreign: Assets = new Map([[FOREIGN, new Map([['abcd', 5n]])]]);
  assert.throws(
    () =>
      buildCardanoTx(
        base(spell, [
          { address: CHANGE, lovelace: 20_000_000n, assets: foreign },
          { address: CHANGE, lovelace: 0n, assets: new Map() },
        ]),
      ),
    refuses(/kept by no output/),
  );
  assert.throws(
    () =>
      buildCardanoTx(
        base(spell, [
          { address: CHANGE, lovelace: 3_000_000n, assets: new Map() },
          { address: CHANGE, lovelace: 0n, assets: new Map() },
        ]),
      ),
    refuses(/short of the outputs/),
  );
  const tiny = spellWith([new Map()], [{ amount: 100_000n, dest: CHANGE }]);
  assert.throws(
    () =>
      buildCardanoTx(
        base(tiny, [
          { address: CHANGE, lovelace: 20_000_000n, assets: new Map() },
          { address: CHANGE, lovelace: 0n, assets: new Map() },
        ]),
      ),
    refuses(/below the ledger minimum/),
  );
  const apps = [1, 2, 3, 4].map((i) => appFromString(`t/${'11'.repeat(32)}/${String(i).padStart(2, '0').repeat(32)}`));
  const many = spellWith([new Map<number, Data>(apps.map((_, i) => [i, 5n]))], [{ amount: 3_000_000n, dest: CHANGE }], apps);
  assert.throws(
    () =>
      buildCardanoTx(
        base(many, [
          { address: CHANGE, lovelace: 50_000_000n, assets: new Map() },
          { address: CHANGE, lovelace: 0n, assets: new Map() },
        ]),
      ),
    refuses(/fee heuristic .* below the ledger minimum/),
  );
});

test('content: datum and script reference round-trip through the read side', () => {
  const datum = new Tagged(121n, [42n, new Uint8Array(100).fill(1), [1n, 2n], new ValueMap([[3n, 4n]])]);
  const json = plutusDataToDetailedJson(datum);
  assert.deepEqual(plutusDataFromDetailedJson(json), datum);
  const content = new ValueMap([
    ['multiasset', new ValueMap()],
    ['datum', ValueMap.of({ Datum: ValueMap.of({ datum: json }) })],
    ['script_ref', ValueMap.of({ PlutusV3: ValueMap.of({ script: '4e4d01000033222220051200120011' }) })],
  ]);
  const parts = parseContent(content, 'c');
  assert.ok(parts.datum && 'inlineCbor' in parts.datum);
  assert.deepEqual(decodeCbor(parts.datum.inlineCbor), decodeCbor(plutusDataCbor(datum)));
  assert.deepEqual(parts.scriptRef, [3, fromHex('4e4d01000033222220051200120011')]);
  assert.throws(() => parseContent(new ValueMap([['bogus', 1n]]), 'c'), refuses(/unknown content field/));
});

test('never builds an output to an empty or foreign-network address', () => {
  const prev = [
    { address: CHANGE, lovelace: 20_000_000n, assets: new Map() },
    { address: CHANGE, lovelace: 0n, assets: new Map() },
  ];
  assert.throws(
    () => buildCardanoTx(base(spellWith([new Map()], [{ amount: 2_000_000n, dest: new Uint8Array(0) }]), prev)),
    refuses(/not a Cardano Shelley address/),
  );
  const testnet = Uint8Array.from(CHANGE);
  testnet[0] = testnet[0]! & 0xf0;
  assert.throws(() => buildCardanoTx(base(spellWith([new Map()], [{ amount: 2_000_000n, dest: testnet }]), prev)), refuses(/another network/));
});

test('protocol parameters from a file override the embedded ones (fees, cost model); bad files are refused', (t) => {
  if (!sharedOrSkip(t)) return;
  const j = readSharedJson('keys', 'cardano-protocol-params.json');
  j.txFeeFixed = 200000;
  j.costModels.PlutusV3[0] = 1;
  const p = parseCardanoProtocolParams(JSON.stringify(j));
  assert.equal(heuristicFee(1706, p), heuristicFee(1706, P) + 200000n - 155381n);
  const reds = fromHex('8184030044830002018219c3501a01c9c380');
  assert.notEqual(toHex(scriptDataHash(reds, p)), toHex(scriptDataHash(reds, P)));
  assert.throws(
    () => parseCardanoProtocolParams('{'),
    (e) => e instanceof CharmsError && e.code === 'INVALID_INPUT',
  );
  assert.throws(
    () => parseCardanoProtocolParams('{"txFeeFixed": 1}'),
    (e) => e instanceof CharmsError && /PlutusV3/.test(e.message),
  );
});

test('change above u64 is refused, not written as a CBOR bignum', () => {
  const spell = spellWith([new Map()], [{ amount: 2_000_000n, dest: CHANGE }], [TOKEN]);
  const max = (1n << 64n) - 1n;
  assert.throws(
    () =>
      buildCardanoTx(
        base(spell, [
          { address: CHANGE, lovelace: max, assets: new Map() },
          { address: CHANGE, lovelace: max, assets: new Map() },
        ]),
      ),
    refuses(/change \(\d+ lovelace\) does not fit in 64 bits/),
  );
  // just below: built, and our own parser reads the change back
  const r = buildCardanoTx(
    base(spell, [
      { address: CHANGE, lovelace: max / 2n, assets: new Map() },
      { address: CHANGE, lovelace: max / 2n, assets: new Map() },
    ]),
  );
  assert.equal(parseOutputs(parseCardanoTx(r.tx)).at(-1)!.lovelace, r.change);
});

test('a testnet change address never gives a mixed-network transaction', () => {
  const testnet = Uint8Array.from(CHANGE);
  testnet[0] = testnet[0]! & 0xf0; // network id 0 (testnet), same key hashes
  const spell = spellWith([new Map()], [{ amount: 2_000_000n, dest: testnet }], [TOKEN]);
  const prev = [
    { address: testnet, lovelace: 20_000_000n, assets: new Map() },
    { address: testnet, lovelace: 1_000_000n, assets: new Map() },
  ];
  // the default (mainnet) fee address with a testnet change address
  assert.throws(() => buildCardanoTx({ ...base(spell, prev), changeAddress: testnet }), refuses(/different networks/));
  // a testnet fee address, but no testnet reference input: refused too
  assert.throws(() => buildCardanoTx({ ...base(spell, prev), changeAddress: testnet, feeAddress: testnet }), refuses(/mainnet-only/));
});
