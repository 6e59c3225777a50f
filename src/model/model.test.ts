import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeCbor, encodeCbor } from '../codec/cbor.js';
import { parseJson, toJsonCompact, toJsonPretty } from '../codec/json.js';
import { parseYaml, toYaml } from '../codec/yaml.js';
import { ValueMap, valueEquals, type Value } from '../codec/value.js';
import { fromHex, toHex } from '../util/bytes.js';
import { readSharedJson, sharedOrSkip, readSharedText } from '../testing/shared.js';
import { appFromValue, appToValue, appFromString, b32FromValue, b32ToValue, utxoIdFromValue, utxoIdToValue } from './primitives.js';
import {
  appSignatureFromValue,
  appSignatureToValue,
  beamSourceFromValue,
  beamSourceToValue,
  nativeOutputFromValue,
  nativeOutputToValue,
  spellFromValue,
  spellToValue,
  u32MapFromValue,
  u32MapToValue,
  versionedAppFromValue,
  versionedAppToValue,
} from './spell.js';
import { chainTxFromValue, chainTxToValue, proveRequestFromValue, proveRequestToValue } from './request.js';
import { parseSpellText } from './inputs.js';

type Codec = { from: (v: Value, hr: boolean) => unknown; to: (x: never, hr: boolean) => Value };
const codecs: Record<string, Codec> = {
  B32: { from: (v, hr) => b32FromValue(v, hr, 'b32'), to: (x, hr) => b32ToValue(x, hr) },
  App: { from: (v, hr) => appFromValue(v, hr, 'app'), to: (x, hr) => appToValue(x, hr) },
  UtxoId: { from: (v, hr) => utxoIdFromValue(v, hr, 'u'), to: (x, hr) => utxoIdToValue(x, hr) },
  TxId: { from: (v) => v, to: (x) => x },
  'NativeOutput (Bitcoin)': { from: (v, hr) => nativeOutputFromValue(v, hr, 'o'), to: (x, hr) => nativeOutputToValue(x, hr) },
  'NativeOutput (Cardano, with content)': { from: (v, hr) => nativeOutputFromValue(v, hr, 'o'), to: (x, hr) => nativeOutputToValue(x, hr) },
  VersionedApp: { from: (v, hr) => versionedAppFromValue(v, hr, 'va'), to: (x, hr) => versionedAppToValue(x, hr) },
  AppSignature: { from: (v, hr) => appSignatureFromValue(v, hr, 's'), to: (x, hr) => appSignatureToValue(x, hr) },
  'BeamSource without nonce': { from: (v, hr) => beamSourceFromValue(v, hr, 'b'), to: (x, hr) => beamSourceToValue(x, hr) },
  'BeamSource with nonce': { from: (v, hr) => beamSourceFromValue(v, hr, 'b'), to: (x, hr) => beamSourceToValue(x, hr) },
  'NormalizedCharms {0: null, 2: 69420}': { from: (v, hr) => u32MapFromValue(v, hr, 'c', (x) => x), to: (x) => u32MapToValue(x, (d) => d as Value) },
};

test('wire-type vectors: every binary form decodes and re-encodes byte for byte', (t) => {
  if (!sharedOrSkip(t)) return;
  const { vectors } = readSharedJson('vectors', 'wire-type-vectors.json');
  let checked = 0;
  for (const v of vectors as { type: string; cbor_hex?: string; human_readable: string }[]) {
    if (!v.cbor_hex || !/^[0-9a-f]+$/.test(v.cbor_hex)) continue;
    const bytes = fromHex(v.cbor_hex);
    const raw = decodeCbor(bytes);
    assert.equal(toHex(encodeCbor(raw)), v.cbor_hex, `${v.type}: generic round trip`);
    const c = codecs[v.type];
    if (c) {
      const typed = c.from(raw, false);
      assert.equal(toHex(encodeCbor(c.to(typed as never, false))), v.cbor_hex, `${v.type}: typed round trip`);
      // human-readable face: parse the vector's JSON (when it is JSON) and compare
      let hr: Value | undefined;
      try {
        hr = parseJson(v.human_readable);
      } catch {
        hr = undefined;
      }
      if (hr !== undefined && !v.human_readable.includes('..') && v.type !== 'TxId' && !v.type.startsWith('NormalizedCharms'))
        assert.equal(toJsonCompact(c.to(c.from(hr, true) as never, true)), toJsonCompact(hr), `${v.type}: human-readable round trip`);
    }
    checked++;
  }
  assert.ok(checked >= 15, `checked ${checked} vectors`);
});

