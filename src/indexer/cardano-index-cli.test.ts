/**
 * `charms index --chain cardano` (the built CLI) against the fake Ogmios on loopback, on SQLite
 * and PostgreSQL: /v1/status with slots and no Bitcoin `networks` entry, an address's holdings
 * after a virtual split, the start point (given or the network default) kept in the index; a
 * wrong --network, another start point, a Bitcoin database and Bitcoin flags refused; kill -9
 * at random moments ends in the state of an uninterrupted run.
 */
import { after, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cardanoAddressText } from '../cardano/address.js';
import { assetNameForApp, policyIdForApp } from '../cardano/assets.js';
import { appFromString } from '../model/primitives.js';
import { runCli, startCliIndex, stopChild as stop } from '../testing/cli.js';
import { conwayTx, conwayTxId, realCardanoVectors } from '../testing/cardano-txs.js';
import { FakeOgmios, fakeBlockId, praosBlocks, type FakeBlock, type FakeTx } from '../testing/fake-ogmios.js';
import { h1 } from '../testing/http.js';
import { startPostgres } from '../testing/postgres.js';
import { skipOrFail } from '../testing/require.js';
import { hasShared } from '../testing/shared.js';
import { toHex } from '../util/bytes.js';
import { verifySpells } from '../verify/index.js';
import { dumpIndex } from '../testing/index-dump.js';
import { openIndexStore } from './open.js';
import { CARDANO_DEFAULT_START_POINTS } from './start-height.js';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tmpDb = () => {
  const d = mkdtempSync(join(tmpdir(), 'charms-cardano-cli-'));
  dirs.push(d);
  return join(d, 'index.sqlite');
};

const V10 = '28bbfea24dc7c74db73a5c02da45df0415d279cc29f09eb4736cbe0faf75457b'; // learns a token, 100000000 on vout 0
const V11_BEAM = '361927aed267ef049a5b9315aa7296493b385938d73340146b0af5d4637a02cf'; // beams 3 charms
const START = { slot: 980, id: fakeBlockId(99) };
const START_ARG = `${START.slot}.${START.id}`;
const ROOT: FakeBlock = { type: 'praos', era: 'conway', id: START.id, ancestor: fakeBlockId(98), height: 99, slot: START.slot, txs: [] };
const addr = (b: number) => new Uint8Array(29).fill(b).map((x, i) => (i === 0 ? 0x60 : x));
const real = (txid: string): FakeTx => {
  const v = realCardanoVectors().get(txid)!;
  return { cbor: v.bytes, id: v.txid };
};

/** `charms index --chain cardano …` on 127.0.0.1 port 0 (see startCliIndex). */
const startIndex = (args: string[]) => startCliIndex(['--chain', 'cardano', ...args]);

/** `charms index --chain cardano <args>` to its end (asynchronously: the fake lives in this process). */
function runIndex(args: string[]): Promise<{ status: number | null; stderr: string }> {
  return runCli(['index', '--chain', 'cardano', '--port', '0', ...args]);
}

const getJson = async (port: number, path: string): Promise<{ status: number; json: Record<string, any> }> => {
  const r = await h1(port, 'GET', path);
  return { status: r.status, json: JSON.parse(r.body.toString()) };
};

/** Polls /v1/status until the index is at `height`, in sync (bounded). */
async function untilHeight(port: number, height: number): Promise<Record<string, any>> {
  let last: Record<string, any> = {};
  for (let i = 0; i < 300; i++) {
    last = (await getJson(port, '/v1/status')).json;
    if (last.index?.height === height && last.lag_blocks === 0) return last;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`the index did not reach ${height}: ${JSON.stringify(last)}`);
}

