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
import { readdirSync } from 'node:fs';
import { concatBytes, fromHex, toHex, utf8 } from '../util/bytes.js';
import { CharmsError } from '../errors.js';
import { readSharedText, sharedOrSkip, sharedPath } from '../testing/shared.js';
import { parseTx, serializeTx } from '../bitcoin/tx.js';
import { opReturnSpellPayload, opReturnSpellScript } from '../bitcoin/spell-location.js';
import { extractAndVerifyBitcoin } from '../bitcoin/extract.js';
import { extractAndVerifyCardano, findSpellPayload } from '../cardano/extract.js';
import { parseCardanoTx, parseOutputs } from '../cardano/tx.js';
import { decodeSpellAndProof } from '../groth16/spell.js';
import { CiboriumReader } from './ciborium.js';
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
  const spell = (fields: [Uint8Array, Uint8Array][]) => concatBytes(Uint8Array.of(0x82, 0xa0 + fields.length), ...fields.flat(), Uint8Array.of(0x80));
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
  assert.throws(
    () => decodeSpellAndProof(spell([[chunked, encodeCbor(15n)], ...base.slice(1)])),
    (e: unknown) => e instanceof CharmsError && /field name: invalid type: .*expected str or bytes/.test(e.message),
  );
  // a chunked byte-string field name too
  const chunkedBytes = concatBytes(Uint8Array.of(0x5f), encodeCbor(utf8('ver')), encodeCbor(utf8('sion')), Uint8Array.of(0xff));
  assert.throws(() => decodeSpellAndProof(spell([[chunkedBytes, encodeCbor(15n)], ...base.slice(1)])), /expected str or bytes/);
  // a repeated field (text, then the same name as bytes)
  assert.throws(() => decodeSpellAndProof(spell([...base, [encodeCbor(utf8('version')), encodeCbor(15n)]])), /duplicate field `version`/);
  // unknown fields, also as non-UTF-8 bytes, are ignored
  assert.equal(decodeSpellAndProof(spell([...base, [encodeCbor(Uint8Array.of(0xff, 0xfe)), encodeCbor(1n)]])).spell.version, 15);
  // mock: null is not a bool; versioned_apps: null is not a map
  assert.throws(() => decodeSpellAndProof(spell([...base, [text('mock'), Uint8Array.of(0xf6)]])), /mock: invalid type: null, expected a boolean/);
  assert.throws(
    () => decodeSpellAndProof(spell([...base, [text('versioned_apps'), Uint8Array.of(0xf6)]])),
    /versioned_apps: invalid type: null, expected a map/,
  );
  // a refs UTXO id as a chunked byte string, or as an array of ints, is refused
  const utxo = new Uint8Array(36).fill(7);
  const refs = (item: Uint8Array) =>
    [text('tx'), concatBytes(Uint8Array.of(0xa2), text('outs'), Uint8Array.of(0x80), text('refs'), Uint8Array.of(0x81), item)] as [Uint8Array, Uint8Array];
  assert.equal(decodeSpellAndProof(spell([base[0]!, refs(encodeCbor(utxo)), base[2]!])).spell.tx.refs?.length, 1);
  const chunkedUtxo = concatBytes(Uint8Array.of(0x5f), encodeCbor(utxo.subarray(0, 20)), encodeCbor(utxo.subarray(20)), Uint8Array.of(0xff));
  assert.throws(() => decodeSpellAndProof(spell([base[0]!, refs(chunkedUtxo), base[2]!])), /UTXO id as a definite byte string/);
  assert.throws(() => decodeSpellAndProof(spell([base[0]!, refs(encodeCbor(Array.from(utxo, BigInt))), base[2]!])), /UTXO id as a definite byte string/);
  // version as a bignum (tag 2, leading zeros skipped) is an integer; beyond 16 bytes it is refused
  assert.equal(decodeSpellAndProof(spell([[text('version'), encodeCbor(new Tagged(2n, Uint8Array.of(0, 0, 15)))], ...base.slice(1)])).spell.version, 15);
  assert.throws(
    () => decodeSpellAndProof(spell([[text('version'), encodeCbor(new Tagged(2n, new Uint8Array(17).fill(1)))], ...base.slice(1)])),
    /bigint too large/,
  );
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
  const spellItem = encodeCbor((decodeCbor(payload) as Value[])[0]!);
  for (const short of [concatBytes(Uint8Array.of(0x81), spellItem), concatBytes(Uint8Array.of(0x9f), spellItem, Uint8Array.of(0xff)), Uint8Array.of(0x80)])
    assert.throws(
      () => decodeSpellAndProof(short),
      (e: unknown) => e instanceof CharmsError && e.code === 'CBOR_DECODE',
    );
});

