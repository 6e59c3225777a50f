import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { merkleBlockTxids, verifyBitcoinFinality } from '../bitcoin/finality.js';
import { parseTx } from '../bitcoin/tx.js';
import { chainTxFromValue } from '../model/request.js';
import { parseYaml } from '../codec/yaml.js';
import { h1 } from '../testing/http.js';
import { indexOverFakeNode, indexServiceOver } from '../testing/index-fake-node.js';
import { TestEngines } from '../testing/index-stores.js';
import { bitcoinVectors } from '../testing/index-vectors.js';
import { readSharedText, sharedOrSkip } from '../testing/shared.js';
import { spendTx } from '../testing/vector-chain.js';
import { fromHex } from '../util/bytes.js';
import type { IndexService } from './service.js';

const engines = new TestEngines();
after(() => engines.close());

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const json = (b: Buffer): Any => JSON.parse(b.toString('utf8'));

/** The real mainnet transaction with a finality proof (vectors/chain, from CharmsDev/charms `src/spell.rs`). */
const FINAL_TX = '0d4fb0b026c366eec15e5abef7e6461d6464d4e24bc91c367ba4c4142cc24fa6';

/** What the wallet's `fetchBtcTxWithProof` fallback builds from an Esplora (its steps, in order), read from `base`. */
async function walletBuild(base: string, txid: string): Promise<{ txHex: string; proofHex: string; headers: string[] }> {
  const text = async (p: string) => {
    const r = await fetch(`${base}${p}`);
    assert.equal(r.status, 200, p);
    return (await r.text()).trim();
  };
  const txHex = await text(`/tx/${txid}/hex`);
  const proofHex = await text(`/tx/${txid}/merkleblock-proof`);
  const status = JSON.parse(await text(`/tx/${txid}`)).status;
  const headers: string[] = [];
  for (let h = status.block_height + 1; h <= status.block_height + 6; h++) headers.push(await text(`/block/${await text(`/block-height/${h}`)}/header`));
  return { txHex, proofHex, headers };
}

