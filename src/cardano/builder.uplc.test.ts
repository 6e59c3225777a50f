/**
 * Phase-two evaluation of built transactions with Aiken's evaluator (`@lucid-evolution/uplc`):
 * the Charms policy and proxy scripts run against our transaction structure (version-NFT
 * reference input named by the redeemer, withdraw redeemer, required signer). The Scrolls
 * withdraw validator itself is not public, so the reference input carries a stand-in
 * always-succeeding PlutusV3 script and the withdrawal names its hash, as the policies require.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { CborWriter, decodeCbor } from '../codec/cbor.js';
import { fromHex, toHex } from '../util/bytes.js';
import { appFromString, utxoIdFromString, type App, type Data } from '../model/primitives.js';
import type { NormalizedSpell } from '../model/spell.js';
import { buildCardanoTx, cardanoFeeAddressBytes, plutusV3LanguageView, V15_REFERENCE_INPUT } from './builder.js';
import { MAINNET_PROTOCOL_PARAMS as P } from './protocol-params.js';
import { scriptHash } from './script-template.js';
import { proxyAddressForApps } from './scripts.js';
import { assetNameForApp, policyIdForApp } from './assets.js';
import type { Assets } from './tx.js';

const require = createRequire(import.meta.url);
const UPLC: { eval_phase_two_raw: (...a: unknown[]) => Uint8Array[] } = require('@lucid-evolution/uplc');

/** `(program 1.1.0 (lam _ (con unit ())))`, CBOR-wrapped flat. */
const ALWAYS = fromHex('450101002499');
const VERSION_NFT_POLICY = '1775920b2f415d295553835fb7d26d8186cff73d352c9e9b98cad240';
const ADDR = cardanoFeeAddressBytes();
const TOKEN = appFromString(`t/${'11'.repeat(32)}/${'22'.repeat(32)}`);
const SCROLL = appFromString(`c/${'66'.repeat(32)}/${'77'.repeat(32)}`);
const u = (h: string, vout = 0) => utxoIdFromString(`${h.repeat(32)}:${vout}`);

function outputCbor(address: Uint8Array, lovelace: bigint, assets: Assets, scriptRef?: Uint8Array): Uint8Array {
  const w = new CborWriter();
  w.mapHeader(scriptRef ? 3 : 2);
  w.int(0);
  w.bytes(address);
  w.int(1);
  if (assets.size === 0) w.int(lovelace);
  else {
    w.arrayHeader(2);
    w.int(lovelace);
    w.mapHeader(assets.size);
    for (const [p, m] of assets) {
      w.bytes(fromHex(p));
      w.mapHeader(m.size);
      for (const [n, q] of m) {
        w.bytes(fromHex(n));
        w.int(q);
      }
    }
  }
  if (scriptRef) {
    w.int(3);
    const inner = new CborWriter();
    inner.arrayHeader(2);
    inner.int(3);
    inner.bytes(scriptRef);
    w.head(6, 24);
    w.bytes(inner.finish());
  }
  return w.finish();
}

const inputCbor = (hashHex: string, index: number): Uint8Array => {
  const w = new CborWriter();
  w.arrayHeader(2);
  w.bytes(fromHex(hashHex));
  w.int(index);
  return w.finish();
};

test('Aiken phase two: the token policy (mint, burn) and the proxy spend script accept the built transaction', () => {
  const pt = toHex(policyIdForApp(TOKEN));
  const nameT = toHex(assetNameForApp(TOKEN));
  const spell: NormalizedSpell = {
    version: 15,
    tx: { ins: [u('bb'), u('aa', 1)], outs: [new Map<number, Data>([[0, 60n]])], coins: [{ amount: 3_000_000n, dest: ADDR }] },
    app_public_inputs: [TOKEN, SCROLL].map((a) => [a, null] as [App, Data]),
    versioned_apps: [],
    mock: false,
  };
  const prevOutputs = [
    { address: ADDR, lovelace: 10_000_000n, assets: new Map([[pt, new Map([[nameT, 40n]])]]) as Assets },
    { address: proxyAddressForApps([SCROLL]), lovelace: 5_000_000n, assets: new Map() as Assets },
  ];
  const built = buildCardanoTx({
    spell,
    prevOutputs,
    inputCharms: [[[TOKEN, 40n]], [[SCROLL, null]]],
    changeAddress: ADDR,
    feeAddress: ADDR,
    spellData: new Uint8Array(200).fill(3),
    collateral: u('cc', 2),
    scrollsWithdrawScriptHash: scriptHash(ALWAYS),
  });
  const ins = [
    inputCbor('bb'.repeat(32), 0),
    inputCbor('aa'.repeat(32), 1),
    inputCbor(V15_REFERENCE_INPUT.hash, V15_REFERENCE_INPUT.index),
    inputCbor('cc'.repeat(32), 2),
  ];
  const outs = [
    outputCbor(prevOutputs[0]!.address, prevOutputs[0]!.lovelace, prevOutputs[0]!.assets),
    outputCbor(prevOutputs[1]!.address, prevOutputs[1]!.lovelace, prevOutputs[1]!.assets),
    outputCbor(ADDR, 20_000_000n, new Map([[VERSION_NFT_POLICY, new Map([['000de140763135', 1n]])]]), ALWAYS),
    outputCbor(ADDR, 5_000_000n, new Map()),
  ];
  const costModels = plutusV3LanguageView(P); // {2: PlutusV3 cost model}
  const evaluated = UPLC.eval_phase_two_raw(built.tx, ins, outs, costModels, 10_000_000_000n, 14_000_000n, 1596059091000n, 4492800n, 1000);
  const reds = evaluated.map((r) => decodeCbor(r) as unknown[]);
  // spend (proxy), mint (token: 20 more than the inputs), reward (stand-in validator)
  assert.deepEqual(reds.map((r) => [r[0], r[1]]).sort(), [
    [0n, 0n],
    [1n, 0n],
    [3n, 0n],
  ]);
  for (const r of reds) {
    const [mem, steps] = r[3] as bigint[];
    if (r[0] !== 3n) {
      assert.ok(mem! <= 250_000n && steps! <= 150_000_000n, `the fixed ex-units cover the policy/proxy run (${mem}, ${steps})`);
    }
  }
});
