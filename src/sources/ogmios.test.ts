/**
 * The Ogmios chain-sync client against the fake Ogmios (src/testing/fake-ogmios.ts) on loopback:
 * intersection, roll forward and backward, pipelining, Byron and empty blocks, the real Cardano
 * charms transactions of vectors/, v6 and v7 shapes, and every way a connection goes wrong.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CharmsError } from '../errors.js';
import { CARDANO_NETWORKS } from '../model/network.js';
import { FakeOgmios, fakeBlockId, praosBlocks, type FakeBlock, type FakeTx, type OgmiosVersion } from '../testing/fake-ogmios.js';
import { byronTx, conwayTx, conwayTxId, realCardanoVectors } from '../testing/cardano-txs.js';
import { hasShared } from '../testing/shared.js';
import { skipOrFail } from '../testing/require.js';
import { waitFor } from '../testing/wait.js';
import { OgmiosFollower, OgmiosSession, intersectionHeights } from './ogmios.js';
import { bodyOfRawTx, decodeNextBlock, parsePoint, type ChainSyncEvent, type PointOrOrigin } from './ogmios-protocol.js';

const network = CARDANO_NETWORKS.preprod;

const plainTx = (salt: number): FakeTx => {
  const cbor = conwayTx({
    inputs: [{ txid: 'ab'.repeat(32), index: salt }],
    outputs: [{ address: new Uint8Array(29).fill(0x60), lovelace: 2_000_000n }],
    salt,
  });
  return { cbor, id: conwayTxId(cbor) };
};

/** Byron EBB + a BFT block with a Byron tx, then Praos blocks: the vectors, an empty one, plain ones. */
function testChain(): FakeBlock[] {
  const ebb: FakeBlock = { type: 'ebb', era: 'byron', id: fakeBlockId(0, 'ebb'), ancestor: 'ab'.repeat(32), height: 0, slot: undefined, txs: [] };
  const b = byronTx({ txid: 'cd'.repeat(32), index: 0 }, 1);
  const bft: FakeBlock = { type: 'bft', era: 'byron', id: fakeBlockId(1, 'bft'), ancestor: ebb.id, height: 1, slot: 1, txs: [{ cbor: b.cbor, id: b.id }] };
  const vectors = hasShared ? [...realCardanoVectors().values()].map((v) => ({ cbor: v.bytes, id: v.txid })) : [];
  const praos = praosBlocks([vectors.slice(0, 3), [], vectors.slice(3), [plainTx(1), plainTx(2)], [plainTx(3)], [], [plainTx(4)]], {
    height: 2,
    slot: 100,
    ancestor: bft.id,
  });
  return [ebb, bft, ...praos];
}

const pointOf = (b: FakeBlock): PointOrOrigin => ({ slot: b.slot!, id: b.id });

/** A consumer as the index is one: blocks kept in order, a roll backward cuts them. */
class Consumer {
  blocks: { id: string; slot: number | undefined; height: number; txids: string[] }[] = [];
  backwards: PointOrOrigin[] = [];
  apply(ev: ChainSyncEvent): void {
    if (ev.direction === 'forward') {
      const last = this.blocks[this.blocks.length - 1];
      if (last) assert.equal(ev.block.ancestor, last.id, 'each block links to the one before');
      this.blocks.push({ id: ev.block.id, slot: ev.block.slot, height: ev.block.height, txids: ev.block.transactions.map((t) => t.id) });
    } else {
      this.backwards.push(ev.point);
      const p = ev.point;
      const at = p === 'origin' ? -1 : this.blocks.findIndex((b) => b.id === p.id);
      assert.ok(p === 'origin' || at >= 0, 'a roll backward goes to a block we have');
      this.blocks.splice(at + 1);
    }
  }
  /** The committed points, newest first, origin last (as the index offers them). */
  points(): PointOrOrigin[] {
    const withSlot = this.blocks.filter((b) => b.slot !== undefined);
    const hs = intersectionHeights(withSlot.length - 1, 0);
    return [...hs.map((i) => ({ slot: withSlot[i]!.slot!, id: withSlot[i]!.id })), 'origin'];
  }
}