test('with-proof: the WithBlockProof the wallet builds, byte for byte, from Core (gettxoutproof) and from Esplora', async (t) => {
  if (!sharedOrSkip(t)) return;
  const e = await engines.engine('sqlite', t);
  if (!e) return;
  const s = await indexOverFakeNode(e);
  const services: IndexService[] = [];
  try {
    // the real vector transaction is in block 2 of 4: it has 3 confirmations, not yet the 6 blocks after it
    const early = await h1(s.port, 'GET', `/v1/wallet/tx/${FINAL_TX}/with-proof?network=regtest`);
    assert.equal(early.status, 404);
    assert.match(json(early.body).error, /has 3 confirmations; its proof needs the 6 blocks after block 2: ask again after block 8/);
    s.fake.mineEmpty(5);
    await s.svc.follower!.syncOnce();
    const wallet = await walletBuild(s.fake.esploraUrl, FINAL_TX);
    // the fake's proof of its block checks with the verifier the reference's vector passes (root against the header)
    const vector = chainTxFromValue(parseYaml(readSharedText('vectors', 'chain', `${FINAL_TX}.bitcoin.finality.yaml`)), FINAL_TX);
    assert.ok(
      vector.chain === 'bitcoin' && vector.proof && verifyBitcoinFinality(vector.hex, vector.proof.proof, vector.proof.headers),
      'the real vector verifies',
    );
    assert.equal(vector.hex, wallet.txHex, 'the real transaction, as mined in the fake');
    assert.ok(merkleBlockTxids(fromHex(wallet.proofHex)).length === 1, "the fake's proof of its block checks (root against the header)");
    assert.equal(wallet.txHex, Buffer.from(bitcoinVectors().get('0d4fb0b0')!.raw).toString('hex'));
    assert.equal(wallet.headers.length, 6);
    const rpcSvc = await indexServiceOver(e, { rpcUrl: s.fake.rpcUrl, rpcCookie: s.fake.cookieFile! });
    services.push(rpcSvc);
    const before = s.fake.calls.get('gettxoutproof') ?? 0;
    for (const [port, via] of [
      [s.port, 'esplora'],
      [rpcSvc.server.port, 'rpc'],
    ] as const) {
      const r = await h1(port, 'GET', `/v1/wallet/tx/${FINAL_TX}/with-proof`);
      assert.equal(r.status, 200, `${via}: ${r.body}`);
      const a = json(r.body);
      assert.deepEqual([a.txid, a.block_height, a.block_hash], [FINAL_TX, 2, s.fake.hashAt(2)], via);
      const p = a.hex_with_proof;
      // the wallet's names (what its claim step reads) and the reference's serde names of BitcoinTx::WithBlockProof
      assert.deepEqual({ txHex: p.txHex, proofHex: p.proofHex, headers: p.headers }, wallet, via);
      assert.deepEqual({ tx: p.tx, proof: p.proof }, { tx: wallet.txHex, proof: wallet.proofHex }, via);
      assert.deepEqual(Object.keys(p).sort(), ['headers', 'proof', 'proofHex', 'tx', 'txHex']);
      // as a prev tx of a prove request ({bitcoin: WithBlockProof}), the form this repository's request parser reads
      const asPrev = chainTxFromValue(parseYaml(JSON.stringify({ bitcoin: { tx: p.tx, proof: p.proof, headers: p.headers } })), 'prev');
      assert.deepEqual(asPrev, { chain: 'bitcoin', hex: wallet.txHex, proof: { proof: wallet.proofHex, headers: wallet.headers } });
    }
    assert.equal(s.fake.calls.get('gettxoutproof'), before + 1, 'the node-backed index asked gettxoutproof');
    assert.ok(s.fake.requests.includes(`/esplora/tx/${FINAL_TX}/merkleblock-proof`), 'the Esplora-backed index asked merkleblock-proof');

    // a proof of another block (the real mainnet one, served for this txid) is refused, not passed on
    s.fake.txOutProofs.set(FINAL_TX, fromHex(vector.chain === 'bitcoin' ? vector.proof!.proof : ''));
    const other = await h1(rpcSvc.server.port, 'GET', `/v1/wallet/tx/${FINAL_TX}/with-proof`);
    assert.equal(other.status, 503, other.body.toString());
    assert.match(json(other.body).error, /not in .* best chain/);
    s.fake.txOutProofs.set(FINAL_TX, fromHex(wallet.proofHex).subarray(0, 90));
    const broken = await h1(rpcSvc.server.port, 'GET', `/v1/wallet/tx/${FINAL_TX}/with-proof`);
    assert.deepEqual([broken.status, json(broken.body).code], [502, 'UPSTREAM_FAILED']);
    s.fake.txOutProofs.clear();

    for (const [path, status] of [
      [`/v1/wallet/tx/${'ab'.repeat(32)}/with-proof`, 404],
      ['/v1/wallet/tx/xyz/with-proof', 400],
      [`/v1/wallet/tx/${FINAL_TX}/with-proof?network=mainnet`, 404],
    ] as const) {
      const r = await h1(s.port, 'GET', path);
      assert.equal(r.status, status, path);
      assert.ok(json(r.body).code, path);
    }
  } finally {
    for (const x of services) await x.close();
    await s.close();
  }
});

