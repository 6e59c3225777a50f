/**
 * The fast block path (parseBlock by offsets with in-place hashing, the one-scan spell prefilter,
 * inputs read in place) against the straightforward one (the strict transaction parser per
 * transaction, a per-transaction byte search, the pure-JS hash): on blocks of the real vector
 * transactions and fabricated ones, segwit and legacy mixed, a coinbase with a witness
 * commitment, odd and even transaction counts, and a `spell` that straddles two transactions.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseBlock, serializeBlock, type Block } from '../bitcoin/block.js';
import { parseTx, serializeTx, txidHex, type BitcoinTx } from '../bitcoin/tx.js';
import { fromHex, reversed, toHex } from '../util/bytes.js';
import { pureSha256 } from '../util/sha256.js';
import { coinbase, plainTx } from '../testing/memory-chain.js';
import { bitcoinVectors } from '../testing/index-vectors.js';
import { sharedOrSkip } from '../testing/shared.js';
import { blockWrite, maySpell, spellCandidates, spentOutpoints } from './block-write.js';
import { outpointDigestOf, type BlockInputs, type InputWrite } from './store.js';

const sha256d = (b: Uint8Array) => pureSha256(pureSha256(b));

/** The merkle root by the book: pairs of txids (internal order) hashed level by level. */
function referenceRoot(txs: Uint8Array[]): string {
  let level = txs.map((t) => reversed(fromHex(txidHex(parseTx(t)))));
  while (level.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(sha256d(new Uint8Array([...level[i]!, ...(level[i + 1] ?? level[i]!)])));
    level = next;
  }
  return toHex(level[0]!);
}

/** What blockWrite must find, from the strict parser: candidates (raw hex) and every input. */
function reference(txs: Uint8Array[]): { candidates: string[]; inputs: InputWrite[] } {
  const inputs: InputWrite[] = [];
  txs.forEach((raw, index) => {
    if (index === 0) return;
    const tx = parseTx(raw);
    const txid = txidHex(tx);
    tx.inputs.forEach((i, vin) => inputs.push({ txid, txIndex: index, vin, prevTxid: toHex(reversed(i.txid)), prevVout: i.vout }));
  });
  const candidates = txs.filter((raw, i) => i > 0 && toHex(raw).includes(toHex(new TextEncoder().encode('spell')))).map(toHex);
  return { candidates, inputs };
}

const allInputs = (x: BlockInputs): InputWrite[] => Array.from({ length: x.length }, (_, i) => x.at(i));

async function checkBlock(given: Uint8Array[], what: string): Promise<Block> {
  const bytes = serializeBlock({ prevHash: '11'.repeat(32), time: 1_700_000_000 }, given);
  const block = parseBlock(bytes);
  // serializeBlock adds a witness commitment to the coinbase of a block with witnesses
  const txs = [block.txs[0]!.raw, ...given.slice(1)];
  assert.equal(toHex(block.header.merkleRoot), referenceRoot(txs), `${what}: merkle root`);
  assert.deepEqual(
    block.txs.map((t) => [t.index, t.txid, toHex(t.raw)]),
    txs.map((t, i) => [i, txidHex(parseTx(t)), toHex(t)]),
    `${what}: transactions and txids`,
  );
  const ref = reference(txs);
  const seen: Uint8Array[] = [];
  const w = await blockWrite(block, 7, async (raws) => (seen.push(...raws), raws.map(() => undefined)));
  assert.deepEqual(seen.map(toHex), ref.candidates, `${what}: spell candidates`);
  assert.deepEqual(
    spellCandidates(block),
    block.txs.filter((t) => t.index > 0 && maySpell(t.raw)).map((t) => t.index),
  );
  const inputs = w.inputs as BlockInputs;
  assert.deepEqual(allInputs(inputs), ref.inputs, `${what}: inputs`);
  ref.inputs.forEach((i, k) => assert.equal(inputs.digest(k), outpointDigestOf(Number.parseInt(i.prevTxid.slice(0, 8), 16), i.prevVout)));
  for (const [i, t] of txs.entries())
    if (i > 0)
      assert.deepEqual(
        spentOutpoints(t),
        parseTx(t).inputs.map((x) => ({ txid: toHex(reversed(x.txid)), vout: x.vout })),
      );
  return block;
}

