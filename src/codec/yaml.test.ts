import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { parseYaml, toYaml } from './yaml.js';
import { parseJson, toJsonPretty } from './json.js';
import { Tagged, ValueMap, valueEquals, type Value } from './value.js';
import { CharmsError } from '../errors.js';
import { readSharedText, sharedOrSkip, sharedPath } from '../testing/shared.js';

const isInvalidInput = (re: RegExp) => (e: unknown) => e instanceof CharmsError && e.code === 'INVALID_INPUT' && re.test(e.message);
const M = ValueMap;

/**
 * JSON can only carry string keys; the Rust types behind `tx.outs[i]` (NormalizedCharms) and
 * `tx.beamed_outs` have u32 keys, which YAML prints as plain integers. The typed model does this
 * conversion in the product; the test does it by path so that Data inside charms is untouched.
 */
function withIntegerCharmKeys(spell: Value): Value {
  const intKeys = (m: Value): Value => (m instanceof M ? new M(m.entries.map(([k, v]) => [typeof k === 'string' && /^\d+$/.test(k) ? BigInt(k) : k, v])) : m);
  const s = spell as ValueMap;
  const tx = s.get('tx') as ValueMap;
  const newTx = new M(tx.entries.map(([k, v]) => [k, k === 'outs' ? (v as Value[]).map(intKeys) : k === 'beamed_outs' ? intKeys(v) : v]));
  return new M(s.entries.map(([k, v]) => [k, k === 'tx' ? newTx : v]));
}

test('show-spell v12: JSON → Value → YAML reproduces the expected YAML byte for byte, and back', (t) => {
  if (!sharedOrSkip(t)) return;
  const json = readSharedText('vectors', 'bitcoin-v12-show-spell.expected.json');
  const yaml = readSharedText('vectors', 'bitcoin-v12-show-spell.expected.yaml');
  const spell = withIntegerCharmKeys(parseJson(json));
  assert.equal(toYaml(spell), yaml);
  const back = parseYaml(yaml);
  assert.ok(valueEquals(back, spell), 'parseYaml(expected YAML) differs from the spell');
  assert.equal(toJsonPretty(back), json); // integer keys print as "1" in JSON
});

test('chain vectors: every verified spell round-trips JSON → YAML → JSON to the exact show-spell text', (t) => {
  if (!sharedOrSkip(t)) return;
  const dir = sharedPath('vectors', 'chain', 'expected');
  let spells = 0;
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.json'))) {
    const spell = (parseJson(readSharedText('vectors', 'chain', 'expected', f)) as ValueMap).get('spell');
    if (spell === null || spell === undefined) continue;
    spells++;
    const typed = withIntegerCharmKeys(spell);
    const yaml = toYaml(typed);
    assert.match(yaml, /^version: \d+\ntx:\n {2}ins:( \[\])?\n/, f);
    assert.ok(valueEquals(parseYaml(yaml), typed), `${f}: YAML round trip changed the spell`);
    assert.equal(toJsonPretty(parseYaml(yaml)), toJsonPretty(spell), f);
  }
  assert.ok(spells >= 14, `expected at least 14 verified spells, found ${spells}`);
});

const K129 = 'k'.repeat(129);
const K128 = 'k'.repeat(128);

/**
 * Expected texts produced by libyaml 0.2.5 (the C library unsafe-libyaml ports) fed the events and
 * scalar styles serde_yaml emits for these values (unlimited width, unicode on).
 */
