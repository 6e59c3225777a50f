/**
 * Differential tests of the Cardano builder against CML 6.2.0 (the crate version the reference
 * parses with): every built transaction parses, CML's script_data_hash equals ours, CML's minimum
 * fee (with the two vkey witnesses the submitted tx will carry) is at most our fee, and the
 * decoded structure is what we meant to build.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { encodeCbor, CborWriter } from '../codec/cbor.js';
import { Tagged, ValueMap } from '../codec/value.js';
import { fromHex, toHex } from '../util/bytes.js';
import { appFromString, utxoIdFromString, type App, type Data } from '../model/primitives.js';
import type { NormalizedSpell } from '../model/spell.js';
import { buildCardanoTx, cardanoFeeAddressBytes, plutusV3LanguageView, SCROLLS_VKEY_HASH_HEX, V15_REFERENCE_INPUT, type CardanoBuildArgs } from './builder.js';
import { MAINNET_PROTOCOL_PARAMS as P } from './protocol-params.js';
import { parseCardanoTx, cardanoTxHash, type Assets, type CardanoOutput } from './tx.js';
import { policyIdForApp, assetNameForApp } from './assets.js';
import { proxyAddressForApps } from './scripts.js';

const require = createRequire(import.meta.url);
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const CML: any = require('@dcspark/cardano-multiplatform-lib-nodejs');

const ADDR = cardanoFeeAddressBytes();
const TOKEN = appFromString(`t/${'11'.repeat(32)}/${'22'.repeat(32)}`);
const NFT = appFromString(`n/${'33'.repeat(32)}/${'44'.repeat(32)}`);
const SCROLL = appFromString(`c/${'66'.repeat(32)}/${'77'.repeat(32)}`);
const FOREIGN = '55'.repeat(28);
const utxo = (h: string, vout = 0) => utxoIdFromString(`${h.repeat(32)}:${vout}`);

function spell(outs: Map<number, Data>[], coins: NormalizedSpell['tx']['coins'], apps: App[], ins = [utxo('bb'), utxo('aa', 1)]): NormalizedSpell {
  return { version: 15, tx: { ins, outs, coins: coins! }, app_public_inputs: apps.map((a) => [a, null] as [App, Data]), versioned_apps: [], mock: false };
}

const args = (s: NormalizedSpell, prevOutputs: CardanoOutput[], inputCharms: [App, Data][][]): CardanoBuildArgs => ({
  spell: s,
  prevOutputs,
  inputCharms,
  changeAddress: ADDR,
  feeAddress: ADDR,
  spellData: new Uint8Array(700).fill(9),
  collateral: utxo('cc', 2),
});

const cases: [string, CardanoBuildArgs][] = [
  [
    'mint token + NFT',
    args(
      spell(
        [
          new Map<number, Data>([
            [0, 1000n],
            [1, null],
          ]),
        ],
        [{ amount: 2_000_000n, dest: ADDR }],
        [TOKEN, NFT],
      ),
      [
        { address: ADDR, lovelace: 20_000_000n, assets: new Map() },
        { address: ADDR, lovelace: 1_000_000n, assets: new Map() },
      ],
      [[], []],
    ),
  ],
  [
    'burn a token, keep a foreign asset, spend a proxy UTxO, datum and script ref in content',
    args(
      spell(
        [new Map()],
        [
          {
            amount: 3_000_000n,
            dest: ADDR,
            content: new ValueMap([
              ['multiasset', new ValueMap([[FOREIGN, new ValueMap([['abcd', 5n]])]])],
              ['datum', ValueMap.of({ Datum: ValueMap.of({ datum: ValueMap.of({ constructor: 0n, fields: [ValueMap.of({ int: 7n })] }) }) })],
              ['script_ref', ValueMap.of({ PlutusV3: ValueMap.of({ script: '4e4d01000033222220051200120011' }) })],
            ]),
          },
        ],
        [TOKEN, SCROLL],
      ),
      [
        {
          address: ADDR,
          lovelace: 10_000_000n,
          assets: new Map([
            [toHex(policyIdForApp(TOKEN)), new Map([[toHex(assetNameForApp(TOKEN)), 40n]])],
            [FOREIGN, new Map([['abcd', 5n]])],
          ]) as Assets,
        },
        { address: proxyAddressForApps([SCROLL]), lovelace: 5_000_000n, assets: new Map() },
      ],
      [[[TOKEN, 40n]], [[SCROLL, null]]],
    ),
  ],
  [
    'plain transfer, no mint, three inputs',
    args(
      spell(
        [new Map(), new Map()],
        [
          { amount: 2_000_000n, dest: ADDR },
          { amount: 1_500_000n, dest: ADDR },
        ],
        [],
        [utxo('bb'), utxo('aa', 3), utxo('aa', 1)],
      ),
      [
        { address: ADDR, lovelace: 4_000_000n, assets: new Map() },
        { address: ADDR, lovelace: 4_000_000n, assets: new Map() },
        { address: ADDR, lovelace: 4_000_000n, assets: new Map() },
      ],
      [[], [], []],
    ),
  ],
];

/** The tx with two vkey witnesses (placeholders of the right size) as it will be submitted. */
function withTwoWitnesses(tx: Uint8Array): Uint8Array {
  const t = parseCardanoTx(tx);
  const ws = new ValueMap([
    [
      0n,
      new Tagged(258n, [
        [new Uint8Array(32).fill(1), new Uint8Array(64).fill(2)],
        [new Uint8Array(32).fill(3), new Uint8Array(64).fill(4)],
      ]),
    ],
    ...t.witnessSet.entries,
  ]);
  const w = new CborWriter();
  w.arrayHeader(4);
  w.raw(t.bodyBytes);
  w.raw(encodeCbor(ws));
  w.byte(0xf5);
  w.byte(0xf6);
  return w.finish();
}

