import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { bech32 } from '@scure/base';
import { CharmsError } from '../errors.js';
import { FakeBitcoind } from '../testing/fake-bitcoind.js';
import { sharedOrSkip } from '../testing/shared.js';
import { VECTOR_SETS, fillerTx, linearVectorBlocks, loadVector, spendTx } from '../testing/vector-chain.js';
import { headerHash } from '../bitcoin/block.js';
import { addressToScript } from '../bitcoin/address.js';
import { toHex } from '../util/bytes.js';
import { rpcNodeFromConfig } from './bitcoin-node.js';
import type { BlockSource } from './block-source.js';
import { GENESIS } from './btc-source.js';
import { blockSourceFromConfig, btcSourceFromConfig } from './chain-sources.js';
import { EsploraBlockSource } from './esplora-block-source.js';
import { RpcBlockSource } from './rpc-block-source.js';
import { BITCOIN_NETWORKS } from '../model/network.js';

const isErr = (code: string, re?: RegExp) => (e: unknown) => e instanceof CharmsError && e.code === code && (!re || re.test(e.message));

/** The three ways to read the fake: RPC with REST, RPC without REST, Esplora. */
function sourcesOf(fake: FakeBitcoind, timeoutMs = 5000): { rest: RpcBlockSource; rpc: RpcBlockSource; esplora: EsploraBlockSource; all: BlockSource[] } {
  const config = { rpcUrl: fake.rpcUrl, rpcCookie: fake.cookieFile, timeoutMs };
  const rest = blockSourceFromConfig(config) as RpcBlockSource;
  const rpc = new RpcBlockSource(rpcNodeFromConfig(config)!, { rest: false });
  const esplora = new EsploraBlockSource(fake.esploraUrl, { timeoutMs });
  return { rest, rpc, esplora, all: [rest, rpc, esplora] };
}

/** What a source says about the whole chain and mempool, for comparing sources. */
async function snapshot(s: BlockSource) {
  const tip = await s.tip();
  const chain = [];
  for (let h = 0; h <= tip.height; h++) {
    const hash = await s.hashAt(h);
    assert.ok(hash);
    const header = await s.header(hash);
    const block = await s.block(hash);
    chain.push({ header, prev: block.header.prevHash, txids: block.txs.map((t) => t.txid), raw: block.txs.map((t) => toHex(t.raw)).join('') });
  }
  return { network: await s.network(), tip, chain, above: await s.hashAt(tip.height + 1), mempool: (await s.mempoolTxids()).sort() };
}

