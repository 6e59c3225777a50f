import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sha256 } from '@noble/hashes/sha2.js';
import {
  GROTH16_VKS_HEX,
  MOCK_GROTH16_PK_HEX,
  MOCK_GROTH16_VK_HEX,
  MOCK_SPELL_VK_HEX,
  groth16KeyFor,
  spellVkFor,
  vkRootFor,
  type Groth16KeyName,
} from './constants.js';
import { parseGnarkVerifyingKey } from './gnark.js';
import { publicValuesFor } from './public-values.js';
import { CborWriter } from '../codec/cbor.js';
import { CharmsError } from '../errors.js';
import { fromHex, toHex } from '../util/bytes.js';
import { readShared, readSharedJson, sharedOrSkip } from '../testing/shared.js';

// the table of wire-formats.md §3.2 item 6
const SPELL_VKS = [
  '00e9398ac819e6dd281f81db3ada3fe5159c3cc40222b5ddb0e7584ed2327c5d',
  '009f38f590ebca4c08c1e97b4064f39e4cd336eea4069669c5f5170a38a1ff97',
  '00bd312b6026dbe4a2c16da1e8118d4fea31587a4b572b63155252d2daf69280',
  '0034872b5af38c95fe82fada696b09a448f7ab0928273b7ac8c58ba29db774b9',
  '00c707a155bf8dc18dc41db2994c214e93e906a3e97b4581db4345b3edd837c5',
  '00e98665c417bd2e6e81c449af63b26ed5ad5c400ef55811b592450bf62c67cd',
  '005a1df17094445572e4dd474b3e5dd9093936cba62ca3a62bb2ce63d9db8cba',
  '0041d9843ec25ba04797a0ce29af364389f7eda9f7126ef39390c357432ad9aa',
  '00e440d40e331c16bc4c78d2dbc6bb35876e6ea944e943de359a075e07385abc',
  '00713f077ec2bd68157512835dc678053565a889935ecd5789ce2fa097c93ee9',
  '00ccf030317cae019a4cd3c8557b2c5b522050e7e562e3adf287cd5ad596511f',
  '00d41d49f54303acee4e7d064a31e0c9bd2e1bbdb60f39170a1461c71015c308',
  '00cd44537c67da0dc50b88e794deed43c4507a862070ed83c99941789811a6a0',
  '004ef5bd2f6ed0c33b022dcc263bde479421d81a82ca0cb1a99d9ff361f89895',
  '001a2396afb7e376736d9cf82d33c0dec55cb66866bf7f141fdaa92ab70a0506',
  '00425796f4c4fa050043eee14d801b4f935244e44aad6a28de0cd5cb3de0ae52',
];

const isCode = (code: string) => (e: unknown) => e instanceof CharmsError && e.code === code;

test('spell vks per version, the mock vk, and unsupported versions', () => {
  SPELL_VKS.forEach((vk, v) => assert.equal(toHex(spellVkFor(v, false)), vk, `V${v}`));
  for (const v of [0, 6, 15]) assert.equal(toHex(spellVkFor(v, true)), MOCK_SPELL_VK_HEX);
  assert.equal(toHex(sha256(fromHex(MOCK_GROTH16_VK_HEX))), MOCK_SPELL_VK_HEX, 'mock spell vk = sha256(mock vk file)');
  for (const v of [16, -1, 1.5, Number.NaN]) {
    assert.throws(() => spellVkFor(v, false), isCode('UNSUPPORTED'));
    assert.throws(() => groth16KeyFor(v), isCode('UNSUPPORTED'));
  }
  assert.throws(() => spellVkFor(16, true), /unsupported spell version: 16/);
  spellVkFor(3, false)[0] = 0xff; // callers get a copy
  assert.equal(toHex(spellVkFor(3, false)), SPELL_VKS[3]);
});

