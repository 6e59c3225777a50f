import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readSharedJson, readSharedText, sharedOrSkip } from '../testing/shared.js';
import { fromHex } from '../util/bytes.js';
import { CharmsError } from '../errors.js';
import { parseYaml } from '../codec/yaml.js';
import { chainTxFromValue } from '../model/request.js';
import { assertCardanoFinality, verifyCardanoFinality } from './finality.js';
import { FINALITY_VKEY_HEX } from './scripts-data.js';

const code = (c: string) => (e: unknown) => e instanceof CharmsError && e.code === c;

test('the Scrolls finality signature over the body hash verifies; tampering does not', (t) => {
  if (!sharedOrSkip(t)) return;
  const d = readSharedJson('vectors', 'cardano-finality-tx-decoded.json');
  assert.equal(FINALITY_VKEY_HEX, d.finality_vkey);
  const tx = fromHex(d.tx_hex);
  const sig = fromHex(d.finality_signature);
  assert.equal(verifyCardanoFinality(tx, sig), true);
  assertCardanoFinality(tx, sig);
  for (const i of [0, 31, 32, 63]) {
    const bad = Uint8Array.from(sig);
    bad[i]! ^= 1;
    assert.equal(verifyCardanoFinality(tx, bad), false, `sig byte ${i}`);
    assert.throws(() => assertCardanoFinality(tx, bad), code('PROOF_INVALID'));
  }
  // a different transaction (the charms-lib variant of the same spell) is not covered
  const other = fromHex(readSharedJson('vectors', 'cardano-v11-tx.json').cardano);
  assert.equal(verifyCardanoFinality(other, sig), false);
  // only the body is signed over: flipping is_valid (outside the body) keeps the signature valid
  const flipped = Uint8Array.from(tx);
  const isValidAt = flipped.length - 2; // ... f5 f6 : is_valid true, auxiliary_data null
  assert.equal(flipped[isValidAt], 0xf5);
  flipped[isValidAt] = 0xf4;
  assert.equal(verifyCardanoFinality(flipped, sig), true);
  assert.throws(() => verifyCardanoFinality(tx, sig.subarray(0, 63)), code('INVALID_INPUT'));
  assert.throws(() => verifyCardanoFinality(fromHex('00'), sig), code('INVALID_TX'));
});

test('the !cardano {tx, signature} prev-tx form from the reference tests', (t) => {
  if (!sharedOrSkip(t)) return;
  const y = parseYaml(readSharedText('vectors', 'chain', '712fcb00421d163794c22eef627c5e49f3d3f19ea95953871f90286e1bf6f66c.cardano.finality.yaml'));
  const ct = chainTxFromValue(y, 'prev');
  assert.ok(ct.chain === 'cardano' && ct.signature !== undefined);
  assert.equal(ct.hex, readSharedText('vectors', 'chain', '712fcb00421d163794c22eef627c5e49f3d3f19ea95953871f90286e1bf6f66c.cardano.hex').trim());
  assert.equal(verifyCardanoFinality(fromHex(ct.hex), fromHex(ct.signature)), true);
});