test('RPC (REST and getblock) and Esplora give the same chain of vector blocks: tips, hashes, headers, blocks, mempool, txs, stale blocks', async (t) => {
  if (!sharedOrSkip(t)) return;
  const fake = await FakeBitcoind.start();
  try {
    const { rest, all } = sourcesOf(fake);
    assert.equal(fake.hashAt(0), GENESIS.regtest, 'block 0 is the real regtest genesis');
    const blocks = linearVectorBlocks();
    for (const b of blocks) fake.mine(b.map((v) => v.bytes));
    fake.mempoolAdd(loadVector(VECTOR_SETS.conflicts[1]).bytes);
    for (const f of fillerTx(2, 9)) fake.mempoolAdd(f.bytes);

    const [a, b, c] = await Promise.all(all.map(snapshot));
    assert.deepEqual(b, a);
    assert.deepEqual(c, a);
    assert.equal(a!.network.name, 'regtest');
    assert.deepEqual(a!.tip, { height: blocks.length, hash: fake.tipHash });
    assert.equal(a!.above, undefined);
    assert.equal(a!.mempool.length, 3);
    // the chain links, every header is on the best chain, the vector txs are there after each coinbase
    a!.chain.forEach((x, h) => {
      assert.equal(x.header!.height, h);
      assert.equal(x.header!.inBestChain, true);
      if (h > 0) {
        assert.equal(x.prev, a!.chain[h - 1]!.header!.hash);
        assert.equal(x.header!.prevHash, x.prev);
        assert.ok(x.header!.time > a!.chain[h - 1]!.header!.time, 'times increase');
        assert.deepEqual(
          x.txids.slice(1),
          blocks[h - 1]!.map((v) => v.txid),
        );
      }
    });
    // REST was probed and used; the other one used getblock
    assert.ok(fake.requests.includes('/rest/chaininfo.json'));
    assert.ok(fake.requests.filter((p) => p.startsWith('/rest/block/')).length >= blocks.length + 1);
    assert.ok((fake.calls.get('getblock') ?? 0) >= blocks.length + 1);

    // transactions by id: confirmed, in the mempool, unknown
    for (const s of all) {
      const v = loadVector(VECTOR_SETS.valid[0]);
      assert.deepEqual(await s.rawTx(v.txid), v.bytes);
      assert.deepEqual(await s.rawTx(VECTOR_SETS.conflicts[1]), loadVector(VECTOR_SETS.conflicts[1]).bytes);
      assert.equal(await s.rawTx('ab'.repeat(32)), undefined);
      assert.equal(await s.header('ab'.repeat(32)), undefined);
      await assert.rejects(s.block('ab'.repeat(32)), isErr('NOT_FOUND'));
      await assert.rejects(s.hashAt(-1), isErr('INVALID_INPUT'));
      await assert.rejects(s.header('nothex'), isErr('INVALID_INPUT'));
    }
    const entry = await rest.mempoolEntry(VECTOR_SETS.conflicts[1]);
    assert.ok(entry && entry.vsize > 0 && entry.feeSats === 1000);
    assert.equal(await rest.mempoolEntry('ab'.repeat(32)), undefined);

    // a two-block reorg: the old blocks are known but stale, everywhere alike
    const old = [fake.hashAt(fake.height)!, fake.hashAt(fake.height - 1)!];
    const replaced = fake.reorg(2, [[loadVector(VECTOR_SETS.conflicts[2]).bytes], [], []]);
    assert.equal(replaced.length, 3);
    for (const s of all) {
      for (const h of old) {
        const hd = await s.header(h);
        assert.equal(hd?.inBestChain, false, `${s.name}: ${h} is stale`);
        assert.equal(hd.height, fake.blockByHash(h)!.height);
      }
      assert.deepEqual(await s.tip(), { height: blocks.length + 1, hash: replaced[2]!.hash });
    }
    // the disconnected transactions went back to the mempool, except those the new branch
    // conflicts with (4d91f5a6… spends the outpoints of 88690370…), as Bitcoin Core does
    const again = await Promise.all(all.map(async (s) => (await s.mempoolTxids()).sort()));
    assert.deepEqual(again[1], again[0]);
    assert.deepEqual(again[2], again[0]);
    assert.ok(again[0]!.includes(blocks[7]![0]!.txid), 'the burn is pending again');
    assert.ok(!again[0]!.includes(VECTOR_SETS.conflicts[0]), 'the conflicting spell left the mempool');
    assert.ok(!again[0]!.includes(VECTOR_SETS.conflicts[2]), 'confirmed in the new branch');

    // a same-height replacement of the tip
    const before = fake.tipHash;
    const same = fake.replaceTip();
    for (const s of all) {
      assert.deepEqual(await s.tip(), { height: blocks.length + 1, hash: same.hash });
      assert.equal((await s.header(before))?.inBestChain, false);
    }
  } finally {
    await fake.stop();
  }
});

