import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { parseJson, toJsonCompact, toJsonPretty } from './json.js';
import { Tagged, ValueMap, valueEquals, type Value } from './value.js';
import { CharmsError } from '../errors.js';
import { readSharedText, sharedOrSkip, sharedPath } from '../testing/shared.js';

const isInvalidInput = (re: RegExp) => (e: unknown) => e instanceof CharmsError && e.code === 'INVALID_INPUT' && re.test(e.message);

test('show-spell v12: the expected JSON re-prints byte for byte', (t) => {
  if (!sharedOrSkip(t)) return;
  const text = readSharedText('vectors', 'bitcoin-v12-show-spell.expected.json');
  const v = parseJson(text);
  assert.equal(toJsonPretty(v), text);
  // no floats and no integers past 2^53 here, so JSON.stringify is an independent oracle for compact output
  assert.equal(toJsonCompact(v), JSON.stringify(JSON.parse(text)));
  const outs = ((v as ValueMap).get('tx') as ValueMap).get('outs') as Value[];
  assert.ok(valueEquals(outs[0]!, new ValueMap([['1', 11600000000n]])));
});

/** The lines of the `"spell": {…}` member of a chain record, de-indented: the text show-spell printed. */
function spellTextOf(record: string): string | undefined {
  const lines = record.split('\n');
  const start = lines.indexOf('  "spell": {');
  if (start < 0) return undefined;
  const end = lines.indexOf('  },', start);
  const body = lines.slice(start, end + 1).map((l) => l.slice(2));
  body[0] = '{';
  body[body.length - 1] = '}';
  return body.join('\n');
}

test('chain vectors: every record and every show-spell JSON re-prints identically', (t) => {
  if (!sharedOrSkip(t)) return;
  const dir = sharedPath('vectors', 'chain', 'expected');
  const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  assert.ok(files.length >= 30, `expected the chain vectors, found ${files.length}`);
  let spells = 0;
  for (const f of files) {
    const text = readSharedText('vectors', 'chain', 'expected', f);
    const record = parseJson(text) as ValueMap;
    assert.equal(toJsonPretty(record) + '\n', text, f);
    const spell = record.get('spell');
    if (spell === null) continue;
    spells++;
    const exact = spellTextOf(text);
    assert.ok(exact !== undefined, `${f}: spell text not found`);
    assert.equal(toJsonPretty(spell!), exact, f);
    assert.ok(valueEquals(parseJson(exact), spell!), f);
  }
  assert.ok(spells >= 14, `expected at least 14 verified spells, found ${spells}`);
});

test('floats print as serde_json (ryu) prints them; non-finite floats are null', () => {
  const cases: [number, string][] = [
    [2, '2.0'],
    [0.1, '0.1'],
    [-3.25, '-3.25'],
    [1e15, '1000000000000000.0'],
    [1e16, '1e16'],
    [1.5e16, '1.5e16'],
    [123456789012345680, '1.2345678901234568e17'],
    [1e-5, '0.00001'],
    [1.5e-5, '0.000015'],
    [1e-6, '1e-6'],
    [1.5e-7, '1.5e-7'],
    [5e-324, '5e-324'],
    [1.7976931348623157e308, '1.7976931348623157e308'],
    [-0, '-0.0'],
    [0, '0.0'],
    [NaN, 'null'],
    [Infinity, 'null'],
    [-Infinity, 'null'],
  ];
  for (const [v, s] of cases) assert.equal(toJsonCompact(v), s, String(v));
});

test('strings escape only quote, backslash and control characters', () => {
  const s = 'q" b\\ \b\f\n\r\t \u0000\u0001\u001f \u007f é ✓ 😀 \u2028';
  assert.equal(toJsonCompact(s), '"q\\" b\\\\ \\b\\f\\n\\r\\t \\u0000\\u0001\\u001f \u007f é ✓ 😀 \u2028"');
  assert.equal(parseJson(toJsonCompact(s)), s);
  assert.throws(() => toJsonCompact('\ud800x'), isInvalidInput(/lone UTF-16 surrogate/));
});

test('map keys follow serde_json: strings, integers, bools and finite floats; others fail', () => {
  const m = new ValueMap([
    ['s', 1n],
    [0n, 2n],
    [-7n, 3n],
    [true, 4n],
    [1.5, 5n],
    [18446744073709551616n, 6n],
  ]);
  assert.equal(toJsonCompact(m), '{"s":1,"0":2,"-7":3,"true":4,"1.5":5,"18446744073709551616":6}');
  assert.throws(() => toJsonCompact(new ValueMap([[NaN, 1n]])), isInvalidInput(/float key must be finite/));
  for (const k of [null, ['a'], new ValueMap(), new Uint8Array([1]), new Tagged(1n, 'x')] as Value[])
    assert.throws(() => toJsonCompact(new ValueMap([[k, 1n]])), isInvalidInput(/key must be a string/));
});

