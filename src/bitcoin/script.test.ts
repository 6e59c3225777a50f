import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildScript, instructions, opcodeName, OP_ENDIF, OP_IF, OP_RETURN, parseScript, pushData, scriptAsm } from './script.js';
import { fromHex, toHex } from '../util/bytes.js';
import { CharmsError } from '../errors.js';

test('minimal pushes: direct, PUSHDATA1, PUSHDATA2, PUSHDATA4', () => {
  assert.equal(toHex(pushData(new Uint8Array(0))), '00');
  assert.equal(toHex(pushData(Uint8Array.of(7))), '0107'); // no OP_7: rust-bitcoin push_slice
  assert.equal(toHex(pushData(new Uint8Array(75))).slice(0, 2), '4b');
  assert.equal(toHex(pushData(new Uint8Array(76))).slice(0, 4), '4c4c');
  assert.equal(toHex(pushData(new Uint8Array(255))).slice(0, 4), '4cff');
  assert.equal(toHex(pushData(new Uint8Array(256))).slice(0, 6), '4d0001');
  assert.equal(toHex(pushData(new Uint8Array(918))).slice(0, 6), '4d9603'); // the V12 payload push
  assert.equal(toHex(pushData(new Uint8Array(65536))).slice(0, 10), '4e00000100');
  for (const n of [0, 1, 75, 76, 255, 256, 65535, 65536]) {
    const data = Uint8Array.from({ length: n }, (_, i) => i & 0xff);
    const [ins, ...rest] = parseScript(pushData(data));
    assert.equal(rest.length, 0);
    assert.equal(toHex(ins!.push!), toHex(data), `push of ${n}`);
  }
});

test('instructions: opcodes, pushes (also non-minimal ones) and OP_0 as an empty push', () => {
  const s = fromHex('00' + '63' + '4c03616263' + '4d0200ffff' + '4e01000000aa' + '68' + '6a');
  const got = parseScript(s).map((i) => (i.push ? `push:${toHex(i.push)}` : opcodeName(i.op)));
  assert.deepEqual(got, ['push:', 'OP_IF', 'push:616263', 'push:ffff', 'push:aa', 'OP_ENDIF', 'OP_RETURN']);
  assert.equal(toHex(buildScript([OP_RETURN, Uint8Array.of(1, 2), OP_IF, OP_ENDIF])), '6a0201026368');
});

test('truncated pushes fail at the point of failure (earlier instructions stay readable)', () => {
  for (const bad of ['4c', '4d01', '4e010000', '0201', '4c02ff', '4d0300aabb', '4e02000000aa']) {
    const it = instructions(fromHex('63' + bad));
    assert.equal(it.next().value?.op, OP_IF);
    assert.throws(
      () => it.next(),
      (e: unknown) => e instanceof CharmsError && e.code === 'INVALID_TX' && /runs past the end/.test(e.message),
      bad,
    );
  }
});

test('opcode names are rust-bitcoin 0.32 names', () => {
  const cases: [number, string][] = [
    [0x00, 'OP_PUSHBYTES_0'],
    [0x4b, 'OP_PUSHBYTES_75'],
    [0x4c, 'OP_PUSHDATA1'],
    [0x4f, 'OP_PUSHNUM_NEG1'],
    [0x50, 'OP_RESERVED'],
    [0x51, 'OP_PUSHNUM_1'],
    [0x60, 'OP_PUSHNUM_16'],
    [0x61, 'OP_NOP'],
    [0x63, 'OP_IF'],
    [0x6a, 'OP_RETURN'],
    [0x7e, 'OP_CAT'],
    [0x92, 'OP_0NOTEQUAL'],
    [0x9f, 'OP_LESSTHAN'],
    [0xa2, 'OP_GREATERTHANOREQUAL'],
    [0xac, 'OP_CHECKSIG'],
    [0xb1, 'OP_CLTV'],
    [0xb2, 'OP_CSV'],
    [0xb9, 'OP_NOP10'],
    [0xba, 'OP_CHECKSIGADD'],
    [0xbb, 'OP_RETURN_187'],
    [0xfe, 'OP_RETURN_254'],
    [0xff, 'OP_INVALIDOPCODE'],
  ];
  for (const [op, name] of cases) assert.equal(opcodeName(op), name);
});

test('scriptAsm writes scripts as Bitcoin Core’s scriptPubKey.asm', () => {
  const cases: [string, string][] = [
    // from Bitcoin Core's test/util/data (txcreatedata2.json, txcreatescript4.json, txcreatemultisig1.json)
    ['76a9141fc11f39be1729bf973a7ab6a615ca4729d6457488ac', 'OP_DUP OP_HASH160 1fc11f39be1729bf973a7ab6a615ca4729d64574 OP_EQUALVERIFY OP_CHECKSIG'],
    [
      '6a4c4f54686973204f505f52455455524e207472616e73616374696f6e206f7574707574207761732063726561746564206279206d6f646966696564206372656174657261777472616e73616374696f6e2e',
      'OP_RETURN 54686973204f505f52455455524e207472616e73616374696f6e206f7574707574207761732063726561746564206279206d6f646966696564206372656174657261777472616e73616374696f6e2e',
    ],
    ['a9146a2c482f4985f57e702f325816c90e3723ca81ae87', 'OP_HASH160 6a2c482f4985f57e702f325816c90e3723ca81ae OP_EQUAL'],
    [
      '522102a5613bd857b7048924264d1e70e08fb2a7e6527d32b7ab1bb993ac59964ff39721021ac43c7ff740014c3b33737ede99c967e4764553d1b2b83db77c83b8715fa72d2102df2089105c77f266fa11a9d33f05c735234075f2e8780824c6b709415f9fb48553ae',
      '2 02a5613bd857b7048924264d1e70e08fb2a7e6527d32b7ab1bb993ac59964ff397 021ac43c7ff740014c3b33737ede99c967e4764553d1b2b83db77c83b8715fa72d 02df2089105c77f266fa11a9d33f05c735234075f2e8780824c6b709415f9fb485 3 OP_CHECKMULTISIG',
    ],
    // witness programs: OP_0 / OP_1 are the numbers 0 and 1
    ['0014751e76e8199196d454941c45d1b3a323f1433bd6', '0 751e76e8199196d454941c45d1b3a323f1433bd6'],
    ['5120' + '11'.repeat(32), `1 ${'11'.repeat(32)}`],
    // pushes of up to 4 bytes are CScriptNum numbers (little-endian, sign bit on top); 5 bytes are hex
    ['0101 0181 02ff00 03a0bb0d 04ffffffff 0400000080 057370656c6c', '1 -1 255 900000 -2147483647 0 7370656c6c'],
    ['4f 50 60 b1 b2 ba bb ff 00', '-1 OP_RESERVED 16 OP_CHECKLOCKTIMEVERIFY OP_CHECKSEQUENCEVERIFY OP_CHECKSIGADD OP_UNKNOWN OP_INVALIDOPCODE 0'],
    // a push past the end
    ['6a4c05aabb', 'OP_RETURN [error]'],
    ['', ''],
  ];
  for (const [h, asm] of cases) assert.equal(scriptAsm(fromHex(h.replaceAll(' ', ''))), asm, h);
});