test('groth16 key, proof prefix and vk root per version', () => {
  const keyOf = Array.from({ length: 16 }, (_, v) => groth16KeyFor(v));
  assert.deepEqual(keyOf, ['v0', 'v1', 'v1', 'v1', 'v4', 'v4', 'v4', 'v4', 'v4', 'v4', 'v4', 'v4', 'v12', 'v12', 'v14', 'v14']);
  const prefixes: Record<Groth16KeyName, string> = { v0: '09069090', v1: '11b6a09d', v4: 'a4594c59', v12: '0e78f4db', v14: '4388a21c' };
  const inputCounts: Record<Groth16KeyName, number> = { v0: 2, v1: 2, v4: 2, v12: 5, v14: 5 };
  for (const name of Object.keys(GROTH16_VKS_HEX) as Groth16KeyName[]) {
    const bytes = fromHex(GROTH16_VKS_HEX[name]);
    assert.equal(toHex(sha256(bytes).subarray(0, 4)), prefixes[name], name);
    const vk = parseGnarkVerifyingKey(bytes);
    assert.equal(vk.k.length - 1, inputCounts[name], name);
    assert.ok(vk.k.every((p) => p !== null));
  }
  for (let v = 0; v < 12; v++) assert.equal(vkRootFor(v), undefined);
  assert.equal(toHex(vkRootFor(13)!), '008cd56e10c2fe24795cff1e1d1f40d3a324528d315674da45d26afb376e8670');
  assert.equal(toHex(vkRootFor(14)!), '002f850ee998974d6cc00e50cd0814b098c05bfade466d28573240d057f25352');
});

test('embedded keys are the published key files, byte for byte', (t) => {
  if (!sharedOrSkip(t)) return;
  for (const name of Object.keys(GROTH16_VKS_HEX) as Groth16KeyName[])
    assert.equal(GROTH16_VKS_HEX[name], toHex(readShared('keys', 'vk', `${name}-groth16_vk.bin`)), name);
  assert.equal(MOCK_GROTH16_VK_HEX, toHex(readShared('keys', 'vk', 'mock-groth16-vk.bin')));
  assert.equal(MOCK_GROTH16_PK_HEX, toHex(readShared('keys', 'mock-groth16-pk.bin')));
});

test('a malformed gnark verifying key is rejected', () => {
  const good = fromHex(GROTH16_VKS_HEX.v4);
  const noFlag = Uint8Array.from(good);
  noFlag[0]! &= 0x3f;
  const tooManyK = Uint8Array.from(good);
  tooManyK[291] = 9;
  for (const bad of [good.subarray(0, 200), noFlag, tooManyK]) assert.throws(() => parseGnarkVerifyingKey(bad), isCode('PROOF_INVALID'));
});

test('publicValuesFor rebuilds the real vectors and frames V15 as array(32)', (t) => {
  const spell = new Uint8Array([0xa1, 0x61, 0x76, 0x0f]); // any CBOR item
  const w = new CborWriter();
  w.arrayHeader(2);
  w.uintArray(spellVkFor(15, false));
  w.raw(spell);
  assert.equal(toHex(publicValuesFor(15, spell, false)), toHex(w.finish()));
  const w14 = new CborWriter();
  w14.arrayHeader(2);
  w14.text(`0x${SPELL_VKS[14]}`);
  w14.raw(spell);
  assert.equal(toHex(publicValuesFor(14, spell, false)), toHex(w14.finish()));
  assert.throws(() => publicValuesFor(0, spell, false), isCode('UNSUPPORTED'));
  assert.throws(() => publicValuesFor(16, spell, false), isCode('UNSUPPORTED'));
  if (!sharedOrSkip(t)) return;
  for (const v of readSharedJson<{ version: number; public_values_hex: string }[]>('vectors', 'groth16-real-btc.json')) {
    const pv = fromHex(v.public_values_hex);
    // [text(66), spell]: the spell starts after 1 + 2 + 66 bytes
    assert.equal(toHex(publicValuesFor(Number(v.version), pv.subarray(69), false)), v.public_values_hex);
  }
  const h = readSharedJson('vectors', 'groth16-mock.json').historical_rust_mock_spell;
  const pv0x = fromHex(h.pv_with_0x_vk_string_hex);
  assert.equal(toHex(publicValuesFor(h.version, pv0x.subarray(69), true)), h.pv_with_0x_vk_string_hex);
});