/** One engine: index the v10 spell, then a virtual split of its token; restart on the kept start point. */
async function followsOgmios(t: TestContext, db: string): Promise<void> {
  const ogmios = await FakeOgmios.start();
  const children: ChildProcess[] = [];
  try {
    ogmios.extend(ROOT, ...praosBlocks([[real(V10)]], { height: 100, slot: 1000, ancestor: START.id }));
    const ix = await startIndex(['--ogmios-url', ogmios.url, '--network', 'preprod', '--start-point', START_ARG, '--db', db]);
    children.push(ix.child);
    const s = await untilHeight(ix.port, 100);
    assert.equal(s.chain, 'cardano');
    assert.equal(s.network, 'preprod');
    assert.equal(s.node.slot, 1000);
    assert.equal(s.index.slot, 1000);
    assert.equal(s.lag_slots, 0);
    assert.equal(s.networks, undefined, 'no Bitcoin network entry');

    // the token the spell teaches, then a spell-less split of it to two addresses
    const out = await getJson(ix.port, `/v1/outputs/${V10}:0`);
    assert.equal(out.status, 200);
    const app = out.json.charms[0].app as string;
    assert.equal(out.json.charms[0].amount, '100000000');
    const a = appFromString(app);
    const [P, N] = [toHex(policyIdForApp(a)), toHex(assetNameForApp(a))];
    const splitCbor = conwayTx({
      inputs: [{ txid: V10, index: 0 }],
      outputs: [
        { address: addr(1), lovelace: 2_000_000n, assets: [[P, N, 60_000_000n]] },
        { address: addr(2), lovelace: 2_000_000n, assets: [[P, N, 40_000_000n]] },
      ],
    });
    const splitId = conwayTxId(splitCbor);
    ogmios.extend(...praosBlocks([[{ cbor: splitCbor, id: splitId }, real(V11_BEAM)]], { height: 101, slot: 1020, ancestor: fakeBlockId(100) }));
    const s2 = await untilHeight(ix.port, 101);
    assert.equal(s2.index.slot, 1020);
    const holder = cardanoAddressText(addr(1))!;
    assert.match(holder, /^addr_test1/);
    const bal = await getJson(ix.port, `/v1/addresses/${holder}/balances`);
    assert.equal(bal.status, 200, JSON.stringify(bal.json));
    assert.deepEqual(
      bal.json.balances.map((b: Record<string, unknown>) => [b.app, b.confirmed]),
      [[app, '60000000']],
    );
    const mainnetAddr = cardanoAddressText(addr(1).map((x, i) => (i === 0 ? 0x61 : x)))!;
    assert.match(mainnetAddr, /^addr1/);
    assert.equal((await getJson(ix.port, `/v1/addresses/${mainnetAddr}/balances`)).status, 400, 'a mainnet address on a preprod index');
    // the explorer-compatible routes the wallet page reads take Cardano addresses too
    const wc = await getJson(ix.port, `/v1/wallet/charms/${holder}`);
    assert.equal(wc.status, 200, JSON.stringify(wc.json));
    assert.deepEqual(
      wc.json.balances.map((b: Record<string, unknown>) => [b.appId, String(b.confirmed)]),
      [[app, '60000000']],
    );
    assert.equal(wc.json.balances[0].utxos[0].address, holder);
    const wt = await getJson(ix.port, `/v1/wallet/transactions/${holder}`);
    assert.equal(wt.status, 200, JSON.stringify(wt.json));
    assert.ok(JSON.stringify(wt.json).includes(splitId), 'the split that paid the holder is in its history');
    const byAddr = await getJson(ix.port, `/v1/charms/by-address/${holder}`);
    assert.equal(byAddr.status, 200);
    assert.equal(byAddr.json.charms.length, 1);
    assert.equal(byAddr.json.charms[0].address, holder);
    assert.deepEqual((await getJson(ix.port, `/v1/charms/by-address/${mainnetAddr}`)).json, { charms: [] }, "another network's address: none");
    assert.equal((await getJson(ix.port, '/v1/charms/by-address/notanaddress')).status, 400);
    // the beaming spell's outputs: beamed with their destination, on the tx and output routes
    const bt = await getJson(ix.port, `/v1/txs/${V11_BEAM}`);
    assert.equal(bt.status, 200);
    // three (output, app) pairs, as the follower's test finds in the store
    assert.equal(bt.json.beamed.flatMap((b: { charms: unknown[] }) => b.charms).length, 3);
    for (const b of bt.json.beamed) {
      assert.match(b.beamed_to, /^[0-9a-f]{64}$/);
      assert.match(b.address, /^addr/);
      assert.deepEqual((await getJson(ix.port, `/v1/outputs/${V11_BEAM}:${b.vout}`)).json, b);
    }
    await stop(ix.child);

    // the start point is the index's: a restart needs none, another one is refused
    const again = await startIndex(['--ogmios-url', ogmios.url, '--db', db]);
    children.push(again.child);
    assert.equal((await untilHeight(again.port, 101)).index.hash, fakeBlockId(101));
    // an --api-only reader beside it: the same answers, no Ogmios needed
    const reader = await startIndex(['--api-only', '--network', 'preprod', '--db', db]);
    children.push(reader.child);
    const rs = await getJson(reader.port, '/v1/status');
    assert.equal(rs.json.mode, 'api-only');
    assert.equal(rs.json.index.slot, 1020);
    assert.equal(rs.json.networks, undefined);
    const path = `/v1/addresses/${holder}/balances`;
    assert.equal((await h1(reader.port, 'GET', path)).body.toString(), (await h1(again.port, 'GET', path)).body.toString());
    await stop(reader.child);
    await stop(again.child);
    const mock = await runIndex(['--ogmios-url', ogmios.url, '--db', db, '--mock']);
    assert.match(mock.stderr, /the index was built without --mock/);
    const other = await runIndex(['--ogmios-url', ogmios.url, '--db', db, '--start-slot', '0']);
    assert.notEqual(other.status, 0);
    assert.match(other.stderr, /start point origin, but the index at .* starts after 980\./);
  } finally {
    await Promise.all(children.map(stop));
    await ogmios.close();
  }
  t.diagnostic(`indexed through ${db.startsWith('postgres') ? 'PostgreSQL' : 'SQLite'}`);
}