test('prove-request vectors: JSON and CBOR requests decode and re-encode exactly', (t) => {
  if (!sharedOrSkip(t)) return;
  const v = readSharedJson('vectors', 'prove-request-vectors.json');
  const spell = spellFromValue(decodeCbor(fromHex(v.spell_cbor_hex)), false);
  assert.equal(toHex(encodeCbor(spellToValue(spell, false))), v.spell_cbor_hex);
  const fromJson = proveRequestFromValue(parseJson(v.full_request_json_text), true);
  assert.equal(toJsonCompact(proveRequestToValue(fromJson, true)), v.full_request_json_text);
  assert.equal(toHex(encodeCbor(proveRequestToValue(fromJson, false))), v.full_request_cbor_hex);
  const fromCbor = proveRequestFromValue(decodeCbor(fromHex(v.full_request_cbor_hex)), false);
  assert.equal(toJsonCompact(proveRequestToValue(fromCbor, true)), v.full_request_json_text);
  const minimal = proveRequestFromValue(parseJson(v.minimal_request_json_text), true);
  assert.equal(toJsonCompact(proveRequestToValue(minimal, true)), v.minimal_request_json_text);
  // the spell may also come as an object (as the docs show it)
  const withObject = parseJson(v.full_request_json_text) as ValueMap;
  withObject.entries[0]![1] = spellToValue(spell, true);
  assert.equal(toJsonCompact(proveRequestToValue(proveRequestFromValue(withObject, true), true)), v.full_request_json_text);
  const resp = decodeCbor(fromHex(v.response_cbor_hex)) as Value[];
  assert.equal(toJsonCompact(resp.map((x, i) => chainTxToValue(chainTxFromValue(x, `r${i}`)))), v.response_json_text);
});

