import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { parseTx, serializeTx, txid, txidHex, txVsize, txWeight, wtxid, type BitcoinTx } from './tx.js';
import { readSharedJson, readSharedText, sharedOrSkip, sharedPath } from '../testing/shared.js';
import { fromHex, toHex } from '../util/bytes.js';
import { CharmsError } from '../errors.js';
import { txidToDisplay } from '../model/primitives.js';

const isInvalidTx = (e: unknown) => e instanceof CharmsError && e.code === 'INVALID_TX';
const chainFiles = () => readdirSync(sharedPath('vectors', 'chain')).filter((f) => f.endsWith('.bitcoin.hex'));
const chainHex = (f: string) => readSharedText('vectors', 'chain', f).trim();

test('every Bitcoin chain vector parses and re-serializes byte for byte; txids match the file names', (t) => {
  if (!sharedOrSkip(t)) return;
  let n = 0;
  for (const f of chainFiles()) {
    const hex = chainHex(f);
    const tx = parseTx(fromHex(hex));
    assert.equal(toHex(serializeTx(tx)), hex, f);
    // Tampered copies carry their own txid in expected/neg-N.json.
    const want = f.startsWith('neg-') ? readSharedJson('vectors', 'chain', 'expected', f.replace('.bitcoin.hex', '.json')).txid : f.slice(0, 64);
    assert.equal(txidHex(tx), want, f);
    n++;
  }
  assert.ok(n >= 30, `only ${n} Bitcoin chain vectors`);
});

test('segwit and legacy forms: witness stripping keeps the txid, changes the wtxid', (t) => {
  if (!sharedOrSkip(t)) return;
  const hex = readSharedJson('vectors', 'bitcoin-v12-spell-tx-decoded.json').tx_hex as string;
  const tx = parseTx(fromHex(hex));
  assert.equal(tx.inputs.length, 3);
  assert.equal(tx.outputs.length, 7);
  const legacy = serializeTx(tx, { witness: false });
  const stripped = parseTx(legacy);
  assert.ok(stripped.inputs.every((i) => i.witness.length === 0));
  assert.equal(toHex(serializeTx(stripped)), toHex(legacy));
  assert.equal(txidToDisplay(txid(stripped)), txidHex(tx));
  assert.notEqual(toHex(wtxid(tx)), toHex(txid(tx)));
  assert.equal(toHex(wtxid(stripped)), toHex(txid(stripped)));
  // Weight: 3 × stripped size + full size.
  assert.equal(txWeight(tx), 3 * legacy.length + fromHex(hex).length);
  assert.equal(txVsize(stripped), legacy.length);
});

test('an unsigned legacy-serialized transaction (no witnesses) round-trips', (t) => {
  if (!sharedOrSkip(t)) return;
  const hex = chainHex('acc8e7394517f4424133a2ed98fb9e676d5267df3b4e3167b0412f3333d6eb67.bitcoin.hex');
  const tx = parseTx(fromHex(hex));
  assert.ok(tx.inputs.every((i) => i.witness.length === 0));
  assert.equal(hex.slice(8, 12) === '0001', false);
  assert.equal(toHex(serializeTx(tx)), hex);
});

test('zero-input transactions exist only in the segwit form, as in rust-bitcoin', () => {
  const tx: BitcoinTx = { version: 2, inputs: [], outputs: [{ value: 1000n, script: Uint8Array.of(0x51) }], locktime: 0 };
  const consensus = serializeTx(tx);
  assert.equal(toHex(consensus), '02000000' + '0001' + '00' + '01' + 'e803000000000000' + '0151' + '00000000');
  assert.deepEqual(parseTx(consensus), tx);
  assert.equal(txWeight(tx), 4 * serializeTx(tx, { witness: false }).length + 2);
  // The legacy form of a zero-input tx reads as a segwit marker (its output count as the flag).
  assert.throws(() => parseTx(serializeTx(tx, { witness: false })), isInvalidTx);
  const twoOutputs = { ...tx, outputs: [tx.outputs[0]!, tx.outputs[0]!] };
  assert.throws(() => parseTx(serializeTx(twoOutputs, { witness: false })), /unsupported segwit flag 2/);
});

test('truncated, padded or malformed transactions are INVALID_TX errors, never crashes', (t) => {
  if (!sharedOrSkip(t)) return;
  const hex = readSharedJson('vectors', 'bitcoin-v12-spell-tx-decoded.json').tx_hex as string;
  const b = fromHex(hex);
  for (let cut = 0; cut < b.length; cut += 7) assert.throws(() => parseTx(b.subarray(0, cut)), isInvalidTx, `cut ${cut}`);
  assert.throws(() => parseTx(b.subarray(0, b.length - 1)), isInvalidTx);
  assert.throws(() => parseTx(fromHex(hex + '00')), /1 trailing bytes/);
  // Deterministic garbage: random bytes, and the real tx with single bytes flipped.
  let seed = 12345;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0xff;
  for (let k = 0; k < 300; k++) {
    const junk = Uint8Array.from({ length: rnd() + 1 }, rnd);
    try {
      parseTx(junk);
    } catch (e) {
      assert.ok(isInvalidTx(e), String(e));
    }
    const flipped = Uint8Array.from(b);
    flipped[(rnd() * 4) % b.length]! ^= 0xff;
    try {
      const tx = parseTx(flipped);
      assert.equal(toHex(serializeTx(tx)), toHex(flipped)); // whatever parses must round-trip
    } catch (e) {
      assert.ok(isInvalidTx(e), String(e));
    }
  }
});

test('counts and compact sizes are checked strictly', () => {
  // version 2, 1 input, 1 output (empty scripts), locktime 0
  const input = '11'.repeat(32) + '00000000' + '00' + 'ffffffff';
  const ok = '02000000' + '01' + input + '01' + '0000000000000000' + '00' + '00000000';
  assert.equal(toHex(serializeTx(parseTx(fromHex(ok)))), ok);
  // non-minimal compact size for the input count (fd 0100 instead of 01)
  assert.throws(() => parseTx(fromHex('02000000' + 'fd0100' + input + '01' + '0000000000000000' + '00' + '00000000')), /non-minimal compact size/);
  // an input count promising more than the data holds
  assert.throws(() => parseTx(fromHex('02000000' + 'fe00000010' + input)), /input count \d+ exceeds/);
  // segwit flag set but no witness data
  assert.throws(() => parseTx(fromHex('02000000' + '0001' + '01' + input + '01' + '0000000000000000' + '00' + '00' + '00000000')), /no witnesses present/);
  // a huge script length
  assert.throws(() => parseTx(fromHex('02000000' + '01' + '11'.repeat(32) + '00000000' + 'ffffffffffffffff7f')), isInvalidTx);
});