test("B32 as serde reads [u8; 32] (the reference's B32 visitor): exactly 32 bytes, as an array of u8 or a byte string", (t) => {
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
      assert.throws(
        () => decodeSpellAndProof(withVk(form)),
        (e: unknown) => e instanceof CharmsError && e.code === 'INVALID_INPUT' && /invalid length (31|33), expected (exactly )?32 elements/.test(e.message),
        `${bad.length} bytes`,
      );
});

/**
 * How the reference reads an app key `(tag, identity, vk)`: `deserialize_tuple(3)` reads three
 * items and never checks the declared count, an indefinite array's break is left for the next
 * value (the app's data, where it is an error), and the tag is a `char`: a definite text of at most
 * 4 bytes holding one character. Byte-level rewrites of the first app key of a real payload, each
 * with the reference's verdict.
 */
function appKeyVariants(payload: Uint8Array): { name: string; bytes: Uint8Array; accepted: boolean }[] {
  const spell = (decodeCbor(payload, { allowTrailing: true }) as Value[])[0] as ValueMap;
  const apps = spell.get('app_public_inputs') as ValueMap;
  const key = apps.entries[0]![0] as Value[];
  const keyBytes = encodeCbor(key);
  const at = indexOf(payload, keyBytes);
  assert.ok(at > 0 && keyBytes[0] === 0x83, 'the app key is found as a definite 3-array');
  const splice = (...mid: Uint8Array[]) => concatBytes(payload.subarray(0, at), ...mid, payload.subarray(at + keyBytes.length));
  const tag = encodeCbor(key[0]!);
  const identity = encodeCbor(key[1]!);
  const vk = encodeCbor(key[2]!);
  const b = (...x: number[]) => Uint8Array.from(x);
  const tagChar = utf8(key[0] as string);
  return [
    { name: '(a) declared as 4 items', bytes: splice(b(0x84), tag, identity, vk), accepted: true },
    { name: 'declared as 2^64-1 items', bytes: splice(b(0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), tag, identity, vk), accepted: true },
    { name: 'declared as 2 items', bytes: splice(b(0x82), tag, identity, vk), accepted: false },
    { name: '(b) indefinite, with its break', bytes: splice(b(0x9f), tag, identity, vk, b(0xff)), accepted: false },
    { name: 'indefinite, without a break', bytes: splice(b(0x9f), tag, identity, vk), accepted: true },
    { name: '(c) tag as chunked text', bytes: splice(b(0x83, 0x7f), tag, b(0xff), identity, vk), accepted: false },
    { name: 'tag as a byte string', bytes: splice(b(0x83, 0x40 + tagChar.length), tagChar, identity, vk), accepted: false },
    { name: 'tag as two characters', bytes: splice(b(0x83, 0x62), tagChar, tagChar, identity, vk), accepted: false },
    { name: 'tag with a CBOR tag in front', bytes: splice(b(0x83, 0xd8, 0x20), tag, identity, vk), accepted: true },
    { name: 'identity as an indefinite array with its break', bytes: splice(b(0x83), tag, b(0x9f), identity.subarray(2), b(0xff), vk), accepted: true },
    {
      name: 'identity as a chunked byte string',
      bytes: splice(
        b(0x83),
        tag,
        b(0x5f, 0x50),
        Uint8Array.from((key[1] as bigint[]).slice(0, 16), Number),
        b(0x50),
        Uint8Array.from((key[1] as bigint[]).slice(16), Number),
        b(0xff),
        vk,
      ),
      accepted: true,
    },
    { name: 'the whole key as a byte string', bytes: splice(b(0x43), tagChar.subarray(0, 1), b(1, 2)), accepted: false },
  ];
}