async function follow(f: OgmiosFollower, c: Consumer, until: (c: Consumer) => boolean): Promise<void> {
  while (!until(c)) c.apply(await f.next());
}

const ids = (bs: FakeBlock[]) => bs.map((b) => b.id);

for (const version of ['v6', 'v7'] as OgmiosVersion[])
  for (const pipeline of [1, 8])
    test(`Ogmios ${version}, pipeline ${pipeline}: syncs Byron, empty and charms blocks from the origin, transactions checked`, async (t) => {
      if (!hasShared) return skipOrFail(t, 'test vectors not found (CHARMS_SHARED_DIR)');
      const fake = await FakeOgmios.start({ version, networkMagic: network.networkMagic });
      t.after(() => fake.close());
      const chain = testChain();
      fake.extend(...chain);
      const s = await OgmiosSession.open({ url: fake.url, network, pipeline });
      t.after(() => s.close());
      assert.deepEqual(s.genesis, { networkMagic: 1, securityParameter: 2160 });
      const r = await s.findIntersection(['origin']);
      assert.equal(r.intersection, 'origin');
      const c = new Consumer();
      const first = await s.next();
      assert.deepEqual(first, {
        direction: 'backward',
        point: 'origin',
        tip: { slot: chain.at(-1)!.slot, id: chain.at(-1)!.id, height: chain.at(-1)!.height },
      });
      while (c.blocks.length < chain.length) {
        c.apply(await s.next());
        assert.ok(s.outstanding <= pipeline, 'never more than `pipeline` requests in flight or answers buffered');
      }
      assert.deepEqual(
        ids(chain),
        c.blocks.map((b) => b.id),
      );
      assert.equal(c.blocks[0]!.slot, undefined, 'an epoch-boundary block has no slot');
      assert.deepEqual(
        c.blocks.map((b) => b.txids),
        chain.map((b) => b.txs.map((x) => x.id)),
      );
      const vectors = [...realCardanoVectors().keys()];
      assert.deepEqual(
        c.blocks.flatMap((b) => b.txids).filter((x) => vectors.includes(x)),
        vectors,
        'the real transactions come through with their ids',
      );
      if (pipeline === 1) assert.equal(fake.maxQueued, 1);
      else assert.ok(fake.maxQueued >= 2 && fake.maxQueued <= pipeline, `requests were pipelined (${fake.maxQueued} waiting at once)`);
      // at the tip, a request waits for the next block
      const waiting = s.next();
      const more = praosBlocks([[plainTx(9)]], { height: chain.at(-1)!.height + 1, slot: chain.at(-1)!.slot! + 20, ancestor: chain.at(-1)!.id });
      fake.extend(...more);
      c.apply(await waiting);
      assert.equal(c.blocks.at(-1)!.id, more[0]!.id);
    });

test('findIntersection: the newest known of several points; none known is an error with the tip', async (t) => {
  const fake = await FakeOgmios.start();
  t.after(() => fake.close());
  const chain = praosBlocks(
    Array.from({ length: 10 }, (_, i) => [plainTx(i)]),
    { height: 100, slot: 5000, ancestor: 'ee'.repeat(32) },
  );
  fake.extend(...chain);
  const s = await OgmiosSession.open({ url: fake.url, network });
  t.after(() => s.close());
  const unknown = { slot: 1, id: '11'.repeat(32) };
  const r = await s.findIntersection([unknown, pointOf(chain[5]!), pointOf(chain[2]!), 'origin']);
  assert.deepEqual(r.intersection, pointOf(chain[5]!));
  assert.deepEqual(await s.next(), { direction: 'backward', point: pointOf(chain[5]!), tip: { ...(pointOf(chain[9]!) as object), height: 109 } });
  const ev = await s.next();
  assert.equal(ev.direction === 'forward' && ev.block.id, chain[6]!.id);
  const s2 = await OgmiosSession.open({ url: fake.url, network });
  t.after(() => s2.close());
  await assert.rejects(s2.findIntersection([unknown]), (e: CharmsError) => {
    assert.equal(e.code, 'UPSTREAM_FAILED');
    assert.match(e.message, /knows none of the points 1\.1111/);
    assert.match(e.message, new RegExp(`its tip: 5180\\.${chain[9]!.id}`));
    return true;
  });
});

