import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildScript, instructions, opcodeName, OP_ENDIF, OP_IF, OP_RETURN, parseScript, pushData } from './script.js';
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
