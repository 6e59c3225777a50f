import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { scriptToAddress } from '../bitcoin/address.js';
import { createLogger } from '../infra/log.js';
import { BITCOIN_NETWORKS } from '../model/network.js';
import { dumpIndex } from '../testing/index-dump.js';
import { TEST_INDEX_SERVICE } from '../testing/index-fake-node.js';
import { TestEngines } from '../testing/index-stores.js';
import { bitcoinVectors, burnTx, replayDump, vectorChain } from '../testing/index-vectors.js';
import { h1, handlerAnswer } from '../testing/http.js';
import { sharedOrSkip } from '../testing/shared.js';
import { startTcpProxy } from '../testing/tcp-proxy.js';
import { waitFor } from '../testing/wait.js';
import { indexApiHandler } from './api.js';
import { charmOutputs, librarySpellCheck } from './block-write.js';
import { Follower } from './follower.js';
import { startIndexService } from './service.js';

const engines = new TestEngines();
after(() => engines.close());

test('postgres: a writer that lost its lock answers from the database meanwhile, and writes from it once it is retaken', async (t) => {
  if (!sharedOrSkip(t)) return;
  const e = await engines.engine('postgres', t);
  if (!e) return;
  const v = bitcoinVectors();
  const later = v.get('9c048eca')!; // a spell mined by the other writer: outputs writer A never saw
  const chain = vectorChain(v, ['9c048eca']);
  const nft = v.get('1acee7fb')!.txid;
  const db = await e.newDb();
  const proxy = await startTcpProxy(Number(new URL(db).port));
  const viaProxy = new URL(db);
  viaProxy.port = String(proxy.port);
  const lines: Record<string, unknown>[] = [];
  const log = createLogger('info', (l) => void lines.push(JSON.parse(l) as Record<string, unknown>));
  const events = (name: string) => lines.filter((l) => l.event === name);
  // writer A: the indexer whose connection will be cut; its API through the answer cache
  const a = await e.open(viaProxy.href, { log });
  const svc = await startIndexService({ store: a, source: chain, ...TEST_INDEX_SERVICE, log });
  const reader = await e.open(db, { mode: 'reader' });
  const fromDb = indexApiHandler({ store: reader, network: 'regtest', version: 'test' });
  const get = async (path: string) => {
    const r = await h1(svc.server.port, 'GET', path);
    assert.equal(r.status, 200, `${path}: ${r.body.toString()}`);
    return JSON.parse(r.body.toString()) as unknown;
  };
  const direct = async (path: string) => (await handlerAnswer(fromDb, path)).json as unknown;
  const followerError = () => svc.follower!.status.error?.message;
  try {
    await svc.follower!.syncOnce();
    assert.equal(followerError(), undefined);
    const holder = scriptToAddress((await a.output(nft, 0))[0]!.script, BITCOIN_NETWORKS.regtest)!;
    const laterOut = charmOutputs((await librarySpellCheck(false)([later.raw]))[0]!, later.raw, later.txid, 0)[0]!;
    const receiver = scriptToAddress(laterOut.script, BITCOIN_NETWORKS.regtest)!;
    const paths = [`/v1/addresses/${holder}/balances`, `/v1/addresses/${holder}/utxos`, `/v1/addresses/${receiver}/balances`];
    for (const p of paths) await get(p); // kept by the answer cache
    const before = await get(paths[0]!);
    assert.match(JSON.stringify(before), /"app":"n\//, 'the NFT is held before');
    assert.deepEqual(await a.charmOutpoints!().then((c) => c?.has(nft, 0)), true, 'and in the unspent set');

    proxy.cut();
    await waitFor(() => events('lock_lost').length === 1, 'the lock lost, logged');
    assert.equal(await a.charmOutpoints!(), undefined, 'no in-memory unspent set without the lock');

    // writer B takes the free lock and writes two blocks: the NFT burned, new charm outputs
    const b = await e.open(db);
    chain.mine([burnTx(nft, 0, 1), later.raw]);
    chain.mine([]);
    const fb = new Follower(b, chain, { startHeight: 1, check: librarySpellCheck(false) });
    await fb.syncOnce();
    assert.equal(fb.status.error, undefined, fb.status.error?.message);
    proxy.restore();

    // A's answers meanwhile are the database's, not what it kept
    for (const p of paths) assert.deepEqual(await get(p), await direct(p), `${p}: A answers what the database holds`);
    assert.doesNotMatch(JSON.stringify(await get(paths[0]!)), /"app":"n\//, 'the burned NFT is gone from A');
    await b.close();

    // A's first write after the loss takes the lock back: the next block spends an output of B's
    // block, which A's kept unspent set never held; written from the database's state
    chain.mine([burnTx(laterOut.txid, laterOut.vout, 2)]);
    await svc.follower!.syncOnce();
    assert.equal(followerError(), undefined);
    assert.equal((await a.tip())?.height, chain.height);
    assert.equal(await dumpIndex(a), await replayDump(e, chain), 'the database equals a from-scratch run');
    for (const p of paths) assert.deepEqual(await get(p), await direct(p), `${p}: A answers what the database holds after the retake`);
    assert.equal(await a.charmOutpoints!().then((c) => c?.has(laterOut.txid, laterOut.vout)), false, 'the reloaded unspent set');
    assert.equal(events('lock_retaken').length, 1, 'lock retaken: one line');

    // lost again, and another indexer holds the lock when A has a block to write: nothing written, said once
    proxy.cut();
    await waitFor(() => events('lock_lost').length === 2, 'the lock lost again, logged');
    const c = await e.open(db);
    proxy.restore();
    chain.mine([burnTx(v.get('2efcde0d')!.txid, 0, 3)]);
    await svc.follower!.syncOnce();
    await svc.follower!.syncOnce();
    assert.match(followerError() ?? '', /another indexer is writing this index/);
    assert.equal(events('lock_held_elsewhere').length, 1, 'held elsewhere: one line, not one per try');
    assert.notEqual((await a.tip())?.height, chain.height);
    await c.close();
    await svc.follower!.syncOnce();
    assert.equal(followerError(), undefined);
    assert.equal(await dumpIndex(a), await replayDump(e, chain), 'the database equals a from-scratch run');
    assert.equal(events('lock_lost').length, 2, 'lock lost: one line each time');
    assert.equal(events('lock_retaken').length, 2, 'lock retaken: one line each time');
    assert.equal(events('lock_lost')[0]!.level, 'warn');
    assert.equal(events('lock_retaken')[0]!.level, 'info');
  } finally {
    await svc.close();
    await reader.close();
    await proxy.close();
  }
});
