import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CharmOutputWrite, InputWrite } from '../indexer/store.js';
import { appFromString, appToString } from '../model/primitives.js';
import { toHex } from '../util/bytes.js';
import { conwayTx, conwayTxId, realCardanoVectors } from '../testing/cardano-txs.js';
import { hasShared } from '../testing/shared.js';
import { skipOrFail } from '../testing/require.js';
import { assetNameForApp, policyIdForApp } from './assets.js';
import { extractAndVerifyCardano } from './extract.js';
import { parseCardanoTx } from './tx.js';
import { LearnedTokens, cardanoTxMoves, type CardanoCharmOutput, type CardanoInput } from './charm-moves.js';

// the rows are the index's shapes (compile-time check)
const _rows: [CharmOutputWrite, InputWrite] = [{} as CardanoCharmOutput, {} as CardanoInput];
void _rows;

const tok = appFromString(`t/${'11'.repeat(32)}/${'22'.repeat(32)}`);
const nft = appFromString(`n/${'33'.repeat(32)}/${'22'.repeat(32)}`);
const P = toHex(policyIdForApp(tok));
const N = toHex(assetNameForApp(tok));
const addr = (b: number) => new Uint8Array(29).fill(b).map((x, i) => (i === 0 ? 0x61 : x));
const prev = 'ab'.repeat(32);

const moves = (spec: Parameters<typeof conwayTx>[0], learned: LearnedTokens) => {
  const raw = conwayTx(spec);
  return cardanoTxMoves(parseCardanoTx(raw), conwayTxId(raw), 3, undefined, learned);
};

test('without a spell, learned token quantities move as charms: split, merge, exact u64', () => {
  const learned = new LearnedTokens();
  learned.add(tok);
  const max = (1n << 64n) - 1n;
  const split = moves(
    {
      inputs: [{ txid: prev, index: 0 }],
      outputs: [
        { address: addr(1), lovelace: 2n, assets: [[P, N, 7n]] },
        { address: addr(2), lovelace: 3n },
        {
          address: addr(3),
          lovelace: 4n,
          assets: [
            [P, N, max],
            ['44'.repeat(28), '', 5n],
          ],
        },
      ],
    },
    learned,
  );
  assert.equal(split.virtual, true);
  assert.deepEqual(
    split.outputs.map((o) => [o.vout, o.app, o.amount, o.sats]),
    [
      [0, appToString(tok), 7n, 2n],
      [2, appToString(tok), max, 4n],
    ],
  );
  assert.deepEqual(split.inputs, [{ txid: split.outputs[0]!.txid, txIndex: 3, vin: 0, prevTxid: prev, prevVout: 0 }]);
  const merge = moves(
    {
      inputs: [
        { txid: prev, index: 0 },
        { txid: prev, index: 1 },
      ],
      outputs: [{ address: addr(1), lovelace: 2n, assets: [[P, N, 10n]] }],
    },
    learned,
  );
  assert.deepEqual(
    merge.outputs.map((o) => o.amount),
    [10n],
  );
  assert.equal(merge.inputs.length, 2);
});

test('without a spell: an unlearned token, an NFT and a plain spend carry no charms (spent: burned)', () => {
  const learned = new LearnedTokens();
  assert.equal(learned.add(nft), false, 'NFTs are never learned for virtual moves');
  const m = moves(
    {
      inputs: [{ txid: prev, index: 4 }],
      outputs: [
        {
          address: addr(1),
          lovelace: 2n,
          assets: [
            [P, N, 7n],
            [toHex(policyIdForApp(nft)), toHex(assetNameForApp(nft)), 1n],
          ],
        },
      ],
    },
    learned,
  );
  assert.deepEqual(m.outputs, []);
  assert.equal(m.inputs[0]!.prevVout, 4, 'the spend is still recorded: the charm output it spends burns');
});

test('a phase-2 invalid transaction spends its collateral and creates only its collateral return', () => {
  const learned = new LearnedTokens();
  learned.add(tok);
  const m = moves(
    {
      inputs: [{ txid: prev, index: 0 }],
      outputs: [{ address: addr(1), lovelace: 2n, assets: [[P, N, 7n]] }],
      isValid: false,
      collateral: [{ txid: 'cd'.repeat(32), index: 2 }],
      collateralReturn: { address: addr(9), lovelace: 5n, assets: [[P, N, 3n]] },
    },
    learned,
  );
  assert.deepEqual(
    m.inputs.map((i) => [i.prevTxid, i.prevVout]),
    [['cd'.repeat(32), 2]],
  );
  assert.deepEqual(
    m.outputs.map((o) => [o.vout, o.amount]),
    [[1, 3n]],
  );
});

test('real v11 spell with beamed_outs: the spell charms, beamed outputs apart, token apps learned', (t) => {
  if (!hasShared) return skipOrFail(t, 'test vectors not found (CHARMS_SHARED_DIR)');
  const v = realCardanoVectors().get('361927aed267ef049a5b9315aa7296493b385938d73340146b0af5d4637a02cf')!;
  const spell = extractAndVerifyCardano(v.bytes, false);
  const learned = new LearnedTokens();
  const m = cardanoTxMoves(parseCardanoTx(v.bytes), v.txid, 0, spell, learned);
  assert.equal(m.virtual, false);
  const beamed = [...(spell.tx.beamed_outs?.keys() ?? [])];
  assert.ok(beamed.length > 0);
  assert.ok(m.beamed.every((b) => beamed.includes(b.vout) && b.beamedTo.length === 64));
  assert.ok(m.outputs.every((o) => !beamed.includes(o.vout)));
  const held = spell.tx.outs.flatMap((c, i) => (beamed.includes(i) ? [] : [...c.keys()])).length;
  assert.equal(m.outputs.length, held);
  assert.deepEqual(
    m.learned.map(appToString),
    spell.app_public_inputs
      .map(([a]) => a)
      .filter((a) => a.tag === 't')
      .map(appToString),
  );
  // the same transaction seen without its spell: its token outputs still move virtually
  const again = cardanoTxMoves(parseCardanoTx(v.bytes), v.txid, 0, undefined, learned);
  assert.ok(again.outputs.every((o) => m.learned.map(appToString).includes(o.app)));
});
