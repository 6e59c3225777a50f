import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { checkCborShape, decodeCbor, encodeCbor } from './cbor.js';
import { Tagged, ValueMap } from './value.js';

const LIMITS = { maxDepth: 64, maxItems: 50_000 };

test('checkCborShape: declared lengths past the input are refused at their head, without building anything', () => {
  const big = new Uint8Array(8 * 1024 * 1024);
  big.set([0x9a, 0xff, 0xff, 0xff, 0xff]); // array of 2^32−1 items in 8 MiB
  assert.throws(() => checkCborShape(big, LIMITS), /length 4294967295 exceeds the input/);
  big.set([0xbb, 0, 0, 0, 0, 0, 0x40, 0, 0]); // map of 2^22 pairs: 2^23 items over 8 MiB − 9 bytes
  assert.throws(() => checkCborShape(big, LIMITS), /exceeds the input/);
  assert.throws(() => checkCborShape(Uint8Array.of(0x5a, 0, 1, 0, 0, 1, 2), LIMITS), /exceeds the input/);
  // many tiny items inside a length that fits: refused by the item count
  const many = new Uint8Array(1 + 4 + 60_000);
  many.set([0x9a, 0, 0, 0xea, 0x60]);
  assert.throws(() => checkCborShape(many, LIMITS), /more than 50000 items/);
  const deep = new Uint8Array(100).fill(0x81);
  assert.throws(() => checkCborShape(deep, LIMITS), /nesting too deep/);
  assert.throws(() => checkCborShape(Uint8Array.of(0xa1, 0x01), LIMITS), /length 1 exceeds the input/);
  assert.throws(() => checkCborShape(Uint8Array.of(0x19, 0x01), LIMITS), /unexpected end/);
  assert.throws(() => checkCborShape(Uint8Array.of(0x01, 0x02), LIMITS), /trailing/);
  assert.throws(() => checkCborShape(Uint8Array.of(0xff), LIMITS), /unexpected break/);
});

test('checkCborShape accepts what the encoder writes, definite and indefinite', () => {
  const v = ValueMap.of({
    status: 'replied',
    certificate: randomBytes(300),
    tree: [1n, [2n, randomBytes(3), [3n, new Uint8Array()]]],
    t: new Tagged(55799n, [true, null, -5n, 1.5]),
  });
  checkCborShape(encodeCbor(v), LIMITS);
  checkCborShape(Uint8Array.of(0x9f, 0x01, 0x9f, 0xff, 0xbf, 0x61, 0x61, 0x02, 0xff, 0xff), LIMITS);
  checkCborShape(Uint8Array.of(0x5f, 0x41, 0x00, 0x41, 0x01, 0xff), LIMITS);
});

test('fuzz: checkCborShape never throws anything but CBOR_DECODE, and passes all that decodeCbor decodes', () => {
  const seed = encodeCbor(ValueMap.of({ a: [1n, 2n, ValueMap.of({ b: randomBytes(20) })], c: 'text', d: new Tagged(24n, randomBytes(5)) }));
  for (let i = 0; i < 5000; i++) {
    const b = Uint8Array.from(seed);
    for (let k = 0; k < 1 + (i % 4); k++) b[(i * 7919 + k * 104729) % b.length] = randomBytes(1)[0]!;
    const input = i % 5 === 0 ? b.subarray(0, i % b.length) : b;
    let decodes = true;
    try {
      decodeCbor(input);
    } catch {
      decodes = false;
    }
    try {
      checkCborShape(input, LIMITS);
    } catch (e) {
      assert.equal((e as { code?: string }).code, 'CBOR_DECODE', String(e));
      assert.ok(!decodes, `refused what decodeCbor decodes: ${Buffer.from(input).toString('hex')}`);
    }
  }
});
