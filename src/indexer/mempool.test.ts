import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import type { BlockSource } from '../sources/block-source.js';
import { spendTx, type ChainVector } from '../testing/vector-chain.js';
import { MempoolOverlay } from './mempool.js';
import type { CharmOutpoints } from './store.js';
import { scriptToAddress } from '../bitcoin/address.js';
import { parseTx } from '../bitcoin/tx.js';
import { startIndexService } from './service.js';
import { h1 } from '../testing/http.js';
import { MemoryChain } from '../testing/memory-chain.js';
import { TEST_INDEX_SERVICE } from '../testing/index-fake-node.js';
import { CharmsError } from '../errors.js';
import { bitcoinVectors, burnTx } from '../testing/index-vectors.js';
import { sharedOrSkip } from '../testing/shared.js';
import { TestEngines } from '../testing/index-stores.js';
import { BITCOIN_NETWORKS } from '../model/network.js';

const engines = new TestEngines();
after(() => engines.close());

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

// ------------------------------------------------------------------ the mempool overlay and blocks

test('a mined transaction leaves the pending figures with its block, even while the mempool cannot be read', async (t) => {
  if (!sharedOrSkip(t)) return;
  const e = engines.sqlite();
  const v = bitcoinVectors();
  const chain = new MemoryChain();
  chain.mine([]);
  const svc = await startIndexService({ store: await e.open(await e.newDb()), source: chain, ...TEST_INDEX_SERVICE });
  try {
    const f = svc.follower!;
    await f.syncOnce();
    const spellTx = v.get('7269cf1b')!;
    chain.mempoolAdd(spellTx.raw);
    await f.syncOnce();
    const pending = svc.mempool!.get(spellTx.txid)!.outputs[0]!;
    const address = scriptToAddress(pending.script, BITCOIN_NETWORKS.regtest)!;
    const figures = async () => {
      const ours = JSON.parse((await h1(svc.server.port, 'GET', `/v1/addresses/${address}/balances`)).body.toString()).balances[0];
      const theirs = JSON.parse((await h1(svc.server.port, 'GET', `/v1/wallet/balance/${address}`)).body.toString()).charms.balances[0];
      return [ours.confirmed, ours.unconfirmed_in, theirs.confirmed, theirs.unconfirmed, theirs.total];
    };
    const amount = pending.amount ?? 1n; // an NFT counts one
    assert.deepEqual(await figures(), ['0', amount.toString(), 0, Number(amount), Number(amount)], 'a verified pending receive');
    // mined; the node's mempool cannot be read now (a timeout): the block's transactions left it all the same
    chain.mine([spellTx.raw]);
    chain.mempoolTxids = async () => {
      throw new CharmsError('UPSTREAM_FAILED', 'getrawmempool timed out');
    };
    await f.syncOnce();
    assert.equal(f.status.error?.message, 'getrawmempool timed out');
    assert.deepEqual(await figures(), [amount.toString(), '0', Number(amount), 0, Number(amount)], 'confirmed once, pending no more');
    const out = JSON.parse((await h1(svc.server.port, 'GET', `/v1/outputs/${spellTx.txid}:${pending.vout}`)).body.toString());
    assert.equal(out.confirmed, true);
    // a reorg returns it to the node's mempool: pending again
    delete (chain as { mempoolTxids?: unknown }).mempoolTxids;
    chain.reorg(1, [[], []], true);
    await f.syncOnce();
    assert.equal(f.status.error, undefined);
    assert.deepEqual(await figures(), ['0', amount.toString(), 0, Number(amount), Number(amount)], 'returned by a reorg: pending');
    // a pending child spends the pending output
    const child = chain.mempoolAdd(burnTx(spellTx.txid, pending.vout, 11));
    await f.syncOnce();
    assert.ok(svc.mempool!.get(child));
    // a block confirms a transaction spending the same input (a conflict): the receive and its child are gone at once
    const conflict = v.get('neg-4')!;
    assert.deepEqual(parseTx(conflict.raw).inputs[0], parseTx(spellTx.raw).inputs[0]);
    chain.mine([conflict.raw]);
    chain.mempoolTxids = async () => {
      throw new CharmsError('UPSTREAM_FAILED', 'getrawmempool timed out');
    };
    await f.syncOnce();
    assert.equal(svc.mempool!.get(spellTx.txid), undefined);
    assert.equal(svc.mempool!.get(child), undefined, 'what spends a conflicted transaction goes too');
    const after = JSON.parse((await h1(svc.server.port, 'GET', `/v1/addresses/${address}/balances`)).body.toString());
    assert.deepEqual(after.balances, [], 'no pending receive of a conflicted transaction');
  } finally {
    await svc.close();
  }
});
