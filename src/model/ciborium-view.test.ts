/**
 * The spell decoder accepts what ciborium 0.2.2 + serde accept, checked on real proved spells of
 * both chains: the on-chain payload is re-encoded with byte-string field names, tags in front of
 * typed items and byte strings for `Vec<u8>`/`B32`, put back into the real transaction, and the
 * real Groth16 proof still verifies (the reference re-serializes to the same committed bytes).
 * What ciborium refuses (chunked field names, repeated fields, null bools, chunked UTXO ids) is
 * refused.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeCbor, encodeCbor } from '../codec/cbor.js';
import { Tagged, ValueMap, type Value } from '../codec/value.js';
import { concatBytes, fromHex, utf8 } from '../util/bytes.js';
import { CharmsError } from '../errors.js';
import { readSharedText, sharedOrSkip } from '../testing/shared.js';
import { parseTx, serializeTx } from '../bitcoin/tx.js';
import { opReturnSpellPayload, opReturnSpellScript } from '../bitcoin/spell-location.js';
import { extractAndVerifyBitcoin } from '../bitcoin/extract.js';
import { extractAndVerifyCardano, findSpellPayload } from '../cardano/extract.js';
import { parseCardanoTx, parseOutputs } from '../cardano/tx.js';
import { decodeSpellAndProof } from '../proof/spell.js';
import { encodeSpellCbor, spellToValue } from './spell.js';
import { toJsonCompact } from '../codec/json.js';

const BTC_V12 = '283559062cb6b651eb4a5f557ba4f67efa9aae55ba2278d4f10f35cbefaa84a5';
const ADA_V11 = '361927aed267ef049a5b9315aa7296493b385938d73340146b0af5d4637a02cf';
const chainHex = (id: string, chain: string) => readSharedText('vectors', 'chain', `${id}.${chain}.hex`).trim();

type Variant = 'byte-string field names' | 'tags before typed items' | 'byte strings for Vec<u8> and B32';
const VARIANTS: Variant[] = ['byte-string field names', 'tags before typed items', 'byte strings for Vec<u8> and B32'];

/** Re-encodes the on-chain `(spell, proof)` value with one of ciborium's accepted alternatives. */
function rewrite(payload: Value, variant: Variant): Value {
  const [spell, proof] = payload as [ValueMap, Value[]];
  const key = (k: string): Value => (variant === 'byte-string field names' ? utf8(k) : k);
  const tag = (v: Value): Value => (variant === 'tags before typed items' ? new Tagged(55799n, new Tagged(100n, v)) : v);
  const bytes = (v: Value): Value => (variant === 'byte strings for Vec<u8> and B32' && Array.isArray(v) ? Uint8Array.from(v as bigint[], Number) : tag(v));
  const struct = (m: ValueMap, field: (name: string, v: Value) => Value): Value =>
    tag(new ValueMap(m.entries.map(([k, v]) => [tag(key(k as string)), field(k as string, v)])));
  const app = (a: Value): Value => {
    const [t, id, vk] = a as Value[];
    return tag([tag(t!), bytes(id!), bytes(vk!)]);
  };
  const u32map = (m: Value, value: (v: Value) => Value): Value => tag(new ValueMap((m as ValueMap).entries.map(([k, v]) => [tag(k), value(v)])));
  const tx = (t: ValueMap): Value =>
    struct(t, (name, v) => {
      switch (name) {
        case 'outs':
          return tag((v as Value[]).map((c) => u32map(c, (d) => d)));
        case 'beamed_outs':
          return u32map(v, bytes);
        case 'refs':
          return tag((v as Value[]).map(tag));
        case 'scrolls':
          return tag((v as Value[]).map(tag));
        default:
          return v;
      }
    });
  const s = struct(spell, (name, v) => {
    switch (name) {
      case 'version':
        return tag(v);
      case 'tx':
        return tx(v as ValueMap);
      case 'app_public_inputs':
        return tag(new ValueMap((v as ValueMap).entries.map(([k, d]) => [app(k), d])));
      case 'mock':
        return tag(v);
      default:
        return v;
    }
  });
  return tag([s, bytes(proof)]);
}

