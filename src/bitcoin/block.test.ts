import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CharmsError } from '../errors.js';
import { fromHex, toHex } from '../util/bytes.js';
import { parseBlock, serializeBlock } from './block.js';
import { parseTx, serializeTx, txidHex } from './tx.js';
import { readSharedJson, readSharedText, sharedOrSkip } from '../testing/shared.js';

// The genesis block of Bitcoin mainnet: a real block whose hash and merkle root everyone knows.
const GENESIS =
  '0100000000000000000000000000000000000000000000000000000000000000000000003ba3edfd7a7b12b27ac72c3e67768f617fc81bc3888a51323a9fb8aa4b1e5e4a29ab5f49ffff001d1dac2b7c' +
  '0101000000010000000000000000000000000000000000000000000000000000000000000000ffffffff4d04ffff001d0104455468652054696d65732030332f4a616e2f32303039204368616e63656c6c6f72206f6e206272696e6b206f66207365636f6e64206261696c6f757420666f722062616e6b73ffffffff0100f2052a01000000434104678afdb0fe5548271967f1a67130b7105cd6a828e03909a67962e0ea1f61deb649f6bc3f4cef38c4f35504e51ec112de5c384df7ba0b8d578a4c702b6bf11d5fac00000000';
const GENESIS_HASH = '000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f';

const failsUpstream = (f: () => unknown, re: RegExp) =>
  assert.throws(f, (e: unknown) => e instanceof CharmsError && e.code === 'UPSTREAM_FAILED' && re.test(e.message));

test('the genesis block parses, hashes to its known hash and matches its merkle root', () => {
  const b = parseBlock(fromHex(GENESIS), GENESIS_HASH);
  assert.equal(b.header.hash, GENESIS_HASH);
  assert.equal(b.header.prevHash, '0'.repeat(64));
  assert.equal(b.header.time, 1231006505);
  assert.equal(b.txs.length, 1);
  assert.equal(b.txs[0]!.txid, '4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b');
  assert.equal(toHex(b.txs[0]!.raw), GENESIS.slice(162));
});

test('a block from another hash, a changed byte, trailing bytes or a truncated block are refused', () => {
  const raw = fromHex(GENESIS);
  failsUpstream(() => parseBlock(raw, '00'.repeat(32)), /asked for block/);
  const flipped = raw.slice();
  flipped[200] = flipped[200]! ^ 1; // inside the coinbase: the merkle root no longer matches
  failsUpstream(() => parseBlock(flipped), /merkle root/);
  failsUpstream(() => parseBlock(new Uint8Array([...raw, 0])), /trailing/);
  failsUpstream(() => parseBlock(raw.subarray(0, raw.length - 3)), /unexpected end/);
  failsUpstream(() => parseBlock(raw.subarray(0, 50)), /too short/);
});

test('built blocks of real segwit and legacy vector transactions split back into the same transactions and txids', (t) => {
  if (!sharedOrSkip(t)) return;
  const hexes = readSharedJson<{ tx_hex: string }[]>('vectors', 'bitcoin-witness-era-spell-txs.json').map((x) => x.tx_hex);
  hexes.push(readSharedText('vectors', 'chain', '4125a400a51213b256b3b8087717e429712787d943e65f045063f4ea011bfe36.bitcoin.hex').trim());
  assert.ok(hexes.length >= 2, 'vector transactions found');
  const coinbase = serializeTx(parseTx(fromHex(GENESIS.slice(162))));
  const all = [coinbase, ...hexes.map((h) => fromHex(h))];
  const block = serializeBlock({ prevHash: GENESIS_HASH, time: 1_700_000_000 }, all);
  const b = parseBlock(block);
  assert.equal(b.header.prevHash, GENESIS_HASH);
  assert.deepEqual(
    b.txs.map((x) => toHex(x.raw)),
    all.map(toHex),
  );
  assert.deepEqual(
    b.txs.map((x) => x.txid),
    all.map((x) => txidHex(parseTx(x))),
  );
  // The same transaction twice keeps a valid-looking root only through duplication: refused.
  failsUpstream(() => parseBlock(serializeBlock({ prevHash: GENESIS_HASH, time: 1 }, [coinbase, all[1]!, all[1]!])), /twice/);
});