test('charms index --chain cardano follows the fake Ogmios on SQLite: status with slots, holdings after a virtual split', async (t) => {
  if (!hasShared) return skipOrFail(t, 'test vectors not found (CHARMS_SHARED_DIR)');
  await followsOgmios(t, tmpDb());
});

test('charms index --chain cardano on a postgres:// --db', async (t) => {
  if (!hasShared) return skipOrFail(t, 'test vectors not found (CHARMS_SHARED_DIR)');
  const pg = await startPostgres();
  if (!pg) return skipOrFail(t, 'PostgreSQL (/usr/lib/postgresql/<version>/bin) is not installed');
  try {
    await followsOgmios(t, await pg.createDb('cardano_cli'));
  } finally {
    await pg.stop();
  }
});

test('charms index --chain cardano refuses a wrong --network, a --start-slot other than 0, a Bitcoin database, Bitcoin flags', async () => {
  const ogmios = await FakeOgmios.start();
  try {
    ogmios.extend(ROOT);
    const wrong = await runIndex(['--ogmios-url', ogmios.url, '--network', 'preview', '--start-slot', '0', '--db', tmpDb()]);
    assert.notEqual(wrong.status, 0);
    assert.match(wrong.stderr, /--network preview, but the Cardano node behind Ogmios follows preprod/);
    const bitcoinNet = await runIndex(['--ogmios-url', ogmios.url, '--network', 'regtest', '--db', tmpDb()]);
    assert.match(bitcoinNet.stderr, /--network regtest is not a Cardano network/);

    const slot = await runIndex(['--ogmios-url', ogmios.url, '--db', tmpDb(), '--start-slot', '5']);
    assert.match(slot.stderr, /--start-slot "5": only 0/);

    const btcDb = tmpDb();
    await (await openIndexStore(btcDb, { mode: 'writer', network: 'regtest', mock: false, startHeight: 0 })).close();
    const btc = await runIndex(['--ogmios-url', ogmios.url, '--db', btcDb, '--start-slot', '0']);
    assert.notEqual(btc.status, 0);
    assert.match(btc.stderr, /the index is of bitcoin:regtest, not cardano:preprod; one chain and network per database/);

    const noOgmios = await runIndex(['--db', tmpDb(), '--start-slot', '0']);
    assert.match(noOgmios.stderr, /needs Ogmios \(started with --include-transaction-cbor\): --ogmios-url/);
    const rpc = await runIndex(['--ogmios-url', ogmios.url, '--rpc-url', 'http://127.0.0.1:1', '--db', tmpDb()]);
    assert.match(rpc.stderr, /--rpc-url is for a Bitcoin index/);
    // INDEX_CHAIN and OGMIOS_URL are read (the network check shows Ogmios was asked)
    const env = await runCli(['index', '--port', '0', '--network', 'preview', '--db', tmpDb()], { INDEX_CHAIN: 'cardano', OGMIOS_URL: ogmios.url });
    assert.match(env.stderr, /--network preview, but the Cardano node behind Ogmios follows preprod/);
    // and a Bitcoin index refuses the Cardano options
    const btcIndex = ['index', '--port', '0', '--rpc-url', 'http://127.0.0.1:1', '--db', tmpDb()];
    assert.match((await runCli([...btcIndex, '--network', 'preprod'])).stderr, /--network preprod is a Cardano network: add --chain cardano/);
    assert.match((await runCli([...btcIndex, '--ogmios-url', ogmios.url])).stderr, /--ogmios-url is for a Cardano index \(--chain cardano\)/);
  } finally {
    await ogmios.close();
  }
});