/** The Bitcoin transaction with its OP_RETURN spell payload replaced. */
function withBitcoinPayload(txHex: string, payload: Uint8Array): Uint8Array {
  const tx = parseTx(fromHex(txHex));
  const i = tx.outputs.findIndex((o) => o.script[0] === 0x6a);
  tx.outputs[i] = { ...tx.outputs[i]!, script: opReturnSpellScript(payload) };
  return serializeTx(tx);
}

/** Plutus bounded bytes: one string up to 64 bytes, else 64-byte chunks in an indefinite string. */
function plutusBytes(b: Uint8Array): Uint8Array {
  if (b.length <= 64) return encodeCbor(b);
  const chunks: Uint8Array[] = [Uint8Array.of(0x5f)];
  for (let i = 0; i < b.length; i += 64) chunks.push(encodeCbor(b.subarray(i, i + 64)));
  chunks.push(Uint8Array.of(0xff));
  return concatBytes(...chunks);
}

function indexOf(hay: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/** The Cardano transaction with its inline-datum spell payload replaced (`#6.24(bytes(datum))`). */
function withCardanoPayload(tx: Uint8Array, oldPayload: Uint8Array, payload: Uint8Array): Uint8Array {
  const oldDatum = encodeCbor(new Tagged(24n, plutusBytes(oldPayload)));
  const at = indexOf(tx, oldDatum);
  assert.ok(at > 0, 'the datum is found in the transaction');
  return concatBytes(tx.subarray(0, at), encodeCbor(new Tagged(24n, plutusBytes(payload))), tx.subarray(at + oldDatum.length));
}

const spellJson = (s: Parameters<typeof spellToValue>[0]) => toJsonCompact(spellToValue(s, true));

test('ciborium rules on a real Bitcoin spell (v12): each accepted encoding still verifies, to the same spell', (t) => {
  if (!sharedOrSkip(t)) return;
  const hex = chainHex(BTC_V12, 'bitcoin');
  const original = extractAndVerifyBitcoin(fromHex(hex), false);
  const payload = opReturnSpellPayload(parseTx(fromHex(hex)));
  for (const variant of VARIANTS) {
    const changed = encodeCbor(rewrite(decodeCbor(payload), variant));
    assert.notDeepEqual(changed, payload, variant);
    const spell = extractAndVerifyBitcoin(withBitcoinPayload(hex, changed), false);
    assert.equal(spellJson(spell), spellJson(original), variant);
  }
});

test('ciborium rules on a real Cardano spell (v11): each accepted encoding still verifies, to the same spell', (t) => {
  if (!sharedOrSkip(t)) return;
  const tx = fromHex(chainHex(ADA_V11, 'cardano'));
  const original = extractAndVerifyCardano(tx, false);
  const payload = findSpellPayload(parseOutputs(parseCardanoTx(tx)));
  for (const variant of VARIANTS) {
    const changed = encodeCbor(rewrite(decodeCbor(payload), variant));
    const spell = extractAndVerifyCardano(withCardanoPayload(tx, payload, changed), false);
    // the Charms txid differs (the body changed); the spell is the same
    assert.equal(spellJson(spell), spellJson(original), variant);
  }
});

test('what ciborium refuses is refused: chunked field names, repeated fields, null bool, chunked UTXO ids, huge bignums', () => {
  const spell = (fields: [Uint8Array, Uint8Array][]) =>
    concatBytes(Uint8Array.of(0x82, 0xa0 + fields.length), ...fields.flat(), Uint8Array.of(0x80));
  const text = (s: string) => encodeCbor(s);
  const base: [Uint8Array, Uint8Array][] = [
    [text('version'), encodeCbor(15n)],
    [text('tx'), encodeCbor(ValueMap.of({ outs: [] }))],
    [text('app_public_inputs'), encodeCbor(new ValueMap())],
  ];
  // the plain form decodes
  assert.equal(decodeSpellAndProof(spell(base)).spell.version, 15);
  // a field name as a chunked text string (7f 63 "ver" 64 "sion" ff)
  const chunked = concatBytes(Uint8Array.of(0x7f), text('ver'), text('sion'), Uint8Array.of(0xff));
  assert.throws(() => decodeSpellAndProof(spell([[chunked, encodeCbor(15n)], ...base.slice(1)])), (e: unknown) => e instanceof CharmsError && /field name: invalid type: .*expected str or bytes/.test(e.message));
  // a chunked byte-string field name too
  const chunkedBytes = concatBytes(Uint8Array.of(0x5f), encodeCbor(utf8('ver')), encodeCbor(utf8('sion')), Uint8Array.of(0xff));
  assert.throws(() => decodeSpellAndProof(spell([[chunkedBytes, encodeCbor(15n)], ...base.slice(1)])), /expected str or bytes/);
  // a repeated field (text, then the same name as bytes)
  assert.throws(() => decodeSpellAndProof(spell([...base, [encodeCbor(utf8('version')), encodeCbor(15n)]])), /duplicate field `version`/);
  // unknown fields, also as non-UTF-8 bytes, are ignored
  assert.equal(decodeSpellAndProof(spell([...base, [encodeCbor(Uint8Array.of(0xff, 0xfe)), encodeCbor(1n)]])).spell.version, 15);
  // mock: null is not a bool; versioned_apps: null is not a map
  assert.throws(() => decodeSpellAndProof(spell([...base, [text('mock'), Uint8Array.of(0xf6)]])), /mock: invalid type: null, expected a boolean/);
  assert.throws(() => decodeSpellAndProof(spell([...base, [text('versioned_apps'), Uint8Array.of(0xf6)]])), /versioned_apps: invalid type: null, expected a map/);
  // a refs UTXO id as a chunked byte string, or as an array of ints, is refused
  const utxo = new Uint8Array(36).fill(7);
  const refs = (item: Uint8Array) => [text('tx'), concatBytes(Uint8Array.of(0xa2), text('outs'), Uint8Array.of(0x80), text('refs'), Uint8Array.of(0x81), item)] as [Uint8Array, Uint8Array];
  assert.equal(decodeSpellAndProof(spell([base[0]!, refs(encodeCbor(utxo)), base[2]!])).spell.tx.refs?.length, 1);
  const chunkedUtxo = concatBytes(Uint8Array.of(0x5f), encodeCbor(utxo.subarray(0, 20)), encodeCbor(utxo.subarray(20)), Uint8Array.of(0xff));
  assert.throws(() => decodeSpellAndProof(spell([base[0]!, refs(chunkedUtxo), base[2]!])), /UTXO id as a definite byte string/);
  assert.throws(() => decodeSpellAndProof(spell([base[0]!, refs(encodeCbor(Array.from(utxo, BigInt))), base[2]!])), /UTXO id as a definite byte string/);
  // version as a bignum (tag 2, leading zeros skipped) is an integer; beyond 16 bytes it is refused
  assert.equal(decodeSpellAndProof(spell([[text('version'), encodeCbor(new Tagged(2n, Uint8Array.of(0, 0, 15)))], ...base.slice(1)])).spell.version, 15);
  assert.throws(() => decodeSpellAndProof(spell([[text('version'), encodeCbor(new Tagged(2n, new Uint8Array(17).fill(1)))], ...base.slice(1)])), /bigint too large/);
});

test('Data keeps its tags, but a small bignum is an integer and undefined is null (ciborium Value)', () => {
  const withData = (d: Value) =>
    encodeCbor([
      ValueMap.of({
        version: 15n,
        tx: ValueMap.of({ outs: [new ValueMap([[0n, d]])] }),
        app_public_inputs: new ValueMap(),
      }),
      [],
    ]);
  const outData = (d: Value) => encodeCbor(decodeSpellAndProof(withData(d)).spell.tx.outs[0]!.get(0)!);
  assert.deepEqual(outData(new Tagged(2n, Uint8Array.of(1, 0))), encodeCbor(256n));
  assert.deepEqual(outData(new Tagged(3n, Uint8Array.of(1))), encodeCbor(-2n));
  assert.deepEqual(outData(new Tagged(32n, 'https://x')), encodeCbor(new Tagged(32n, 'https://x')));
  assert.deepEqual(outData([undefined, new ValueMap([['k', undefined]])]), encodeCbor([null, new ValueMap([['k', null]])]));
  // the committed spell bytes use the reference's re-encoding
  const spell = decodeSpellAndProof(withData(new Tagged(2n, Uint8Array.of(5)))).spell;
  assert.ok(encodeSpellCbor(spell).length > 0);
});

/**
 * ciborium reads the on-chain `(spell, proof)` as a 2-tuple with `from_reader`: after the second
 * item nothing is read, so further items (even malformed ones), a missing break of an indefinite
 * array and trailing bytes do not matter. Byte-level rewrites of the real payloads, both chains.
 */
function pairVariants(payload: Uint8Array): [string, Uint8Array][] {
  assert.equal(payload[0], 0x82, 'the real payload is a definite 2-array');
  const items = payload.subarray(1);
  return [
    ['a third item', concatBytes(Uint8Array.of(0x83), items, encodeCbor('extra'))],
    ['a third item that is not even CBOR', concatBytes(Uint8Array.of(0x83), items, Uint8Array.of(0x5b, 0xff, 0xff))],
    ['an indefinite array without its break', concatBytes(Uint8Array.of(0x9f), items)],
    ['a tag in front and bytes after', concatBytes(Uint8Array.of(0xd9, 0xd9, 0xf7, 0x82), items, Uint8Array.of(0xff, 0x00))],
  ];
}

test('items after the (spell, proof) pair are never read, as ciborium: real spells on both chains still verify', (t) => {
  if (!sharedOrSkip(t)) return;
  const hex = chainHex(BTC_V12, 'bitcoin');
  const btc = spellJson(extractAndVerifyBitcoin(fromHex(hex), false));
  for (const [name, p] of pairVariants(opReturnSpellPayload(parseTx(fromHex(hex)))))
    assert.equal(spellJson(extractAndVerifyBitcoin(withBitcoinPayload(hex, p), false)), btc, `Bitcoin: ${name}`);
  const tx = fromHex(chainHex(ADA_V11, 'cardano'));
  const ada = spellJson(extractAndVerifyCardano(tx, false));
  const payload = findSpellPayload(parseOutputs(parseCardanoTx(tx)));
  for (const [name, p] of pairVariants(payload))
    assert.equal(spellJson(extractAndVerifyCardano(withCardanoPayload(tx, payload, p), false)), ada, `Cardano: ${name}`);
  // fewer than two items is refused (serde: invalid length)
  for (const short of [concatBytes(Uint8Array.of(0x81), encodeCbor(0n)), Uint8Array.of(0x9f, 0x00, 0xff)])
    assert.throws(() => decodeSpellAndProof(short), (e: unknown) => e instanceof CharmsError && e.code === 'CBOR_DECODE');
});

test('B32 as serde reads [u8; 32] (the reference\'s B32 visitor): exactly 32 bytes, as an array of u8 or a byte string', (t) => {
  if (!sharedOrSkip(t)) return;
  const payload = opReturnSpellPayload(parseTx(fromHex(chainHex(BTC_V12, 'bitcoin'))));
  const pair = decodeCbor(payload) as Value[];
  const original = decodeSpellAndProof(payload).spell;
  const withVk = (vk: Value): Uint8Array => {
    const spell = decodeCbor(encodeCbor(pair[0]!)) as ValueMap;
    const apps = spell.get('app_public_inputs') as ValueMap;
    const [key, data] = apps.entries[0]!;
    apps.entries[0] = [[(key as Value[])[0]!, (key as Value[])[1]!, vk], data];
    return encodeCbor([spell, pair[1]!]);
  };
  const vk = ((pair[0] as ValueMap).get('app_public_inputs') as ValueMap).entries[0]![0] as Value[];
  const bytes = Uint8Array.from(vk[2] as bigint[], Number);
  assert.equal(bytes.length, 32);
  // 32 bytes either way: the same spell
  assert.equal(spellJson(decodeSpellAndProof(withVk(bytes)).spell), spellJson(original));
  assert.equal(spellJson(decodeSpellAndProof(withVk(vk[2]!)).spell), spellJson(original));
  // 31 or 33: invalid length, as the visitor's `invalid_length`
  for (const bad of [bytes.subarray(0, 31), concatBytes(bytes, Uint8Array.of(7))])
    for (const form of [bad, Array.from(bad, (b) => BigInt(b))])
      assert.throws(() => decodeSpellAndProof(withVk(form)), (e: unknown) => e instanceof CharmsError && e.code === 'INVALID_INPUT' && /invalid length (31|33), expected 32/.test(e.message), `${bad.length} bytes`);
});