test('a fork below what was read is a roll backward to the fork point, then the new branch', async (t) => {
  const fake = await FakeOgmios.start();
  t.after(() => fake.close());
  const chain = praosBlocks(
    Array.from({ length: 8 }, (_, i) => [plainTx(i)]),
    { height: 10, slot: 200, ancestor: 'ee'.repeat(32) },
  );
  fake.extend(...chain);
  const c = new Consumer();
  const f = new OgmiosFollower({ url: fake.url, network, pipeline: 4, points: () => c.points() });
  t.after(() => f.close());
  await follow(f, c, (x) => x.blocks.length === 8);
  const branch = praosBlocks([[plainTx(50)], [], [plainTx(51)], [plainTx(52)]], { height: 15, slot: 310, ancestor: chain[4]!.id, branch: 'b' });
  fake.fork(5, branch);
  await follow(f, c, (x) => x.blocks.length === 9 && x.blocks.at(-1)!.id === branch.at(-1)!.id);
  assert.deepEqual(
    c.blocks.map((b) => b.id),
    [...ids(chain.slice(0, 5)), ...ids(branch)],
  );
  assert.deepEqual(c.backwards.at(-1), pointOf(chain[4]!));
});

for (const bad of ['garbage', 'binary', 'oversized', 'bad-id', 'drop'] as const)
  test(`a ${bad} frame ends the connection; the follower reconnects, intersects again and ends on the same chain`, async (t) => {
    const fake = await FakeOgmios.start({ version: 'v7' });
    t.after(() => fake.close());
    const chain = praosBlocks(
      Array.from({ length: 12 }, (_, i) => [plainTx(i)]),
      { height: 1, slot: 40, ancestor: 'ee'.repeat(32) },
    );
    fake.extend(...chain.slice(0, 6));
    const c = new Consumer();
    const f = new OgmiosFollower({ url: fake.url, network, pipeline: 3, maxPayload: 1024 * 1024, backoffMs: { first: 5, max: 20 }, points: () => c.points() });
    t.after(() => f.close());
    await follow(f, c, (x) => x.blocks.length === 6);
    fake.misbehave.push(bad);
    fake.extend(...chain.slice(6));
    await follow(f, c, (x) => x.blocks.length === 12);
    assert.deepEqual(
      c.blocks.map((b) => b.id),
      ids(chain),
    );
    assert.equal(f.status().reconnects, 1);
    assert.equal(fake.connections, 2);
    assert.equal(f.status().lastError, undefined, 'cleared once events flow again');
  });

test('the oversized frame error names the bound', async (t) => {
  const fake = await FakeOgmios.start();
  t.after(() => fake.close());
  fake.extend(...praosBlocks([[plainTx(1)]], { height: 1, slot: 40, ancestor: 'ee'.repeat(32) }));
  const s = await OgmiosSession.open({ url: fake.url, network, maxPayload: 1024 * 1024 });
  t.after(() => s.close());
  await s.findIntersection(['origin']);
  assert.equal((await s.next()).direction, 'backward');
  assert.equal((await s.next()).direction, 'forward');
  fake.misbehave.push('oversized');
  fake.extend(...praosBlocks([[plainTx(2)]], { height: 2, slot: 60, ancestor: fake.chain[0]!.id }));
  await assert.rejects(s.next(), (e: CharmsError) => e.code === 'UPSTREAM_FAILED' && /over 1048576 bytes/.test(e.message));
});

