import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CharmsError } from '../errors.js';
import { fromHex, toHex } from '../util/bytes.js';
import { parseBlock, serializeBlock } from './block.js';
import { parseTx, serializeTx, txidHex, wtxid } from './tx.js';
import { sha256 } from '../util/sha256.js';
import { stripWitnesses } from '../testing/strip-witness.js';
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
  // the coinbase gained the witness commitment (test below); the others are as given
  assert.equal(b.txs.length, all.length);
  assert.deepEqual(
    b.txs.slice(1).map((x) => toHex(x.raw)),
    all.slice(1).map(toHex),
  );
  assert.deepEqual(
    b.txs.map((x) => x.txid),
    [txidHex(parseTx(b.txs[0]!.raw)), ...all.slice(1).map((x) => txidHex(parseTx(x)))],
  );
  // The same transaction twice keeps a valid-looking root only through duplication: refused.
  failsUpstream(() => parseBlock(serializeBlock({ prevHash: GENESIS_HASH, time: 1 }, [coinbase, all[1]!, all[1]!])), /twice/);
});

test('BIP141: a block of real witness-era spell txs commits to its witnesses; stripped, or with a bad reserved value, it is refused', (t) => {
  if (!sharedOrSkip(t)) return;
  const spells = readSharedJson<{ tx_hex: string }[]>('vectors', 'bitcoin-witness-era-spell-txs.json').map((x) => fromHex(x.tx_hex));
  const legacy = fromHex(readSharedText('vectors', 'chain', 'acc8e7394517f4424133a2ed98fb9e676d5267df3b4e3167b0412f3333d6eb67.bitcoin.hex').trim());
  assert.ok(
    parseTx(legacy).inputs.every((i) => i.witness.length === 0),
    'a legacy tx among them',
  );
  const coinbase = serializeTx(parseTx(fromHex(GENESIS.slice(162))));
  const bytes = serializeBlock({ prevHash: GENESIS_HASH, time: 1_700_000_000 }, [coinbase, legacy, ...spells]);
  const ok = parseBlock(bytes);
  const cb = parseTx(ok.txs[0]!.raw);
  // the commitment is the coinbase's last output, and its witness the 32-byte reserved value
  const commitment = cb.outputs.at(-1)!.script;
  assert.equal(toHex(commitment.subarray(0, 6)), '6a24aa21a9ed');
  assert.deepEqual(
    cb.inputs[0]!.witness.map((w) => w.length),
    [32],
  );
  // the commitment computed independently: the wtxids from tx.ts, the coinbase's as zero
  const wids = [new Uint8Array(32), ...ok.txs.slice(1).map((x) => wtxid(parseTx(x.raw)))];
  let level = wids;
  while (level.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(sha256(sha256(Uint8Array.from([...level[i]!, ...(level[i + 1] ?? level[i]!)]))));
    level = next;
  }
  assert.equal(toHex(commitment.subarray(6)), toHex(sha256(sha256(Uint8Array.from([...level[0]!, ...new Uint8Array(32)])))));

  const sameHashAs = (b: Uint8Array) => {
    assert.equal(toHex(b.subarray(0, 80)), toHex(bytes.subarray(0, 80)), 'header kept');
    assert.notEqual(b.length, bytes.length);
  };
  // one spell tx stripped: txids, merkle root and block hash unchanged, the commitment no longer matches
  const one = stripWitnesses(bytes, (i) => i === 2);
  sameHashAs(one);
  failsUpstream(() => parseBlock(one, ok.header.hash), /bad-witness-merkle-match/);
  // every tx but the coinbase stripped: same
  failsUpstream(
    () =>
      parseBlock(
        stripWitnesses(bytes, (i) => i > 0),
        ok.header.hash,
      ),
    /bad-witness-merkle-match/,
  );
  // all stripped, the coinbase's reserved value too: the commitment output stays, its witness is gone
  failsUpstream(
    () =>
      parseBlock(
        stripWitnesses(bytes, () => true),
        ok.header.hash,
      ),
    /bad-witness-nonce-size/,
  );
  // witness data in a block without a commitment (the coinbase has none)
  const plain = serializeTx(parseTx(fromHex(GENESIS.slice(162))), { witness: false });
  const rest = ok.txs.slice(1).map((x) => x.raw);
  failsUpstream(() => parseBlock(withTxs(bytes, [plain, ...rest])), /unexpected-witness/);
  // a reserved value of another size
  const cb33 = parseTx(ok.txs[0]!.raw);
  cb33.inputs[0]!.witness = [new Uint8Array(33)];
  failsUpstream(() => parseBlock(withTxs(bytes, [serializeTx(cb33), ...rest])), /bad-witness-nonce-size/);
  // legacy-only blocks need no commitment (the genesis block above); a coinbase-only block either
  assert.equal(parseBlock(serializeBlock({ prevHash: GENESIS_HASH, time: 1 }, [plain, legacy])).txs.length, 2);
});

/** `block`'s header with the merkle root of `txs` (their txids), then `txs`: no commitment added. */
function withTxs(block: Uint8Array, txs: Uint8Array[]): Uint8Array {
  let level = txs.map((x) => sha256(sha256(serializeTx(parseTx(x), { witness: false }))));
  while (level.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(sha256(sha256(Uint8Array.from([...level[i]!, ...(level[i + 1] ?? level[i]!)]))));
    level = next;
  }
  const header = block.slice(0, 80);
  header.set(level[0]!, 36);
  return Uint8Array.from([...header, txs.length, ...txs.flatMap((x) => [...x])]);
}