/** The real payloads the variants are applied to: every OP_RETURN-era Bitcoin spell (v9+) and every Cardano spell that verifies. */
function realSpellTxs(): { id: string; chain: 'bitcoin' | 'cardano'; tx: Uint8Array; payload: Uint8Array; mock: boolean; json: string }[] {
  const out = [];
  for (const f of readdirSync(sharedPath('vectors', 'chain')).sort()) {
    const m = /^([0-9a-f]{64})\.(bitcoin|cardano)\.hex$/.exec(f);
    if (!m) continue;
    const tx = fromHex(chainHex(m[1]!, m[2]!));
    let payload: Uint8Array;
    try {
      payload = m[2] === 'bitcoin' ? opReturnSpellPayload(parseTx(tx)) : findSpellPayload(parseOutputs(parseCardanoTx(tx)));
    } catch {
      continue; // a witness-era spell or no spell
    }
    for (const mock of [false, true]) {
      try {
        const spell = m[2] === 'bitcoin' ? extractAndVerifyBitcoin(tx, mock) : extractAndVerifyCardano(tx, mock);
        out.push({ id: m[1]!, chain: m[2] as 'bitcoin' | 'cardano', tx, payload, mock, json: spellJson(spell) });
        break;
      } catch {
        // not verified: not a base for variants
      }
    }
  }
  return out;
}

test('app keys as the reference reads them, on every real spell of both chains: the declared count is not checked, a left break and a chunked or non-char tag are refused', (t) => {
  if (!sharedOrSkip(t)) return;
  const bases = realSpellTxs().filter(
    (x) => ((decodeCbor(x.payload, { allowTrailing: true }) as Value[])[0] as ValueMap).get('app_public_inputs') instanceof ValueMap,
  );
  assert.ok(bases.filter((x) => x.chain === 'bitcoin').length >= 3 && bases.filter((x) => x.chain === 'cardano').length >= 3, `${bases.length} real spells`);
  for (const base of bases) {
    for (const v of appKeyVariants(base.payload)) {
      const tx = base.chain === 'bitcoin' ? withBitcoinPayload(toHex(base.tx), v.bytes) : withCardanoPayload(base.tx, base.payload, v.bytes);
      const what = `${base.id} (${base.chain}): ${v.name}`;
      if (v.accepted) {
        const spell = base.chain === 'bitcoin' ? extractAndVerifyBitcoin(tx, base.mock) : extractAndVerifyCardano(tx, base.mock);
        assert.equal(spellJson(spell), base.json, what);
      } else
        assert.throws(
          () => (base.chain === 'bitcoin' ? extractAndVerifyBitcoin(tx, base.mock) : extractAndVerifyCardano(tx, base.mock)),
          (e: unknown) => e instanceof CharmsError,
          what,
        );
      // the payload alone gives the same verdict
      if (v.accepted) assert.doesNotThrow(() => decodeSpellAndProof(v.bytes), what);
      else
        assert.throws(
          () => decodeSpellAndProof(v.bytes),
          (e: unknown) => e instanceof CharmsError && /invalid type|missing field|expected/.test(e.message),
          what,
        );
    }
  }
});

/** A minimal spell payload with `fields` (raw CBOR key and value bytes) and an empty proof. */
const payloadWith = (fields: [Uint8Array, Uint8Array][], proof: Uint8Array = Uint8Array.of(0x80)) =>
  concatBytes(Uint8Array.of(0x82, 0xa0 + fields.length), ...fields.flat(), proof);
const text = (s: string) => encodeCbor(s);
const outsWithData = (data: Uint8Array): [Uint8Array, Uint8Array] => [
  text('tx'),
  concatBytes(Uint8Array.of(0xa1), text('outs'), Uint8Array.of(0x81, 0xa1, 0x00), data),
];
const BASE: [Uint8Array, Uint8Array][] = [
  [text('version'), encodeCbor(15n)],
  [text('tx'), encodeCbor(ValueMap.of({ outs: [] }))],
  [text('app_public_inputs'), encodeCbor(new ValueMap())],
];
const dataOf = (payload: Uint8Array): Value => decodeSpellAndProof(payload).spell.tx.outs[0]!.get(0)!;