for (const version of ['v6', 'v7'] as OgmiosVersion[])
  test(`Ogmios ${version} without --include-transaction-cbor: a CONFIG error naming the flag, never retried`, async (t) => {
    const fake = await FakeOgmios.start({ version });
    t.after(() => fake.close());
    fake.extend(...praosBlocks([[], [plainTx(1)]], { height: 1, slot: 40, ancestor: 'ee'.repeat(32) }));
    fake.misbehave.push('no-cbor', 'no-cbor');
    const c = new Consumer();
    const f = new OgmiosFollower({ url: fake.url, network, backoffMs: { first: 5, max: 5 }, points: () => c.points() });
    t.after(() => f.close());
    // the empty block goes through (no transaction to lack its CBOR)
    await assert.rejects(
      follow(f, c, () => false),
      (e: CharmsError) => e.code === 'CONFIG' && e.message.includes('--include-transaction-cbor'),
    );
    assert.equal(c.blocks.length, 1);
    assert.equal(fake.connections, 1, 'not retried');
  });

test('a node of another network is refused at connection (CONFIG), not followed', async (t) => {
  const fake = await FakeOgmios.start({ networkMagic: CARDANO_NETWORKS.mainnet.networkMagic });
  t.after(() => fake.close());
  await assert.rejects(OgmiosSession.open({ url: fake.url, network }), (e: CharmsError) => {
    assert.equal(e.code, 'CONFIG');
    assert.match(e.message, /magic 764824073, not Cardano preprod \(magic 1\)/);
    return true;
  });
  const f = new OgmiosFollower({ url: fake.url, network, points: () => ['origin'] });
  t.after(() => f.close());
  await assert.rejects(f.next(), (e: CharmsError) => e.code === 'CONFIG');
  assert.equal(fake.connections, 2);
});

test('a dead Ogmios (no pong) fails the session; the follower shows it and reconnects when it lives again', async (t) => {
  const fake = await FakeOgmios.start();
  t.after(() => fake.close());
  const chain = praosBlocks([[plainTx(1)], [plainTx(2)]], { height: 1, slot: 40, ancestor: 'ee'.repeat(32) });
  fake.extend(chain[0]!);
  const c = new Consumer();
  const f = new OgmiosFollower({
    url: fake.url,
    network,
    pingIntervalMs: 30,
    requestTimeoutMs: 200,
    backoffMs: { first: 5, max: 10 },
    points: () => c.points(),
  });
  t.after(() => f.close());
  await follow(f, c, (x) => x.blocks.length === 1);
  fake.freeze();
  const pending = follow(f, c, (x) => x.blocks.length === 2);
  await waitFor(() => f.status().lastError?.includes('no answer to a ping'), 'the follower to notice the dead connection');
  assert.equal(f.status().connected, false);
  assert.ok(f.status().reconnects >= 1);
  fake.thaw();
  fake.extend(chain[1]!);
  await pending;
  assert.deepEqual(
    c.blocks.map((b) => b.id),
    ids(chain),
  );
});

test('a connection refused is UPSTREAM_UNAVAILABLE for a session; a follower keeps trying until closed', async (t) => {
  const fake = await FakeOgmios.start();
  const url = fake.url;
  await fake.close();
  await assert.rejects(
    OgmiosSession.open({ url, network }),
    (e: CharmsError) => e.code === 'UPSTREAM_UNAVAILABLE' && /is Ogmios running there/.test(e.message),
  );
  const f = new OgmiosFollower({ url, network, backoffMs: { first: 5, max: 10 }, points: () => ['origin'] });
  t.after(() => f.close());
  const p = f.next();
  await waitFor(() => f.status().reconnects >= 2, 'two reconnection attempts');
  f.close();
  await assert.rejects(p, (e: CharmsError) => e.code === 'UPSTREAM_UNAVAILABLE');
});