test('app_public_inputs must be strictly sorted; absent and empty stay distinct', () => {
  const app = (tag: string, b: string) => `${tag}/${b.repeat(64)}/${'0'.repeat(64)}`;
  const good = `version: 15\ntx:\n  outs: []\napp_public_inputs:\n  ${app('n', '1')}: ~\n  ${app('t', '0')}: ~\n`;
  assert.equal(parseSpellText(good).app_public_inputs.length, 2);
  const bad = `version: 15\ntx:\n  outs: []\napp_public_inputs:\n  ${app('t', '0')}: ~\n  ${app('n', '1')}: ~\n`;
  assert.throws(() => parseSpellText(bad), /app keys must be in sorted order, but 't?n\/1+/);
  const dup = `version: 15\ntx:\n  outs: []\napp_public_inputs:\n  ${app('t', '0')}: ~\n  ${app('t', '0')}: ~\n`;
  assert.throws(() => parseSpellText(dup), /sorted order/);
  const withRefs = parseSpellText(`version: 15\ntx:\n  refs: []\n  outs: []\napp_public_inputs: {}\n`);
  assert.deepEqual(withRefs.tx.refs, []);
  assert.equal(toHex(encodeCbor(spellToValue(withRefs, false))).includes(toHex(new TextEncoder().encode('refs')) + '80'), true);
  assert.equal(parseSpellText(`version: 15\ntx:\n  outs: []\napp_public_inputs: {}\n`).tx.refs, undefined);
});

test('bad fields are named in one-line errors', () => {
  const cases: [string, RegExp][] = [
    ['version: 15\ntx: {outs: []}\n', /missing field `app_public_inputs`/],
    ['version: 15\ntx: {ins: [abc], outs: []}\napp_public_inputs: {}', /spell.tx.ins\[0\]: expected format txid:vout/],
    [`version: 15\ntx: {outs: []}\napp_public_inputs: {"t/zz/00": ~}`, /identity/],
    [`version: 15\ntx: {outs: [], coins: [{amount: -1, dest: "00"}]}\napp_public_inputs: {}`, /amount: invalid value/],
    ['version: 15\ntx: {outs: [{x: 1}]}\napp_public_inputs: {}', /key: invalid type/],
  ];
  for (const [text, re] of cases) assert.throws(() => parseSpellText(text), re);
  assert.throws(() => appFromString('t/00/00'), /expected 64 hex characters/);
  assert.throws(() => appSignatureFromValue(parseJson(`{"public_key":"${'a'.repeat(64)}","signature":"abcd"}`), true, 'sig'), /expected 128 hex characters/);
});

/** Property: random spells round-trip YAML → model → CBOR → model → YAML unchanged. */
test('property: random spells round-trip YAML → model → CBOR → model → YAML', () => {
  let seed = 42;
  const r = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const hex = (n: number) =>
    Array.from({ length: n }, () =>
      Math.floor(r() * 256)
        .toString(16)
        .padStart(2, '0'),
    ).join('');
  const data = (d: number): Value => {
    const k = r();
    if (d > 2 || k < 0.4) return k < 0.1 ? null : k < 0.25 ? BigInt(Math.floor(r() * 1e9)) : `s${Math.floor(r() * 100)}`;
    if (k < 0.6) return [data(d + 1), data(d + 1)];
    return ValueMap.of({ ticker: `T${Math.floor(r() * 9)}`, remaining: BigInt(Math.floor(r() * 1e6)), nested: data(d + 1) });
  };
  for (let i = 0; i < 200; i++) {
    const nApps = 1 + Math.floor(r() * 3);
    const apps = Array.from({ length: nApps }, () => `${['n', 't', 'c'][Math.floor(r() * 3)]}/${hex(32)}/${hex(32)}`).sort(
      (a, b) => appFromString(a).tag.codePointAt(0)! - appFromString(b).tag.codePointAt(0)! || (a < b ? -1 : 1),
    );
    const uniq = [...new Set(apps)];
    const outs = Array.from({ length: Math.floor(r() * 3) }, () => {
      const m = new ValueMap();
      uniq.forEach((a, j) => {
        if (r() < 0.6) m.set(BigInt(j), a.startsWith('t') ? BigInt(1 + Math.floor(r() * 1e12)) : data(0));
      });
      return m;
    });
    const tx = new ValueMap([['ins', [`${hex(32)}:${Math.floor(r() * 5)}`]]]);
    if (r() < 0.3) tx.set('refs', []);
    tx.set('outs', outs);
    if (r() < 0.5)
      tx.set(
        'coins',
        outs.map(() => ValueMap.of({ amount: BigInt(Math.floor(r() * 1e5)), dest: hex(34) })),
      );
    if (r() < 0.3) tx.set('scrolls', [0n]);
    const spellV = new ValueMap([
      ['version', 15n],
      ['tx', tx],
      ['app_public_inputs', new ValueMap(uniq.map((a) => [a, data(0)]))],
    ]);
    if (r() < 0.2) spellV.set('mock', true);
    const yaml = toYaml(spellV);
    const s1 = spellFromValue(parseYaml(yaml), true);
    const s2 = spellFromValue(decodeCbor(encodeCbor(spellToValue(s1, false))), false);
    assert.equal(toYaml(spellToValue(s2, true)), yaml);
    assert.equal(toJsonPretty(spellToValue(s2, true)), toJsonPretty(spellToValue(s1, true)));
  }
});

test('the docs spell example parses (normalized v15 format)', (t) => {
  if (!sharedOrSkip(t)) return;
  const s = parseSpellText(readSharedText('vectors', 'spells', 'charms-docs__v15__concepts-spells-example.yaml'));
  assert.equal(s.version, 15);
  assert.equal(s.app_public_inputs.length, 3);
  assert.equal(s.tx.coins?.length, 2);
  assert.ok(valueEquals(s.tx.outs[0]!.get(0)!, ValueMap.of({ ticker: 'TOAD', remaining: 30160n })));
});