/**
 * A segwit coinbase as miners make them: the witness reserved value (serializeBlock adds the
 * OP_RETURN witness commitment, which depends on the block's other transactions).
 */
function segwitCoinbase(height: number): Uint8Array {
  const tx: BitcoinTx = {
    version: 2,
    inputs: [
      {
        txid: new Uint8Array(32),
        vout: 0xffffffff,
        scriptSig: Uint8Array.of(3, height & 0xff, height >> 8, 0),
        sequence: 0xffffffff,
        witness: [new Uint8Array(32)],
      },
    ],
    outputs: [{ value: 312_500_000n, script: Uint8Array.of(0x51) }],
    locktime: 0,
  };
  return serializeTx(tx);
}

const P2TR = Uint8Array.from([0x51, 0x20, ...new Array(32).fill(9)]);
const filler = (i: number, locktime = 0): Uint8Array =>
  plainTx(
    [
      { txid: (i + 1).toString(16).padStart(64, '0'), vout: i % 3 },
      { txid: `${(i * 7919).toString(16).padStart(8, 'a')}${'c'.repeat(56)}`, vout: 0xffffffff - i },
    ],
    [{ script: P2TR, sats: BigInt(1000 + i) }],
    locktime,
  );

test('fabricated blocks: 1 to 301 transactions (odd and even), legacy and segwit coinbases, split, hashed and read as the strict parser does', async () => {
  for (const n of [0, 1, 2, 3, 4, 7, 64, 65, 300]) {
    const body = Array.from({ length: n }, (_, i) => filler(i));
    await checkBlock([coinbase(n + 1, 5), ...body], `${n + 1} txs, legacy coinbase`);
    await checkBlock([segwitCoinbase(n + 1), ...body], `${n + 1} txs, segwit coinbase`);
  }
});

test('a "spell" that straddles two transactions is no candidate; one inside a transaction is', async () => {
  // tx A's locktime ends with "sp", tx B's version starts with "ell": the block has "spell", no transaction does
  const a = filler(1, 0x70730000);
  const b = parseTx(filler(2));
  const bRaw = serializeTx({ ...b, version: 0x006c6c65 });
  const inside = plainTx([{ txid: '22'.repeat(32), vout: 0 }], [{ script: Uint8Array.from([0x6a, 5, ...new TextEncoder().encode('spell')]), sats: 0n }]);
  const block = await checkBlock([coinbase(9, 9), a, bRaw, inside, filler(3)], 'straddle');
  assert.deepEqual(spellCandidates(block), [3]);
  assert.ok(new TextDecoder().decode(block.bytes).includes('spell'));
});

test('blocks of the real vector transactions (segwit spells of every version, legacy ones) mixed with fabricated ones', async (t) => {
  if (!sharedOrSkip(t)) return;
  const v = [...bitcoinVectors().values()].map((x) => x.raw);
  assert.ok(v.length >= 20, 'vector transactions found');
  const segwit = v.filter((r) => r[4] === 0 && r[5] === 1).length;
  assert.ok(segwit > 0 && segwit < v.length, 'both segwit and legacy vectors');
  await checkBlock([segwitCoinbase(1), ...v], 'all vectors');
  // interleaved with fillers, in a rotating order, with both coinbases
  for (let r = 0; r < 5; r++) {
    const mixed: Uint8Array[] = [];
    v.forEach((_, i) => mixed.push(v[(i + r * 3) % v.length]!, filler(100 * r + i)));
    await checkBlock([r % 2 ? coinbase(r, r) : segwitCoinbase(r), ...mixed.slice(0, mixed.length - r)], `vectors rotation ${r}`);
  }
});