const LIBYAML_CASES: [string, Value, string][] = [
  [
    'plain and quoted strings',
    M.of({
      a: 'plain text',
      b: 'yes',
      c: 'on',
      d: '0',
      e: '010',
      f: '-1.5',
      g: '1e3',
      h: '0x10',
      i: '.inf',
      j: 'nan',
      k: '~',
      l: 'null',
      m: 'True',
      n: '',
      o: '- x',
      p: 'a: b',
      q: 'a:',
      r: '#x',
      s: 'a #b',
      t: 'a#b',
      u: ' lead',
      v: 'trail ',
      w: "it's",
      x: '"dq"',
      y: '---',
      z: '...x',
    }),
    "a: plain text\nb: yes\nc: on\nd: '0'\ne: '010'\nf: '-1.5'\ng: '1e3'\nh: '0x10'\ni: '.inf'\nj: nan\nk: '~'\nl: 'null'\nm: 'True'\nn: ''\no: '- x'\np: 'a: b'\nq: 'a:'\nr: '#x'\ns: 'a #b'\nt: a#b\nu: ' lead'\nv: 'trail '\nw: it's\nx: '\"dq\"'\ny: '---'\nz: '...x'\n",
  ],
  [
    'indicator characters',
    ['?', '? x', '?x', ':x', '-', '-x', '[x]', 'x]', '{y}', '@at', '`t`', '%p', '*s', '&a', '!b', '|p', '>g', ',c', 'a,b'],
    "- '?'\n- '? x'\n- ?x\n- :x\n- '-'\n- -x\n- '[x]'\n- x]\n- '{y}'\n- '@at'\n- '`t`'\n- '%p'\n- '*s'\n- '&a'\n- '!b'\n- '|p'\n- '>g'\n- ',c'\n- a,b\n",
  ],
  [
    'special characters are double-quoted',
    ['tab\there', 'cr\rx', 'bell\u0007', 'del\u007f', 'nel\u0085x', 'bom\ufeffx', 'nul\u0000', 'ünïcödé ✓ 中文', 'nbsp\u00a0x'],
    '- "tab\\there"\n- "cr\\rx"\n- "bell\\a"\n- "del\\x7F"\n- "nel\\Nx"\n- "bom\\uFEFFx"\n- "nul\\0"\n- ünïcödé ✓ 中文\n- nbsp\u00a0x\n',
  ],
  [
    'multi-line strings',
    M.of({
      a: 'line1\nline2',
      b: 'end\n',
      c: 'two\n\n',
      d: '\n',
      e: ' lead\nx',
      f: '\nlead break',
      g: 'trail \nx',
      h: 'x\n y',
      i: 'a\n\n\nb',
      j: ['one\ntwo', 'x'],
    }),
    'a: |-\n  line1\n  line2\nb: |\n  end\nc: |+\n  two\n\nd: |2+\n\ne: |2-\n   lead\n  x\nf: |2-\n\n  lead break\ng: "trail \\nx"\nh: |-\n  x\n   y\ni: |-\n  a\n\n\n  b\nj:\n- |-\n  one\n  two\n- x\n',
  ],
  [
    'nested collections',
    M.of({ seq: [1n, [2n, 3n], M.of({ a: 1n, b: [] }), new M()], map: M.of({ inner: M.of({ deep: [M.of({ x: null })] }) }), e1: [], e2: new M() }),
    'seq:\n- 1\n- - 2\n  - 3\n- a: 1\n  b: []\n- {}\nmap:\n  inner:\n    deep:\n    - x: null\ne1: []\ne2: {}\n',
  ],
  [
    'numbers, bools, null',
    [0n, -5n, 18446744073709551615n, 2, 0.1, 1e16, 1.5e-7, -0, Infinity, -Infinity, NaN, true, false, null],
    '- 0\n- -5\n- 18446744073709551615\n- 2.0\n- 0.1\n- 1e16\n- 1.5e-7\n- -0.0\n- .inf\n- -.inf\n- .nan\n- true\n- false\n- null\n',
  ],
  [
    'explicit keys: over 128 UTF-8 bytes, multi-line, collections',
    new M([
      [K129, 'v'],
      [K128, 'w'],
      ['é'.repeat(65), 'x'],
      ['multi\nline key', M.of({ a: 1n })],
      [[1n, 2n], 'seq key'],
      [M.of({ a: 1n }), ['v1', 'v2']],
      [[], 'empty seq key'],
      [new M(), 'empty map key'],
      [K129, [1n]],
      [K129, M.of({ b: 2n })],
      [7n, 'int key'],
      [true, 'bool key'],
      [null, 'null key'],
      ['', 'empty key'],
    ]),
    `? ${K129}\n: v\n${K128}: w\n? ${'é'.repeat(65)}\n: x\n? |-\n  multi\n  line key\n: a: 1\n? - 1\n  - 2\n: seq key\n? a: 1\n: - v1\n  - v2\n[]: empty seq key\n{}: empty map key\n? ${K129}\n: - 1\n? ${K129}\n: b: 2\n7: int key\ntrue: bool key\nnull: null key\n'': empty key\n`,
  ],
  ['cbor tag', M.of({ t: new Tagged(42n, 'x'), u: [new Tagged(1n, [1n])] }), 't: !@@TAGGED@@\n- 42\n- x\nu:\n- !@@TAGGED@@\n  - 1\n  - - 1\n'],
  ['root scalar', 'just text', 'just text\n'],
  ['root multi-line string', 'a\nb\n', '|\n  a\n  b\n'],
  ['root empty map', new M(), '{}\n'],
];