test('the CBOR layer as ciborium-ll: tags 2/3 on integers, indefinite markers, nested chunks, simple values', () => {
  const h = (s: string) => fromHex(s.replace(/ /g, ''));
  const refused = (p: Uint8Array, re: RegExp, what: string) =>
    assert.throws(
      () => decodeSpellAndProof(p),
      (e: unknown) => e instanceof CharmsError && re.test(e.message),
      what,
    );
  // a tag 2/3 in front of a plain integer: a typed integer wants a byte string there; Data keeps the tag
  refused(payloadWith([[text('version'), h('c2 0f')], ...BASE.slice(1)]), /expected bytes/, 'tag 2 on a plain integer (version)');
  assert.deepEqual(encodeCbor(dataOf(payloadWith([BASE[0]!, outsWithData(h('c2 05')), BASE[2]!]))), h('c2 05'));
  // a bignum may be a chunked byte string where an integer is typed (ciborium reads its segments)
  assert.equal(decodeSpellAndProof(payloadWith([[text('version'), h('c2 5f 41 00 41 0f ff')], ...BASE.slice(1)])).spell.version, 15);
  // tag 3 on 16 bytes ≥ 2^127 does not fit an i128: refused in Data
  refused(payloadWith([BASE[0]!, outsWithData(concatBytes(h('c3 50'), new Uint8Array(16).fill(0xff))), BASE[2]!]), /integer too large/, 'tag 3 beyond i128');
  assert.equal(dataOf(payloadWith([BASE[0]!, outsWithData(concatBytes(h('c3 50 7f'), new Uint8Array(15).fill(0xff))), BASE[2]!])), -(1n << 127n));
  // the indefinite-length marker on major types 0, 1 and 6 is a syntax error
  for (const m of ['1f', '3f', 'df 0f'])
    assert.throws(
      () => decodeSpellAndProof(payloadWith([[text('version'), h(m)], ...BASE.slice(1)])),
      (e: unknown) => e instanceof CharmsError && e.code === 'CBOR_DECODE',
      m,
    );
  // nested indefinite chunks inside an indefinite byte string are flattened (ciborium-ll's Segments)
  assert.deepEqual(dataOf(payloadWith([BASE[0]!, outsWithData(h('5f 5f 41 01 ff 41 02 5f ff ff')), BASE[2]!])), Uint8Array.of(1, 2));
  assert.deepEqual(decodeSpellAndProof(payloadWith(BASE, h('5f 5f 42 01 02 ff ff'))).proof, Uint8Array.of(1, 2));
  refused(payloadWith([BASE[0]!, outsWithData(h('5f 41 01 61 02 ff')), BASE[2]!]), /chunk of another type/, 'a text chunk in a byte string');
  // each text chunk is UTF-8 on its own: a character split across chunks is refused
  refused(payloadWith([BASE[0]!, outsWithData(h('7f 61 c3 61 a9 ff')), BASE[2]!]), /not valid UTF-8/, 'a split character');
  assert.equal(dataOf(payloadWith([BASE[0]!, outsWithData(h('7f 62 c3 a9 7f 61 21 ff ff')), BASE[2]!])), 'é!');
  // simple values: the two-byte forms of false/true/null/undefined are those values; others are refused, also in an ignored field
  assert.equal(decodeSpellAndProof(payloadWith([...BASE, [text('mock'), h('f8 15')]])).spell.mock, true);
  assert.equal(Array.isArray(dataOf(payloadWith([BASE[0]!, outsWithData(h('82 f8 16 f8 14')), BASE[2]!]))), true);
  for (const s of ['e0', 'f0', 'f8 20', 'f8 ff', 'ff'])
    refused(payloadWith([...BASE, [text('unknown'), h(s)]]), /expected (known simple value|non-break)/, `simple ${s} in an ignored field`);
  assert.equal(decodeSpellAndProof(payloadWith([...BASE, [text('unknown'), h('d8 20 82 f9 3c00 5f 41 00 ff')]])).spell.version, 15);
  // a tag in front of null is not None: an Option field then reads a tagged null as its type
  refused(
    payloadWith([[text('tx'), concatBytes(h('a2'), text('outs'), h('80'), text('refs'), h('c6 f6'))], BASE[0]!, BASE[2]!]),
    /expected array/,
    'tagged null',
  );
  assert.equal(
    decodeSpellAndProof(payloadWith([[text('tx'), concatBytes(h('a2'), text('outs'), h('80'), text('refs'), h('f7'))], BASE[0]!, BASE[2]!])).spell.tx.refs,
    undefined,
  );
});

