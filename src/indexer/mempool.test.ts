import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BlockSource } from '../sources/block-source.js';
import { spendTx, type ChainVector } from '../testing/vector-chain.js';
import { MempoolOverlay } from './mempool.js';
import type { CharmOutpoints } from './store.js';

/** A mempool the test edits, as the overlay's source (only what refresh reads). */
function fakeMempool() {
  const txs = new Map<string, Uint8Array>();
  const source = {
    mempoolTxids: async () => [...txs.keys()],
    rawTx: async (txid: string) => txs.get(txid),
  } as unknown as BlockSource;
  return {
    source,
    add: (v: ChainVector) => txs.set(v.txid, v.bytes),
    drop: (v: ChainVector) => txs.delete(v.txid),
  };
}

const CHARM = { txid: 'c1'.repeat(32), vout: 1 };
const PLAIN = { txid: 'ab'.repeat(32), vout: 0 };

test('mempool overlay: a change no answer reads keeps the generation; spends of charm outputs, a new confirmed state and an unknown one move it', async () => {
  const m = fakeMempool();
  let state: CharmOutpoints | undefined = { writes: 1, has: (txid, vout) => txid === CHARM.txid && vout === CHARM.vout, current: () => true };
  const pool = new MempoolOverlay(
    async (raws) => raws.map(() => undefined), // no spells here: every transaction is plain
    undefined,
    async () => state,
  );
  const gen = () => pool.generation;

  const plainA = spendTx([PLAIN], { tag: 1 });
  m.add(plainA);
  await pool.refresh(m.source);
  let g = gen();
  assert.ok(g > 0, 'the first refresh moves it (nothing to compare with)');

  const plainB = spendTx([{ txid: 'cd'.repeat(32), vout: 3 }], { tag: 2 });
  m.add(plainB);
  await pool.refresh(m.source);
  assert.equal(gen(), g, 'a plain transaction spending no charm output: kept');
  m.drop(plainA);
  await pool.refresh(m.source);
  assert.equal(gen(), g, 'one leaving: kept');

  const spender = spendTx([CHARM], { tag: 3 });
  m.add(spender);
  await pool.refresh(m.source);
  assert.ok(gen() > g, 'a spend of an unspent charm output moves it');
  assert.equal(pool.spender(CHARM.txid, CHARM.vout), spender.txid);
  g = gen();

  const replacement = spendTx([CHARM], { tag: 4 }); // RBF: another spender of the same output
  m.drop(spender);
  m.add(replacement);
  await pool.refresh(m.source);
  assert.ok(gen() > g, 'another spender of a charm output moves it');
  g = gen();

  m.add(spendTx([{ txid: 'ef'.repeat(32), vout: 0 }], { tag: 5 }));
  state = { ...state!, writes: 2 }; // a block was written between two refreshes
  await pool.refresh(m.source);
  assert.ok(gen() > g, 'compared only under the same confirmed state');
  g = gen();

  m.add(spendTx([{ txid: '12'.repeat(32), vout: 0 }], { tag: 6 }));
  state = undefined; // the store cannot tell (a write in progress)
  await pool.refresh(m.source);
  assert.ok(gen() > g, 'unknown: moved');
  g = gen();

  await pool.refresh(m.source);
  assert.equal(gen(), g, 'no change at all: kept');

  // without the store's test every change moves it (the overlay as the tests of other files build it)
  const bare = new MempoolOverlay(async (raws) => raws.map(() => undefined));
  const n = fakeMempool();
  n.add(plainA);
  await bare.refresh(n.source);
  const b = bare.generation;
  n.add(plainB);
  await bare.refresh(n.source);
  assert.ok(bare.generation > b);
});

test('mempool overlay: spendsConfirmedCharms is false only when no pending transaction spends an unspent confirmed charm output under the current state', async () => {
  const m = fakeMempool();
  let live = true;
  let state: CharmOutpoints | undefined = { writes: 1, has: (txid, vout) => txid === CHARM.txid && vout === CHARM.vout, current: () => live };
  const pool = new MempoolOverlay(
    async (raws) => raws.map(() => undefined),
    undefined,
    async () => state,
  );
  assert.equal(pool.spendsConfirmedCharms(), true, 'before the first refresh: not known');
  await pool.refresh(m.source);
  assert.equal(pool.spendsConfirmedCharms(), false, 'an empty mempool');
  m.add(spendTx([PLAIN], { tag: 1 }));
  await pool.refresh(m.source);
  assert.equal(pool.spendsConfirmedCharms(), false, 'a plain spend');
  live = false; // a block was written (or is being written) since the refresh counted
  assert.equal(pool.spendsConfirmedCharms(), true, 'counted under another state: not known');
  live = true;
  state = { ...state!, writes: 2 };
  await pool.refresh(m.source); // no change of the mempool: counted again under the new state
  assert.equal(pool.spendsConfirmedCharms(), false);
  const spender = spendTx([CHARM], { tag: 3 });
  m.add(spender);
  await pool.refresh(m.source);
  assert.equal(pool.spendsConfirmedCharms(), true, 'a spend of an unspent charm output');
  m.drop(spender);
  await pool.refresh(m.source);
  assert.equal(pool.spendsConfirmedCharms(), false, 'gone again');
  state = undefined;
  await pool.refresh(m.source);
  assert.equal(pool.spendsConfirmedCharms(), true, 'the store cannot tell');
  const bare = new MempoolOverlay(async (raws) => raws.map(() => undefined));
  await bare.refresh(m.source);
  assert.equal(bare.spendsConfirmedCharms(), true, "without the store's test: always asked per output");
});
