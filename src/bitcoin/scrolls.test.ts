import { test } from 'node:test';
import assert from 'node:assert/strict';
import { schnorr } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { fromHex, toHex } from '../util/bytes.js';
import { parseSpellText } from '../model/inputs.js';
import {
  bindScrollOutputs,
  checkScrollOutputs,
  scrollOutputsMessage,
  SCROLLS_ADDRS_PUBKEY_HEX,
  verifySignedScrollOutputs,
  type SignedScrollOutputs,
} from './scrolls.js';

const A = `0014${'aa'.repeat(20)}`;
const B = `0014${'bb'.repeat(20)}`;

test("the signed message is ciborium's CBOR of BTreeMap<u32, String>: ascending uint keys, text values", () => {
  // {1: A, 300: B} given out of order
  const m = scrollOutputsMessage(
    new Map([
      [300, B],
      [1, A],
    ]),
  );
  const text = (s: string) => `782c${toHex(new TextEncoder().encode(s))}`; // text(44)
  assert.equal(toHex(m), `a2` + `01` + text(A) + `19012c` + text(B));
});

test('the protocol key is a valid BIP-340 x-only key', () => {
  assert.doesNotThrow(() => schnorr.utils.lift_x(BigInt(`0x${SCROLLS_ADDRS_PUBKEY_HEX}`)));
});

test('signed map: signature, P2WPKH-only scripts, keys = tx.scrolls, dest = signed script; binding fills dests', () => {
  const sk = schnorr.utils.randomSecretKey();
  const pk = schnorr.getPublicKey(sk);
  const sign = (m: Map<number, string>): SignedScrollOutputs => ({ scriptPubkeys: m, signature: toHex(schnorr.sign(sha256(scrollOutputsMessage(m)), sk)) });
  const good = sign(new Map([[1, A]]));
  verifySignedScrollOutputs(good, pk);
  assert.throws(() => verifySignedScrollOutputs(good), /does not verify/, 'the protocol key does not verify a test signature');
  assert.throws(() => verifySignedScrollOutputs({ ...good, scriptPubkeys: new Map([[1, B]]) }, pk), /does not verify/);
  assert.throws(() => verifySignedScrollOutputs(sign(new Map([[1, '']])), pk), /not a P2WPKH script/);
  assert.throws(() => verifySignedScrollOutputs(sign(new Map([[1, '51']])), pk), /not a P2WPKH script/);

  const spell = parseSpellText(
    `{"version":15,"tx":{"ins":["${'11'.repeat(32)}:0"],"outs":[{},{}],"coins":[{"amount":1000,"dest":"${B}"},{"amount":1000,"dest":""}],"scrolls":[1]},"app_public_inputs":{}}`,
  );
  assert.equal(checkScrollOutputs(spell, undefined), false, 'listed but not bound');
  assert.throws(() => checkScrollOutputs(spell, good, pk), /signed scriptPubKey \(0014aa.*\) does not match tx\.coins\[1\]\.dest \(\)/);
  const bound = bindScrollOutputs(spell, good, pk);
  assert.equal(toHex(bound.tx.coins![1]!.dest), A);
  assert.deepEqual(bound.tx.coins![0]!.dest, fromHex(B));
  assert.equal(checkScrollOutputs(bound, good, pk), true);
  assert.throws(() => bindScrollOutputs(spell, sign(new Map([[0, A]])), pk), /map keys \(\[0\]\) do not match tx\.scrolls \(\[1\]\)/);
});