test("ciborium's recursion limit: 256 containers from the top, the (spell, proof) pair included", () => {
  // pair, spell, tx, outs, charms map: 5 levels; Data may add 251 more
  const deep = (n: number) => concatBytes(new Uint8Array(n).fill(0x81), Uint8Array.of(0x00));
  assert.doesNotThrow(() => decodeSpellAndProof(payloadWith([BASE[0]!, outsWithData(deep(251)), BASE[2]!])));
  assert.throws(() => decodeSpellAndProof(payloadWith([BASE[0]!, outsWithData(deep(252)), BASE[2]!])), /recursion limit exceeded/);
});

test('a Vec<u8> or B32 written as a plain array of u8 (the fast path) reads as the type-by-type reader reads it, errors included', () => {
  const plain = (bytes: Uint8Array) => {
    const items = [...bytes].flatMap((v) => (v < 24 ? [v] : [0x18, v]));
    return Uint8Array.from([
      ...(bytes.length < 24 ? [0x80 + bytes.length] : bytes.length < 256 ? [0x98, bytes.length] : [0x99, bytes.length >> 8, bytes.length & 0xff]),
      ...items,
    ]);
  };
  const data = Uint8Array.from({ length: 356 }, (_, i) => (i * 97 + 13) & 0xff);
  const fast = plain(data);
  const read = (b: Uint8Array, f: (r: CiboriumReader) => Uint8Array) => {
    const r = new CiboriumReader(b);
    const v = f(r);
    return { v: toHex(v), pos: r.pos };
  };
  assert.deepEqual(
    read(fast, (r) => r.byteVec('p')),
    { v: toHex(data), pos: fast.length },
  );
  // the same values with one item as a 16-bit integer or with a tag in front: the type-by-type path
  const last = fast.length - (data[355]! < 24 ? 1 : 2);
  const wide = concatBytes(fast.subarray(0, last), Uint8Array.of(0x19, 0, data[355]!));
  assert.deepEqual(
    read(wide, (r) => r.byteVec('p')),
    { v: toHex(data), pos: wide.length },
  );
  const tagged = concatBytes(Uint8Array.of(0xc6), fast);
  assert.deepEqual(
    read(tagged, (r) => r.byteVec('p')),
    { v: toHex(data), pos: tagged.length },
  );
  const b32 = data.subarray(0, 32);
  assert.deepEqual(
    read(plain(b32), (r) => r.b32('p')),
    { v: toHex(b32), pos: plain(b32).length },
  );
  assert.deepEqual(
    read(plain(new Uint8Array(0)), (r) => r.byteVec('p')),
    { v: '', pos: 1 },
  );
  const fails = (b: Uint8Array, f: (r: CiboriumReader) => unknown, pattern: RegExp) =>
    assert.throws(
      () => f(new CiboriumReader(b)),
      (e: unknown) => e instanceof CharmsError && pattern.test(e.message),
      pattern.source,
    );
  fails(fast.subarray(0, fast.length - 1), (r) => r.byteVec('p'), /unexpected end of input/);
  fails(concatBytes(fast.subarray(0, last), Uint8Array.of(0x18)), (r) => r.byteVec('p'), /unexpected end of input/);
  fails(concatBytes(fast.subarray(0, last), Uint8Array.of(0x19, 1, 0)), (r) => r.byteVec('p'), /expected u8/);
  fails(concatBytes(fast.subarray(0, last), Uint8Array.of(0x20)), (r) => r.byteVec('p'), /unexpected negative integer/);
  fails(plain(data.subarray(0, 31)), (r) => r.b32('p'), /invalid length 31/);
  fails(plain(data.subarray(0, 33)), (r) => r.b32('p'), /invalid length 33/);
});