test('toYaml matches libyaml/serde_yaml output for quoting, block scalars, explicit keys and layout', () => {
  for (const [name, v, expected] of LIBYAML_CASES) {
    assert.equal(toYaml(v), expected, name);
    // and what we print reads back as the same value
    assert.ok(valueEquals(parseYaml(expected), v), `${name}: parseYaml did not read back the value`);
  }
});

test('bytes cannot be printed as YAML (serde_yaml refuses them)', () => {
  assert.throws(() => toYaml(M.of({ a: new Uint8Array([1]) })), isInvalidInput(/serialization and deserialization of bytes in YAML is not implemented/));
});

test('parseYaml resolves plain scalars as serde_yaml 0.9', () => {
  const cases: [string, Value][] = [
    ['~', null],
    ['null', null],
    ['Null', null],
    ['NULL', null],
    ['nULL', 'nULL'],
    ['true', true],
    ['True', true],
    ['FALSE', false],
    ['yes', 'yes'],
    ['no', 'no'],
    ['on', 'on'],
    ['off', 'off'],
    ['y', 'y'],
    ['0', 0n],
    ['-0', 0n],
    ['+5', 5n],
    ['-17', -17n],
    ['010', '010'],
    ['-010', '-010'],
    ['0x10', 16n],
    ['0xFf', 255n],
    ['-0x10', -16n],
    ['+0x10', 16n],
    ['0X10', '0X10'],
    ['0x', '0x'],
    ['0o17', 15n],
    ['0b101', 5n],
    ['-0b101', -5n],
    ['0x-1', '0x-1'],
    ['1_000', '1_000'],
    ['18446744073709551616', 18446744073709551616n],
    ['340282366920938463463374607431768211455', (1n << 128n) - 1n],
    ['340282366920938463463374607431768211456', 3.402823669209385e38],
    ['-170141183460469231731687303715884105728', -(1n << 127n)],
    ['1.0', 1],
    ['1.', 1],
    ['.5', 0.5],
    ['-.5', -0.5],
    ['+1.5', 1.5],
    ['1e3', 1000],
    ['1E-2', 0.01],
    ['00.5', 0.5],
    ['1e400', '1e400'],
    ['.inf', Infinity],
    ['+.inf', Infinity],
    ['-.Inf', -Infinity],
    ['.NaN', NaN],
    ['nan', 'nan'],
    ['inf', 'inf'],
    ['infinity', 'infinity'],
    ['+-1', '+-1'],
    ['1.5.3', '1.5.3'],
    ['0.1.2', '0.1.2'],
    ['12:30', '12:30'],
    ['2024-01-01', '2024-01-01'],
  ];
  for (const [text, expected] of cases) {
    const got = (parseYaml(`v: ${text}`) as ValueMap).get('v');
    assert.ok(valueEquals(got!, expected) || (Number.isNaN(got) && Number.isNaN(expected)), `${text}: got ${String(got)}`);
  }
  // quoted and block scalars are always strings; keys resolve like values
  assert.ok(
    valueEquals(
      parseYaml(`a: '1'\nb: "true"\nc: |\n  null\n1: x\n0x2: y\n'3': z`),
      new M([
        ['a', '1'],
        ['b', 'true'],
        ['c', 'null\n'],
        [1n, 'x'],
        [2n, 'y'],
        ['3', 'z'],
      ]),
    ),
  );
  assert.equal(parseYaml(''), null);
  assert.equal(parseYaml('# only a comment\n'), null);
  assert.ok(
    valueEquals(
      parseYaml('a:\nb: ""'),
      new M([
        ['a', null],
        ['b', ''],
      ]),
    ),
  );
});