test('BTC side: fee estimates, broadcast (checked txid, rejection), address UTXOs on Esplora only, tip time', async (t) => {
  if (!sharedOrSkip(t)) return;
  const fake = await FakeBitcoind.start({ auth: { user: 'u', password: 'p' } });
  try {
    const viaRpc = btcSourceFromConfig({ rpcUrl: fake.rpcUrl, rpcUser: 'u', rpcPassword: 'p' })!;
    const viaEsplora = btcSourceFromConfig({ rpcUrl: fake.rpcUrl, esploraUrl: fake.esploraUrl })!;
    assert.equal(viaRpc.kind, 'bitcoind');
    assert.equal(viaEsplora.kind, 'esplora');
    // an address that receives a fabricated payment and a charm output's spend
    const program = Uint8Array.from({ length: 20 }, (_, i) => i + 1);
    const address = bech32.encode('bcrt', [0, ...bech32.toWords(program)]);
    const script = addressToScript(address).script;
    const pay = spendTx([{ txid: 'cd'.repeat(32), vout: 3 }], {
      outputs: [
        { value: 12_345n, script },
        { value: 777n, script },
      ],
      tag: 5,
    });
    fake.mine([pay.bytes]);
    const spendOne = spendTx([{ txid: pay.txid, vout: 1 }], { tag: 6 });

    // broadcast: both sources, txid checked; a confirmed tx is rejected as INVALID_TX
    assert.equal(await viaRpc.broadcast(spendOne.hex), spendOne.txid);
    assert.deepEqual(fake.mempoolTxids(), [spendOne.txid]);
    const another = fillerTx(1, 77)[0]!;
    assert.equal(await viaEsplora.broadcast(another.hex), another.txid);
    await assert.rejects(viaRpc.broadcast(pay.hex), isErr('INVALID_TX', /already in block chain/));
    await assert.rejects(viaEsplora.broadcast(pay.hex), isErr('INVALID_TX', /already in block chain/));
    await assert.rejects(viaRpc.broadcast('00'), isErr('INVALID_TX'));

    // UTXOs: Esplora knows the address (the spent output is gone, mempool-aware); Core has no address index
    const utxos = await viaEsplora.addressUtxos!(address);
    assert.deepEqual(utxos, [{ txid: pay.txid, vout: 0, value: 12_345, height: 1 }]);
    assert.equal(viaRpc.addressUtxos, undefined);

    // fees: 0.00002 BTC/kvB = 2 sat/vB; Esplora's table picks the nearest target at or below
    assert.deepEqual(await viaRpc.feeEstimate(6), { satPerVb: 2, blocks: 6 });
    assert.deepEqual(await viaEsplora.feeEstimate(10), { satPerVb: 2, blocks: 6 });
    fake.feeRate = undefined;
    assert.equal(await viaRpc.feeEstimate(6), undefined);
    assert.equal(await viaEsplora.feeEstimate(6), undefined);

    const tt = await Promise.all([viaRpc.tipTime(), viaEsplora.tipTime()]);
    assert.deepEqual(tt[1], tt[0]);
    assert.equal(tt[0]!.hash, fake.tipHash);
    assert.equal(tt[0]!.time, fake.blockByHash(fake.tipHash)!.block.header.time);
  } finally {
    await fake.stop();
  }
});

test('faults: a wrong block, a block that does not link, garbage, oversize answers, timeouts, a vanished node, bad credentials', async () => {
  const fake = await FakeBitcoind.start({ stallMs: 10_000 });
  try {
    // generous timeouts for the answers that must arrive (a loaded machine), short ones only for the stall
    const { rest, rpc, esplora, all } = sourcesOf(fake);
    const impatient = sourcesOf(fake, 500).all;
    const [b1, b2] = fake.mineEmpty(2);
    // a wrong block for a hash is caught by block() (the hash check), whatever the transport
    fake.faults.wrongBlock.set(b2!.hash, b1!.hash);
    for (const s of all) await assert.rejects(s.block(b2!.hash), isErr('UPSTREAM_FAILED', new RegExp(`asked for block ${b2!.hash}, got block ${b1!.hash}`)));
    fake.faults.wrongBlock.clear();

    // a block with a real spell tx whose witness (where the spell lives) is stripped keeps its
    // hash and merkle root: BIP141's witness commitment catches it, on every transport
    const spell = loadVector(VECTOR_SETS.valid[6]); // v7: the spell is in the Taproot witness
    const withSpell = fake.mine([spell.bytes, fillerTx(1, 3)[0]!.bytes]);
    for (const which of [(i: number) => i === 1, (i: number) => i > 0, () => true]) {
      fake.faults.stripWitness.set(withSpell.hash, which);
      for (const s of all) await assert.rejects(s.block(withSpell.hash), isErr('UPSTREAM_FAILED', /witness/), s.name);
    }
    fake.faults.stripWitness.clear();
    for (const s of all) assert.equal((await s.block(withSpell.hash)).txs[1]!.txid, spell.txid, s.name);

    // a block that does not link is returned as it is (checked against its own hash): the follower sees the break
    const odd = fake.mineUnlinked();
    for (const s of all) {
      const blk = await s.block(odd.hash);
      assert.equal(blk.header.hash, odd.hash);
      assert.equal(headerHash(blk.header.raw), odd.hash);
      assert.notEqual(blk.header.prevHash, await s.hashAt(odd.height - 1));
    }

    // garbage answers
    fake.faults.garbage = true;
    for (const s of all) {
      await assert.rejects(s.tip(), isErr('UPSTREAM_FAILED'), s.name);
      await assert.rejects(s.block(b1!.hash), isErr('UPSTREAM_FAILED'), s.name);
      await assert.rejects(s.mempoolTxids(), isErr('UPSTREAM_FAILED'), s.name);
    }
    fake.faults.garbage = false;

    // answers larger than any block are cut off while streaming
    fake.faults.oversize = true;
    for (const s of all) await assert.rejects(s.block(b1!.hash), isErr('UPSTREAM_FAILED', /more than \d+ bytes/), s.name);
    await assert.rejects(rpc.tip(), isErr('UPSTREAM_FAILED', /more than \d+ bytes/));
    fake.faults.oversize = false;

    // no answer in time
    fake.faults.stall = true;
    for (const s of impatient) {
      await assert.rejects(s.tip(), isErr('UPSTREAM_UNAVAILABLE', /timed out/), s.name);
      await assert.rejects(s.block(b1!.hash), isErr('UPSTREAM_UNAVAILABLE', /timed out/), s.name);
    }
    fake.faults.stall = false;

    // the node vanishes, then comes back on the same port
    await fake.disappear();
    for (const s of all) await assert.rejects(s.tip(), isErr('UPSTREAM_UNAVAILABLE'), s.name);
    await fake.comeBack();
    for (const s of all) assert.equal((await s.tip()).hash, odd.hash);
    assert.equal((await rest.block(b1!.hash)).header.hash, b1!.hash);
    assert.equal((await esplora.block(b1!.hash)).header.hash, b1!.hash);

    // wrong credentials are refused, and say so
    const wrong = blockSourceFromConfig({ rpcUrl: fake.rpcUrl, rpcUser: 'x', rpcPassword: 'y', timeoutMs: 2000 })!;
    await assert.rejects(wrong.tip(), isErr('UPSTREAM_FAILED', /refused the RPC credentials \(401\)/));
  } finally {
    await fake.stop();
  }
});