test('outspend: charm outputs from the index, others from Esplora, else gettxout (spender unknown)', async (t) => {
  if (!sharedOrSkip(t)) return;
  const e = await engines.engine('sqlite', t);
  if (!e) return;
  const s = await indexOverFakeNode(e);
  const services: IndexService[] = [];
  try {
    // a charm output of the first vector spent in a block, another one spent in the mempool
    const charmTx = json((await h1(s.port, 'GET', '/v1/txs/1acee7fb7c922b205e7c63abffe39a53527d4d7bbb0e5327a9b72350115a7ebb')).body);
    assert.ok(charmTx.outputs.length >= 1);
    const first = charmTx.outputs[0];
    const spent = spendTx(
      [
        { txid: 'ef'.repeat(32), vout: 9 },
        { txid: first.txid, vout: first.vout },
      ],
      { tag: 3 },
    );
    const spentAt = s.fake.mine([spent.bytes]);
    await s.svc.follower!.syncOnce();
    const esplora = async (txid: string, vout: number): Promise<Any> =>
      json(Buffer.from(await (await fetch(`${s.fake.esploraUrl}/tx/${txid}/outspend/${vout}`)).arrayBuffer()));
    const ours = async (port: number, txid: string, vout: number) => {
      const r = await h1(port, 'GET', `/v1/tx/${txid}/outspend/${vout}`);
      assert.equal(r.status, 200, r.body.toString());
      return json(r.body);
    };
    // every output of the vector blocks: a charm output's answer is the index's, the rest Esplora's, and both are the node's truth
    let fromIndex = 0;
    let spentFromIndex = 0;
    const unspentCharms: { txid: string; vout: number }[] = [];
    for (let h = 1; h <= s.fake.height; h++)
      for (const tx of s.fake.blockByHash(s.fake.hashAt(h)!)!.block.txs.slice(1))
        for (let vout = 0; vout < parseTx(tx.raw).outputs.length; vout++) {
          const a = await ours(s.port, tx.txid, vout);
          const { source, ...shape } = a;
          assert.deepEqual(shape, await esplora(tx.txid, vout), `${tx.txid}:${vout}`);
          if (source === 'index') {
            fromIndex++;
            if (a.spent) spentFromIndex++;
            else unspentCharms.push({ txid: tx.txid, vout });
          } else assert.equal(source, 'esplora');
        }
    assert.ok(fromIndex >= 3 && spentFromIndex === 1, `${fromIndex} charm outputs, ${spentFromIndex} spent`);
    const spentAnswer = await ours(s.port, first.txid, first.vout);
    assert.deepEqual(spentAnswer, {
      spent: true,
      txid: spent.txid,
      vin: 1,
      status: { confirmed: true, block_height: spentAt.height, block_hash: spentAt.hash },
      source: 'index',
    });

    // a pending spend of a charm output: the mempool overlay's
    const other = unspentCharms[0];
    assert.ok(other, 'an unspent charm output');
    const pending = spendTx([{ txid: other.txid, vout: other.vout }], { tag: 4 });
    s.fake.mempoolAdd(pending.bytes);
    await s.svc.follower!.syncOnce();
    assert.deepEqual(await ours(s.port, other.txid, other.vout), { spent: true, txid: pending.txid, vin: 0, status: { confirmed: false }, source: 'index' });

    // Bitcoin Core only: gettxout tells unspent from spent, and the spender is unknown
    const rpcSvc = await indexServiceOver(e, { rpcUrl: s.fake.rpcUrl, rpcCookie: s.fake.cookieFile! });
    services.push(rpcSvc);
    const plain = s.fake.blockByHash(s.fake.hashAt(spentAt.height)!)!.block.txs[0]!; // the coinbase: unspent
    assert.deepEqual(await ours(rpcSvc.server.port, plain.txid, 0), { spent: false, source: 'bitcoind' });
    // an output of a plain transaction spent by `spent` (its first input names a made-up one: not an output)
    const byCore = await ours(rpcSvc.server.port, first.txid, first.vout);
    assert.equal(byCore.source, 'index', 'a charm output is the index’s on either source');
    const inner = spendTx([{ txid: plain.txid, vout: 0 }], { tag: 5 });
    s.fake.mine([inner.bytes]);
    assert.deepEqual(await ours(rpcSvc.server.port, plain.txid, 0), { spent: true, spender_unknown: true, source: 'bitcoind' });
    assert.deepEqual(await ours(s.port, plain.txid, 0), {
      spent: true,
      txid: inner.txid,
      vin: 0,
      status: { confirmed: true, block_height: s.fake.height, block_hash: s.fake.tipHash },
      source: 'esplora',
    });
    for (const [port, path, status] of [
      [rpcSvc.server.port, `/v1/tx/${'ab'.repeat(32)}/outspend/0`, 404],
      [rpcSvc.server.port, `/v1/tx/${plain.txid}/outspend/7`, 404],
      [s.port, `/v1/tx/${plain.txid}/outspend/4294967296`, 400],
      [s.port, '/v1/tx/zz/outspend/0', 400],
    ] as const) {
      const r = await h1(port, 'GET', path);
      assert.equal(r.status, status, path);
      assert.ok(json(r.body).code, path);
    }
  } finally {
    for (const x of services) await x.close();
    await s.close();
  }
});