test('parseYaml: core tags force a type, local tags are externally tagged enum variants', () => {
  assert.ok(
    valueEquals(parseYaml(`a: !!int "5"\nb: !!str 5\nc: !!float '1'\nd: !!bool "true"\ne: !!null '~'`), M.of({ a: 5n, b: '5', c: 1, d: true, e: null })),
  );
  assert.throws(() => parseYaml('a: !!int x'), isInvalidInput(/expected an integer/));
  assert.ok(valueEquals(parseYaml('!bitcoin 0200ab'), new M([['bitcoin', '0200ab']])));
  assert.ok(valueEquals(parseYaml("- !bitcoin '0200'\n- !bitcoin 0200"), [new M([['bitcoin', '0200']]), new M([['bitcoin', '0200']])]));
  assert.ok(valueEquals(parseYaml('!cardano {tx: 84a4, signature: null}'), new M([['cardano', M.of({ tx: '84a4', signature: null })]])));
  assert.ok(valueEquals(parseYaml('x: !num 12'), M.of({ x: new M([['num', 12n]]) })));
  assert.ok(valueEquals(parseYaml('!@@TAGGED@@ [24, abc]'), new Tagged(24n, 'abc')));
  assert.throws(() => parseYaml('!@@TAGGED@@ abc'), isInvalidInput(/@@TAGGED@@/));
});

test('parseYaml keeps map order and duplicate keys, expands aliases, and refuses several documents', () => {
  assert.ok(
    valueEquals(
      parseYaml('b: 1\n1: 2\na: 3\nb: 4'),
      new M([
        ['b', 1n],
        [1n, 2n],
        ['a', 3n],
        ['b', 4n],
      ]),
    ),
  );
  assert.ok(valueEquals(parseYaml('- &x {a: [1, 2.0]}\n- *x'), [M.of({ a: [1n, 2] }), M.of({ a: [1n, 2] })]));
  assert.ok(valueEquals(parseYaml('<<: {a: 1}'), new M([['<<', M.of({ a: 1n })]])), 'serde_yaml 0.9 does not merge `<<`');
  assert.throws(() => parseYaml('a: 1\n---\nb: 2'), isInvalidInput(/more than one document/));
  assert.throws(() => parseYaml('a: [1, 2\nb: 3'), isInvalidInput(/at line \d+ column \d+/));
  assert.throws(() => parseYaml('a: b: c'), isInvalidInput(/at line 1 column \d+/));
  assert.throws(() => parseYaml('['.repeat(130) + ']'.repeat(130)), isInvalidInput(/recursion limit exceeded/));
});

// ------------------------------------------------------------------------------ property test