test('intersectionHeights: the tip, exponentially spaced below, the floor last', () => {
  assert.deepEqual(intersectionHeights(100, 0), [100, 99, 98, 96, 92, 84, 68, 36, 0]);
  assert.deepEqual(intersectionHeights(5, 5), [5]);
  assert.deepEqual(intersectionHeights(4, 5), []);
  assert.ok(intersectionHeights(10_000_000, 10_000_000 - 2160).length <= 14);
});

test('parsePoint reads <slot>.<hash> and origin; anything else is INVALID_INPUT', () => {
  assert.deepEqual(parsePoint(`4492800.${'AB'.repeat(32)}`), { slot: 4492800, id: 'ab'.repeat(32) });
  assert.equal(parsePoint('origin'), 'origin');
  for (const bad of ['', '12', `x.${'ab'.repeat(32)}`, `1.${'ab'.repeat(31)}`, `99999999999999999.${'ab'.repeat(32)}`])
    assert.throws(
      () => parsePoint(bad),
      (e: CharmsError) => e.code === 'INVALID_INPUT',
    );
});

test('decodeNextBlock: v6 and v7 block shapes decode alike; a tx id that is not its body hash is refused', () => {
  const tx = plainTx(7);
  const base = { era: 'conway', id: 'aa'.repeat(32), ancestor: 'bb'.repeat(32), height: 3, slot: 99, size: { bytes: 10 } };
  const tip = { slot: 99, id: 'aa'.repeat(32), height: 3 };
  const v6 = {
    direction: 'forward',
    tip,
    block: {
      type: 'praos',
      ...base,
      transactions: [{ id: tx.id, spends: 'inputs', inputs: [], outputs: [], validityInterval: {}, cbor: Buffer.from(tx.cbor).toString('hex') }],
    },
  };
  const v7 = {
    direction: 'forward',
    tip,
    block: { type: 'praos', ...base, era: 'dijkstra', transactions: [{ id: tx.id, spends: 'inputs', inputs: [], cbor: Buffer.from(tx.cbor).toString('hex') }] },
  };
  const a = decodeNextBlock(v6);
  const b = decodeNextBlock(v7);
  assert.ok(a.direction === 'forward' && b.direction === 'forward');
  assert.deepEqual(a.block.transactions, b.block.transactions);
  assert.equal(b.block.era, 'dijkstra');
  const empty = decodeNextBlock({ direction: 'forward', tip, block: { type: 'praos', ...base } });
  assert.ok(empty.direction === 'forward' && empty.block.transactions.length === 0);
  const wrongId = structuredClone(v6);
  wrongId.block.transactions[0]!.id = 'cc'.repeat(32);
  assert.throws(
    () => decodeNextBlock(wrongId),
    (e: CharmsError) => e.code === 'UPSTREAM_FAILED' && /not its id/.test(e.message),
  );
  assert.deepEqual(decodeNextBlock({ direction: 'backward', point: 'origin', tip: 'origin' }), { direction: 'backward', point: 'origin', tip: 'origin' });
});

test('bodyOfRawTx: the Byron [tx, witnesses] form hashes its tx; Conway its body; real vectors their ids', (t) => {
  const b = byronTx({ txid: '01'.repeat(32), index: 3 }, 5);
  assert.equal(bodyOfRawTx(b.cbor, b.id).length, b.cbor.length - 2);
  assert.equal(bodyOfRawTx(b.cbor.subarray(1, -1), b.id).length, b.cbor.length - 2, 'a bare Byron tx matches whole');
  if (!hasShared) return skipOrFail(t, 'test vectors not found (CHARMS_SHARED_DIR)');
  for (const v of realCardanoVectors().values()) assert.ok(bodyOfRawTx(v.bytes, v.txid).length > 0);
});