const exUnitPrices = () =>
  CML.ExUnitPrices.from_cbor_bytes(encodeCbor([new Tagged(30n, [P.priceMemory[0], P.priceMemory[1]]), new Tagged(30n, [P.priceSteps[0], P.priceSteps[1]])]));

for (const [name, a] of cases) {
  test(`CML 6.2.0 agrees with the builder: ${name}`, () => {
    const built = buildCardanoTx(a);
    const tx = CML.Transaction.from_cbor_bytes(built.tx);
    // byte-identical round trip and the same body hash
    assert.equal(tx.to_cbor_hex(), toHex(built.tx));
    assert.equal(CML.hash_transaction(tx.body()).to_hex(), toHex(cardanoTxHash(parseCardanoTx(built.tx))));
    // script_data_hash: in the body, ours, and CML's from the witness set + cost model
    const costModels = CML.CostModels.from_cbor_bytes(plutusV3LanguageView(P));
    // (CML's from-witness variant sees no language: the withdraw script is a reference script)
    const langs = CML.LanguageList.new();
    langs.add(CML.Language.PlutusV3);
    const cmlHash = CML.calc_script_data_hash(tx.witness_set().redeemers(), CML.PlutusDataList.new(), costModels, langs);
    assert.equal(cmlHash.to_hex(), toHex(built.scriptDataHash));
    assert.equal(tx.body().script_data_hash().to_hex(), toHex(built.scriptDataHash));
    // fee: CML's ledger minimum (no reference-script size known: 0) with the witnesses to come
    const signed = CML.Transaction.from_cbor_bytes(withTwoWitnesses(built.tx));
    const min = CML.min_fee(signed, CML.LinearFee.new(P.txFeePerByte, P.txFeeFixed, P.minFeeRefScriptCostPerByte), exUnitPrices(), 0n);
    assert.ok(min <= built.fee, `CML min fee ${min} > our fee ${built.fee}`);
    assert.equal(tx.body().fee(), built.fee);
    // structure
    const body = JSON.parse(tx.body().to_json());
    assert.equal(body.inputs.length, a.spell.tx.ins!.length);
    assert.equal(body.outputs.length, a.spell.tx.coins!.length + 1 + (built.change !== undefined ? 1 : 0));
    assert.deepEqual(
      body.collateral_inputs.map((i: { transaction_id: string; index: number }) => `${i.transaction_id}#${i.index}`),
      [`${'cc'.repeat(32)}#2`],
    );
    assert.deepEqual(
      body.reference_inputs.map((i: { transaction_id: string; index: number }) => `${i.transaction_id}#${i.index}`),
      [`${V15_REFERENCE_INPUT.hash}#${V15_REFERENCE_INPUT.index}`],
    );
    assert.deepEqual(body.required_signers, [SCROLLS_VKEY_HASH_HEX]);
    assert.equal(tx.body().network_id().network(), 1n);
    const wd = tx.body().withdrawals();
    assert.equal(wd.len(), 1);
    assert.equal(wd.keys().get(0).payment().as_script().to_hex(), '29764648940a3b7208bc99a246bc96a69817bea017560972432f076f');
    const reds = JSON.parse(tx.witness_set().redeemers().to_json());
    const list: { tag: string; index: number; ex_units: { mem: number; steps: number } }[] = reds.ArrLegacyRedeemer.arr_legacy_redeemer;
    const nMint = a === cases[0]![1] ? 2 : a === cases[1]![1] ? 1 : 0;
    const nSpend = a === cases[1]![1] ? 1 : 0;
    assert.deepEqual(
      list.map((r) => [r.tag, r.index, r.ex_units.mem, r.ex_units.steps]),
      [
        ...Array.from({ length: nSpend }, (_, i) => ['Spend', i, 250000, 150000000]),
        ...Array.from({ length: nMint }, (_, i) => ['Mint', i, 250000, 150000000]),
        ['Reward', 0, 50000, 30000000],
      ],
    );
    // every minting policy has its script in the witness set
    const mint = tx.body().mint();
    const scripts = tx.witness_set().plutus_v3_scripts();
    const scriptHashes = new Set<string>();
    for (let i = 0; scripts && i < scripts.len(); i++) scriptHashes.add(scripts.get(i).hash().to_hex());
    if (mint) {
      const pols = mint.keys();
      for (let i = 0; i < pols.len(); i++) assert.ok(scriptHashes.has(pols.get(i).to_hex()), 'policy script attached');
    }
    // the spell output pays the fee address with an inline datum
    const spellOut = tx.body().outputs().get(a.spell.tx.coins!.length);
    assert.equal(toHex(spellOut.address().to_raw_bytes()), toHex(a.feeAddress));
    assert.ok(spellOut.datum().as_datum() !== undefined);
    assert.deepEqual(fromHex(toHex(spellOut.datum().as_datum().as_bytes())), a.spellData);
  });
}