/** Seeded PRNG (mulberry32). */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TRICKY = [
  'yes',
  'no',
  'on',
  '0',
  '-',
  ': ',
  '#',
  ' lead',
  'trail ',
  'ünïcödé ✓ 😀',
  '',
  'null',
  '~',
  '1e3',
  '0x10',
  '.inf',
  '-.inf',
  '.nan',
  'nan',
  'true',
  'False',
  '010',
  '+1',
  '-0',
  '1.',
  'a: b',
  'a:',
  '- x',
  '? x',
  "it's",
  '"dq"',
  '[x]',
  '{y}',
  '@at',
  '`t`',
  '%p',
  '*s',
  '&a',
  '!b',
  '|p',
  '>g',
  '---',
  '...',
  'a #b',
  'multi\nline',
  'end\n',
  'two\n\n',
  '\n',
  ' lead\nx',
  'trail \nx',
  'x\n y',
  'tab\there',
  'cr\rx',
  'nel\u0085',
  'bom\ufeff',
  'bell\u0007',
  'k'.repeat(140),
  'é'.repeat(70),
  'word '.repeat(40).trim(),
  '\\back',
  'x'.repeat(300),
];

function randomScalar(r: () => number): Value {
  const s = r();
  if (s < 0.35) return TRICKY[Math.floor(r() * TRICKY.length)]!;
  if (s < 0.5) return BigInt(Math.floor(r() * 2e6) - 1e6) * (r() < 0.2 ? 10n ** 15n : 1n);
  if (s < 0.6) return [0.5, 2, -0, 1e16, 1.5e-7, 0.1, 123.456, Infinity, -Infinity][Math.floor(r() * 9)]!;
  if (s < 0.7) return r() < 0.5;
  if (s < 0.75) return null;
  return 'w' + Math.floor(r() * 1000);
}

function randomValue(r: () => number, depth: number): Value {
  const k = r();
  if (depth >= 4 || k < 0.4) return randomScalar(r);
  if (k < 0.7) return Array.from({ length: Math.floor(r() * 4) }, () => randomValue(r, depth + 1));
  const m = new M();
  const n = Math.floor(r() * 4);
  for (let i = 0; i < n; i++) {
    const key: Value = r() < 0.3 ? BigInt(Math.floor(r() * 100)) : TRICKY[Math.floor(r() * TRICKY.length)]!;
    m.set(key, randomValue(r, depth + 1));
  }
  return m;
}

/** What the value looks like after JSON: integer keys become strings (serde_json's rule). */
const jsonView = (v: Value): Value =>
  v instanceof M
    ? new M(v.entries.map(([k, x]) => [typeof k === 'bigint' ? String(k) : k, jsonView(x)]))
    : Array.isArray(v)
      ? v.map(jsonView)
      : typeof v === 'number' && !Number.isFinite(v)
        ? null
        : v;

const sameValue = (a: Value, b: Value): boolean =>
  typeof a === 'number' && typeof b === 'number' && Number.isNaN(a)
    ? Number.isNaN(b)
    : Array.isArray(a) && Array.isArray(b)
      ? a.length === b.length && a.every((x, i) => sameValue(x, b[i]!))
      : a instanceof M && b instanceof M
        ? a.size === b.size && a.entries.every(([k, x], i) => sameValue(k, b.entries[i]![0]) && sameValue(x, b.entries[i]![1]))
        : valueEquals(a, b);

test('property: random values round-trip toYaml → parseYaml and toJsonPretty → parseJson unchanged', () => {
  const r = prng(20260315);
  for (let i = 0; i < 500; i++) {
    const v = randomValue(r, 0);
    const yaml = toYaml(v);
    assert.ok(sameValue(parseYaml(yaml), v), `YAML round trip failed (case ${i}):\n${yaml}`);
    const json = toJsonPretty(v);
    assert.ok(sameValue(parseJson(json), jsonView(v)), `JSON round trip failed (case ${i}):\n${json}`);
    assert.ok(sameValue(parseYaml(json), jsonView(v)), `JSON read as YAML differs (case ${i}):\n${json}`);
  }
});
