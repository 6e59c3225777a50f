import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseJson, toJsonCompact, toJsonPretty } from './json.js';
import { parseYaml, toYaml } from './yaml.js';
import { formatFloatRyu } from './float-format.js';
import { ValueMap, valueEquals, type Value } from './value.js';
import { readSharedText, sharedOrSkip } from '../testing/shared.js';
import { spellFromValue, spellToValue } from '../model/spell.js';
import { CharmsError } from '../errors.js';

test('show-spell v12: JSON and YAML print byte for byte as the reference', (t) => {
  if (!sharedOrSkip(t)) return;
  const json = readSharedText('vectors', 'bitcoin-v12-show-spell.expected.json');
  const yaml = readSharedText('vectors', 'bitcoin-v12-show-spell.expected.yaml');
  const spell = spellFromValue(parseJson(json), true);
  assert.equal(toJsonPretty(spellToValue(spell, true)), json);
  assert.equal(toYaml(spellToValue(spell, true)), yaml);
  assert.equal(toJsonPretty(spellToValue(spellFromValue(parseYaml(yaml), true), true)), json);
});

test('serde_json float and string formatting', () => {
  const cases: [number, string][] = [
    [2, '2.0'],
    [0.1, '0.1'],
    [1e16, '1e16'],
    [1e15, '1000000000000000.0'],
    [1.5e-7, '1.5e-7'],
    [1e-5, '0.00001'],
    [1e-6, '1e-6'],
    [-3.25, '-3.25'],
    [123456.789, '123456.789'],
  ];
  for (const [v, s] of cases) assert.equal(formatFloatRyu(v), s);
  assert.equal(toJsonCompact(['a"b\\c\n\u0001é', 1n, 1.5, null, true]), '["a\\"b\\\\c\\n\\u0001é",1,1.5,null,true]');
  assert.equal(toJsonCompact(new ValueMap([[1n, 'x']])), '{"1":"x"}');
  assert.throws(() => toJsonCompact(new ValueMap([[['k'], 1n]])), /key must be a string/);
  assert.equal(toJsonPretty(ValueMap.of({ a: [], b: new ValueMap() })), '{\n  "a": [],\n  "b": {}\n}');
});

test('lossless JSON: big integers, float vs int, key order, errors with position', () => {
  const v = parseJson('{"b": 18446744073709551615, "1": 2.0, "a": -1}') as ValueMap;
  assert.deepEqual(v.entries, [
    ['b', 18446744073709551615n],
    ['1', 2],
    ['a', -1n],
  ]);
  for (const bad of ['{', '[1,]', '{"a" 1}', '01', '"\u0001"', '1 2', 'nul']) {
    assert.throws(
      () => parseJson(bad),
      (e: unknown) => e instanceof CharmsError && /line \d+ column \d+/.test(e.message),
      bad,
    );
  }
});

test('YAML scalars: quoting of strings that would read back as other types, long keys, tags', () => {
  const v = ValueMap.of({ a: 'yes', b: '0', c: '', d: '- x', e: 'a: b', f: 'true', g: '1e3', h: '~', i: 'plain text', j: 1.0, k: 'x'.repeat(130) });
  const out = toYaml(v);
  assert.match(out, /^a: yes\nb: '0'\nc: ''\nd: '- x'\ne: 'a: b'\nf: 'true'\ng: '1e3'\nh: '~'\ni: plain text\nj: 1.0\nk: x{130}\n$/);
  assert.equal(toYaml(new ValueMap([['k'.repeat(129), null]])), `? ${'k'.repeat(129)}\n: null\n`);
  assert.ok(valueEquals(parseYaml('!bitcoin 0200ab'), new ValueMap([['bitcoin', '0200ab']])));
  assert.ok(valueEquals(parseYaml('x: 1.0\ny: 1\nz: ~'), ValueMap.of({ x: 1, y: 1n, z: null })));
  assert.throws(() => parseYaml('a: 1\n---\nb: 2'), /one document/);
  assert.throws(() => toYaml(new Uint8Array([1])), /bytes in YAML is not implemented/);
});

/** Seeded PRNG (mulberry32). */
function rng(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TRICKY = [
  'yes',
  'no',
  '0',
  '-',
  ': ',
  '#',
  ' lead',
  'trail ',
  'ünïcödé ✓',
  '',
  'null',
  '~',
  '1e3',
  '0x10',
  '.inf',
  'a: b',
  '- x',
  "it's",
  'multi\nline',
  'tab\there',
  '[x]',
  '{y}',
  '@at',
  '`tick`',
  '%p',
  '*star',
  '&amp',
  '!bang',
  '|pipe',
  '>gt',
  "'q'",
  '"dq"',
  'k'.repeat(140),
  'word '.repeat(30).trim(),
];

function randomValue(r: () => number, depth: number): Value {
  const k = r();
  if (depth > 3 || k < 0.45) {
    const s = r();
    if (s < 0.3) return TRICKY[Math.floor(r() * TRICKY.length)]!;
    if (s < 0.5) return BigInt(Math.floor(r() * 1e6)) * (r() < 0.2 ? -1n : 1n) * (r() < 0.1 ? 10n ** 12n : 1n);
    if (s < 0.6) return Math.round(r() * 1e6) / 1000 + 0.5;
    if (s < 0.7) return r() < 0.5;
    if (s < 0.8) return null;
    return 'w' + Math.floor(r() * 1000);
  }
  if (k < 0.7) return Array.from({ length: Math.floor(r() * 4) }, () => randomValue(r, depth + 1));
  const m = new ValueMap();
  const n = Math.floor(r() * 4);
  const used = new Set<string>();
  for (let i = 0; i < n; i++) {
    const key: Value = r() < 0.3 ? BigInt(Math.floor(r() * 50)) : TRICKY[Math.floor(r() * TRICKY.length)]!;
    if (used.has(String(key))) continue;
    used.add(String(key));
    m.set(key, randomValue(r, depth + 1));
  }
  return m;
}

const stringKeys = (v: Value): Value =>
  v instanceof ValueMap
    ? new ValueMap(v.entries.map(([k, x]) => [typeof k === 'bigint' ? String(k) : k, stringKeys(x)]))
    : Array.isArray(v)
      ? v.map(stringKeys)
      : v;

test('property: random values round-trip through YAML and JSON unchanged', () => {
  const r = rng(20261122);
  for (let i = 0; i < 400; i++) {
    const v = randomValue(r, 0);
    const y = toYaml(v);
    assert.ok(valueEquals(parseYaml(y), v), `YAML round trip failed for:\n${y}`);
    const j = toJsonPretty(v);
    assert.ok(valueEquals(parseJson(j), stringKeys(v)), `JSON round trip failed for:\n${j}`);
  }
});