test('pretty and compact layout: empty containers, nesting, bytes, tags, undefined', () => {
  const v = ValueMap.of({ a: [], b: new ValueMap(), c: [1n, ValueMap.of({ d: null })], e: new Uint8Array([0, 255]), f: new Tagged(24n, 'x'), g: undefined });
  assert.equal(toJsonCompact(v), '{"a":[],"b":{},"c":[1,{"d":null}],"e":[0,255],"f":{"@@TAGGED@@":[24,"x"]},"g":null}');
  assert.equal(
    toJsonPretty(v),
    [
      '{',
      '  "a": [],',
      '  "b": {},',
      '  "c": [',
      '    1,',
      '    {',
      '      "d": null',
      '    }',
      '  ],',
      '  "e": [',
      '    0,',
      '    255',
      '  ],',
      '  "f": {',
      '    "@@TAGGED@@": [',
      '      24,',
      '      "x"',
      '    ]',
      '  },',
      '  "g": null',
      '}',
    ].join('\n'),
  );
  assert.equal(toJsonPretty(new Uint8Array()), '[]');
  assert.equal(toJsonPretty('x'), '"x"');
});

test('parsing is lossless: bigints of any size, float vs integer, key order, duplicates', () => {
  const v = parseJson('{"b": 18446744073709551615, "1": 2.0, "a": -1, "a": 1e2, "big": -123456789012345678901234567890, "z": -0, "f": 0.5E-3}');
  assert.ok(v instanceof ValueMap);
  assert.deepEqual(v.entries, [
    ['b', 18446744073709551615n],
    ['1', 2],
    ['a', -1n],
    ['a', 100],
    ['big', -123456789012345678901234567890n],
    ['z', -0],
    ['f', 0.0005],
  ]);
  assert.ok(Object.is(v.entries[5]![1] as number, -0), 'serde_json reads -0 as the float -0.0');
  assert.deepEqual(parseJson(' \t\r\n[ 1 ]\n'), [1n]);
  assert.deepEqual(parseJson('[true,false,null,"\\u00e9\\ud83d\\ude00\\/"]'), [true, false, null, 'é😀/']);
});

test('bad JSON fails with INVALID_INPUT and a line and column', () => {
  const bad: [string, RegExp][] = [
    ['', /EOF while parsing a value at line 1 column 1/],
    ['{', /EOF while parsing an object/],
    ['[1,]', /trailing comma at line 1 column 4/],
    ['{"a":1,}', /trailing comma/],
    ['{"a" 1}', /expected `:`/],
    ['{1:2}', /key must be a string/],
    ['01', /invalid number/],
    ['1.', /invalid number/],
    ['1e', /invalid number/],
    ['-', /invalid number/],
    ['.5', /expected value/],
    ['+1', /expected value/],
    ['1e400', /number out of range/],
    ['"a\u0001"', /control character/],
    ['"\\x"', /invalid escape/],
    ['"\\udc00"', /lone leading surrogate/],
    ['"\\ud800x"', /unexpected end of hex escape/],
    ['"abc', /EOF while parsing a string/],
    ['1 2', /trailing characters at line 1 column 3/],
    ['nul', /expected ident/],
    ['NaN', /expected value/],
    ['\ufeff{}', /expected value/],
    ['{\n  "a": [1,\n    x]}', /expected value at line 3 column 5/],
  ];
  for (const [text, re] of bad) assert.throws(() => parseJson(text), isInvalidInput(re), JSON.stringify(text));
});

test('nesting is limited like serde_json: 127 levels parse, 128 do not', () => {
  assert.ok(Array.isArray(parseJson('['.repeat(127) + ']'.repeat(127))));
  assert.throws(() => parseJson('['.repeat(128) + ']'.repeat(128)), isInvalidInput(/recursion limit exceeded/));
  assert.throws(() => parseJson('{"a":'.repeat(128) + '1' + '}'.repeat(128)), isInvalidInput(/recursion limit exceeded/));
});

test('multi-megabyte input (a request with base64 binaries) and 200k small objects parse (speed: bench/codec)', () => {
  const blob = Buffer.alloc(6 * 1024 * 1024, 7).toString('base64'); // 8 MiB of base64
  const text = toJsonPretty(ValueMap.of({ binaries: ValueMap.of({ ['a'.repeat(64)]: blob }), n: [1n, 2n, 3n] }));
  const v = parseJson(text) as ValueMap;
  assert.equal((v.get('binaries') as ValueMap).get('a'.repeat(64)), blob);
  assert.deepEqual(v.get('n'), [1n, 2n, 3n]);
  const many = '[' + Array.from({ length: 200_000 }, (_, i) => `{"k${i}":${i},"s":"x\\ny"}`).join(',') + ']';
  const parsed = parseJson(many) as ValueMap[];
  assert.equal(parsed.length, 200_000);
  assert.equal(parsed[199_999]!.get('k199999'), 199_999n);
  assert.equal(parsed[0]!.get('s'), 'x\ny');
});
