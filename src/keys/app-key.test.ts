import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appKeyFileText, appKeyFromSecret, checkAppSignature, parseAppKeyFile, signBinary, verifyBinarySignature, vkOfBinary } from './app-key.js';
import { readSharedJson, sharedOrSkip } from '../testing/shared.js';
import { fromHex, toHex, utf8 } from '../util/bytes.js';

test('app key file, vk and BIP-340 signature match the vectors', (t) => {
  if (!sharedOrSkip(t)) return;
  const v = readSharedJson('vectors', 'app-key-and-signature-vectors.json');
  const key = parseAppKeyFile(v.app_keygen_file_text);
  assert.equal(appKeyFileText(key), v.app_keygen_file_text);
  assert.equal(toHex(key.vk), v.app_vk_pubkey_output);
  const wasm = utf8(v.wasm_bytes_utf8);
  assert.equal(toHex(vkOfBinary(wasm)), v.wasm_sha256);
  const sig = signBinary(key, wasm, new Uint8Array(32));
  const expected = JSON.parse(v.app_sign_json_text);
  assert.equal(toHex(sig.signature), expected.signature);
  assert.ok(verifyBinarySignature(sig, wasm));
  checkAppSignature(key.vk, sig, wasm);
  // another binary, a flipped bit, another key's vk all fail
  assert.equal(verifyBinarySignature(sig, utf8('other')), false);
  const bad = { ...sig, signature: Uint8Array.from(sig.signature) };
  bad.signature[5]! ^= 1;
  assert.equal(verifyBinarySignature(bad, wasm), false);
  assert.throws(() => checkAppSignature(new Uint8Array(32), sig, wasm), /does not equal the vk/);
});

test('random-aux signatures verify; bad secret keys are refused', () => {
  const key = appKeyFromSecret(fromHex('02'.repeat(32)));
  const wasm = utf8('x');
  assert.ok(verifyBinarySignature(signBinary(key, wasm), wasm));
  assert.throws(() => appKeyFromSecret(new Uint8Array(31)), /32 bytes/);
  assert.throws(() => appKeyFromSecret(new Uint8Array(32)), /not a valid/);
  assert.throws(() => parseAppKeyFile('{"secret_key": "zz"}'), /hex/);
});