test('a new Cardano index without --start-point starts after the network default point, kept in the index', async () => {
  const ogmios = await FakeOgmios.start();
  const children: ChildProcess[] = [];
  try {
    ogmios.extend(ROOT);
    const db = tmpDb();
    const ix = await startIndex(['--ogmios-url', ogmios.url, '--db', db]);
    children.push(ix.child);
    const d = CARDANO_DEFAULT_START_POINTS.preprod;
    // the fake's chain does not hold the preprod point: the index says so and stops
    let s: Record<string, any> = {};
    for (let i = 0; i < 300 && !s.error; i++) {
      s = (await getJson(ix.port, '/v1/status')).json;
      if (!s.error) await new Promise((res) => setTimeout(res, 100));
    }
    assert.match(s.error?.message ?? '', new RegExp(`knows none of the points ${d.slot}\\.${d.id}`));
    await stop(ix.child);
    const other = await runIndex(['--ogmios-url', ogmios.url, '--db', db, '--start-point', START_ARG]);
    assert.match(other.stderr, new RegExp(`start point ${START_ARG}, but the index at .* starts after ${d.slot}\\.${d.id}`));
  } finally {
    await Promise.all(children.map(stop));
    await ogmios.close();
  }
});

test('kill -9 at random moments while following Ogmios ends in the state of an uninterrupted run (SQLite)', async (t) => {
  if (!hasShared) return skipOrFail(t, 'test vectors not found (CHARMS_SHARED_DIR)');
  const v10 = real(V10);
  const verdict = verifySpells([{ cardano: v10.cbor }], false)[0]!;
  assert.ok(verdict.ok);
  const token = verdict.spell.app_public_inputs.map(([a]) => a).find((a) => a.tag === 't')!;
  const [P, N] = [toHex(policyIdForApp(token)), toHex(assetNameForApp(token))];
  // the v10 spell, then a chain of virtual splits of its token, every third block empty (120 blocks)
  const blocks: FakeTx[][] = [[v10]];
  let prev = { txid: V10, index: 0 };
  let amount = 100_000_000n;
  for (let i = 1; i < 120; i++) {
    if (i % 3 === 0) {
      blocks.push([]);
      continue;
    }
    const cbor = conwayTx({
      inputs: [prev],
      outputs: [
        { address: addr(1 + (i % 5)), lovelace: 2_000_000n, assets: [[P, N, amount - 1000n]] },
        { address: addr(10 + (i % 3)), lovelace: 1_000_000n, assets: [[P, N, 1000n]] },
      ],
    });
    const id = conwayTxId(cbor);
    blocks.push([{ cbor, id }]);
    prev = { txid: id, index: 0 };
    amount -= 1000n;
  }
  const chain = praosBlocks(blocks, { height: 100, slot: 1000, ancestor: START.id });
  const tip = chain[chain.length - 1]!.height;
  const args = (url: string, db: string, commit: number) => ['--ogmios-url', url, '--start-point', START_ARG, '--db', db, '--commit-blocks', String(commit)];
  const dump = async (db: string) => {
    const s = await openIndexStore(db, { mode: 'writer', chain: 'cardano', network: 'preprod', mock: false, startHeight: 0 });
    try {
      return await dumpIndex(s);
    } finally {
      await s.close();
    }
  };
  const full = await FakeOgmios.start();
  try {
    full.extend(ROOT, ...chain);
    const dbA = tmpDb();
    const a = await startIndex(args(full.url, dbA, 4));
    const t0 = Date.now();
    await untilHeight(a.port, tip);
    const took = Date.now() - t0;
    await stop(a.child);

    // indexers on the same chain, committing every block, killed -9 at random moments within that time
    const dbB = tmpDb();
    const delays: number[] = [];
    const reached: (number | string)[] = [];
    for (let round = 0; round < 8; round++) {
      const b = await startIndex(args(full.url, dbB, 1));
      const ms = Math.floor(Math.random() * took);
      delays.push(ms);
      // not a synchronisation: the kill lands wherever the indexer is after `ms`
      await new Promise((res) => setTimeout(res, ms));
      const exited = new Promise<void>((res) => b.child.once('exit', () => res()));
      b.child.kill('SIGKILL');
      await exited;
      const s = await openIndexStore(dbB, { mode: 'writer', chain: 'cardano', network: 'preprod', mock: false, startHeight: 0 });
      reached.push((await s.tip())?.height ?? '-');
      await s.close();
    }
    t.diagnostic(`uninterrupted: ${took} ms; kills after (ms): ${delays.join(' ')}; index tip after each: ${reached.join(' ')} (of ${tip})`);
    const last = await startIndex(args(full.url, dbB, 1));
    await untilHeight(last.port, tip);
    await stop(last.child);
    const [da, db] = [await dump(dbA), await dump(dbB)];
    assert.ok(da.includes(`block ${tip} `));
    assert.equal(db, da);
  } finally {
    await full.close();
  }
});