test('network: Core chain names and genesis hashes map to networks; unknown ones are refused', async () => {
  const { networkOfCoreChain, networkOfGenesis } = await import('./btc-source.js');
  assert.deepEqual(
    ['main', 'test', 'testnet4', 'signet', 'regtest'].map((c) => networkOfCoreChain(c, 'n').name),
    ['mainnet', 'testnet', 'testnet4', 'signet', 'regtest'],
  );
  assert.throws(() => networkOfCoreChain('liquid', 'n'), isErr('UPSTREAM_FAILED', /unknown chain/));
  assert.throws(() => networkOfCoreChain('__proto__', 'n'), isErr('UPSTREAM_FAILED'));
  assert.equal(networkOfGenesis(GENESIS.testnet4, 'n'), BITCOIN_NETWORKS.testnet4);
  assert.throws(
    () => networkOfGenesis('00'.repeat(32), 'n'),
    isErr('UPSTREAM_FAILED', /is no known network's \(a custom chain\): name its network with --network \(mainnet, testnet, testnet4, signet, regtest\)$/),
  );
  const fake = await FakeBitcoind.start({ auth: 'none' });
  const main = await FakeBitcoind.start({ auth: 'none', network: 'mainnet' });
  try {
    assert.equal((await new EsploraBlockSource(fake.esploraUrl).network()).name, 'regtest');
    assert.equal((await new EsploraBlockSource(fake.esploraUrl, { network: BITCOIN_NETWORKS.regtest }).network()).name, 'regtest');
    assert.equal((await new EsploraBlockSource(main.esploraUrl).network()).name, 'mainnet');
    assert.equal((await new RpcBlockSource(rpcNodeFromConfig({ rpcUrl: main.rpcUrl })!).network()).name, 'mainnet');
    // a configured network that the genesis block contradicts is refused (a mainnet URL given as testnet4)
    await assert.rejects(
      new EsploraBlockSource(main.esploraUrl, { network: BITCOIN_NETWORKS.testnet4 }).network(),
      isErr('CONFIG', /--network testnet4, but .* serves mainnet \(its genesis block 000000000019d6/),
    );
    await assert.rejects(new EsploraBlockSource(fake.esploraUrl, { network: BITCOIN_NETWORKS.signet }).network(), isErr('CONFIG', /serves regtest/));
    // a URL that is no Esplora API (a 404, a web page: the site without its /api) says what it should be
    const site = http.createServer((req, res) => (req.url?.startsWith('/nope/') ? res.writeHead(404).end() : res.end('<html>a web page</html>')));
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    try {
      const base = `http://127.0.0.1:${(site.address() as { port: number }).port}`;
      const hint = /: is it an Esplora API base\? \(ESPLORA_URL \/ --esplora-url, e\.g\. https:\/\/mempool\.space\/testnet4\/api with its \/api\)$/;
      for (const url of [`${base}/nope`, base])
        await assert.rejects(
          new EsploraBlockSource(url).network(),
          (e: unknown) => isErr('UPSTREAM_FAILED', hint)(e) && hint.test((e as CharmsError).fullMessage),
        );
    } finally {
      site.close();
    }
  } finally {
    await fake.stop();
    await main.stop();
  }
});
