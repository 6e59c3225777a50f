/**
 * JSON as serde_json reads and writes it. Browser-safe (no `node:` imports).
 *
 * - `parseJson` is lossless: integers (no `.`/exponent) become bigints of any size, other numbers
 *   floats, objects `ValueMap`s in source order with duplicate keys kept. Strict JSON as
 *   serde_json accepts it (`-0` is the float -0.0 there, out-of-range floats and lone surrogate
 *   escapes are errors, nesting is limited to 127 levels).
 * - `toJsonCompact` / `toJsonPretty` print byte for byte as `serde_json::to_string` /
 *   `to_string_pretty` print a ciborium `Value`: floats through ryu, non-finite floats as `null`,
 *   bytes as an array of numbers, tags as `{"@@TAGGED@@":[tag,value]}`, no trailing newline.
 */
import { CharmsError } from '../errors.js';
import { Tagged, ValueMap, type Value } from './value.js';
import { formatFloatRyu } from './float-format.js';

// ------------------------------------------------------------------------------ parser

/** serde_json's default recursion limit: the 128th nested container is refused. */
const MAX_DEPTH = 127;

// Runs of characters that need no attention inside a string, and the number grammar.
const PLAIN_RUN = /[^"\\\u0000-\u001f]*/y;
const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;

class JsonParser {
  pos = 0;
  constructor(private readonly text: string) {}

  fail(message: string, at = this.pos): never {
    let line = 1;
    let lineStart = 0;
    const end = Math.min(at, this.text.length);
    for (let k = this.text.indexOf('\n'); k !== -1 && k < end; k = this.text.indexOf('\n', k + 1)) {
      line++;
      lineStart = k + 1;
    }
    throw new CharmsError('INVALID_INPUT', `invalid JSON: ${message} at line ${line} column ${end - lineStart + 1}`);
  }

  skipWhitespace(): void {
    const s = this.text;
    let i = this.pos;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
    this.pos = i;
  }

  value(depth: number): Value {
    this.skipWhitespace();
    const c = this.text.charCodeAt(this.pos);
    switch (c) {
      case 0x7b /* { */:
        return this.object(depth + 1);
      case 0x5b /* [ */:
        return this.array(depth + 1);
      case 0x22 /* " */:
        return this.string();
      case 0x74 /* t */:
        return this.literal('true', true);
      case 0x66 /* f */:
        return this.literal('false', false);
      case 0x6e /* n */:
        return this.literal('null', null);
      default:
        if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
        if (Number.isNaN(c)) this.fail('EOF while parsing a value');
        return this.fail('expected value');
    }
  }

  literal(word: string, v: Value): Value {
    if (!this.text.startsWith(word, this.pos)) this.fail('expected ident');
    this.pos += word.length;
    return v;
  }

  number(): Value {
    NUMBER.lastIndex = this.pos;
    const m = NUMBER.exec(this.text);
    const next = this.text.charCodeAt(this.pos + (m ? m[0].length : 0));
    // `01`, `1.`, `1e`, `-`: the grammar stops early and a digit, `.` or exponent follows
    if (!m || (next >= 0x30 && next <= 0x39) || next === 0x2e || next === 0x65 || next === 0x45) this.fail('invalid number', this.pos + (m ? m[0].length : 0));
    const text = m[0];
    const start = this.pos;
    this.pos += text.length;
    if (m[1] === undefined && m[2] === undefined) return text === '-0' ? -0 : BigInt(text);
    const f = Number(text);
    if (!Number.isFinite(f)) this.fail('number out of range', start);
    return f;
  }

  string(): string {
    const s = this.text;
    let i = this.pos + 1; // after the opening quote
    let out = '';
    for (;;) {
      PLAIN_RUN.lastIndex = i;
      PLAIN_RUN.exec(s);
      const runEnd = PLAIN_RUN.lastIndex;
      if (runEnd > i) out += s.slice(i, runEnd);
      i = runEnd;
      const c = s.charCodeAt(i);
      if (c === 0x22) {
        this.pos = i + 1;
        return out;
      }
      if (Number.isNaN(c)) this.fail('EOF while parsing a string', i);
      if (c < 0x20) this.fail('control character (\\u0000-\\u001F) found while parsing a string', i);
      // backslash
      const e = s[i + 1];
      i += 2;
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          const unit = this.hex4(i);
          i += 4;
          if (unit >= 0xdc00 && unit <= 0xdfff) this.fail('lone leading surrogate in hex escape', i);
          if (unit >= 0xd800 && unit <= 0xdbff) {
            if (s[i] !== '\\' || s[i + 1] !== 'u') this.fail('unexpected end of hex escape', i);
            const low = this.hex4(i + 2);
            if (low < 0xdc00 || low > 0xdfff) this.fail('lone leading surrogate in hex escape', i + 6);
            out += String.fromCharCode(unit, low);
            i += 6;
          } else out += String.fromCharCode(unit);
          break;
        }
        default:
          this.fail(e === undefined ? 'EOF while parsing a string' : 'invalid escape', i - 1);
      }
    }
  }

  hex4(at: number): number {
    const h = this.text.slice(at, at + 4);
    if (h.length < 4) this.fail('EOF while parsing a string', this.text.length);
    if (!/^[0-9a-fA-F]{4}$/.test(h)) this.fail('invalid escape', at);
    return parseInt(h, 16);
  }

  array(depth: number): Value[] {
    if (depth > MAX_DEPTH) this.fail('recursion limit exceeded');
    this.pos++;
    const out: Value[] = [];
    this.skipWhitespace();
    if (this.text.charCodeAt(this.pos) === 0x5d) {
      this.pos++;
      return out;
    }
    for (;;) {
      out.push(this.value(depth));
      this.skipWhitespace();
      const c = this.text.charCodeAt(this.pos);
      if (c === 0x5d) {
        this.pos++;
        return out;
      }
      if (c !== 0x2c) this.fail(Number.isNaN(c) ? 'EOF while parsing a list' : 'expected `,` or `]`');
      this.pos++;
      this.skipWhitespace();
      if (this.text.charCodeAt(this.pos) === 0x5d) this.fail('trailing comma');
    }
  }

  object(depth: number): ValueMap {
    if (depth > MAX_DEPTH) this.fail('recursion limit exceeded');
    this.pos++;
    const map = new ValueMap();
    this.skipWhitespace();
    if (this.text.charCodeAt(this.pos) === 0x7d) {
      this.pos++;
      return map;
    }
    for (;;) {
      this.skipWhitespace();
      const q = this.text.charCodeAt(this.pos);
      if (q !== 0x22) this.fail(Number.isNaN(q) ? 'EOF while parsing an object' : q === 0x7d ? 'trailing comma' : 'key must be a string');
      const key = this.string();
      this.skipWhitespace();
      const colon = this.text.charCodeAt(this.pos);
      if (colon !== 0x3a) this.fail(Number.isNaN(colon) ? 'EOF while parsing an object' : 'expected `:`');
      this.pos++;
      map.entries.push([key, this.value(depth)]);
      this.skipWhitespace();
      const c = this.text.charCodeAt(this.pos);
      if (c === 0x7d) {
        this.pos++;
        return map;
      }
      if (c !== 0x2c) this.fail(Number.isNaN(c) ? 'EOF while parsing an object' : 'expected `,` or `}`');
      this.pos++;
    }
  }
}

/**
 * Parses one JSON text losslessly (see the module comment). Throws CharmsError INVALID_INPUT
 * with the line and column of the first problem.
 */
export function parseJson(text: string): Value {
  const p = new JsonParser(text);
  const v = p.value(0);
  p.skipWhitespace();
  if (p.pos < text.length) p.fail('trailing characters');
  return v;
}

/**
 * Parses one JSON text into plain JavaScript values (`JSON.parse`: numbers as floats, objects as
 * plain objects), nesting bounded as `parseJson` bounds it and checked before parsing, so no
 * later walk over the value (printing it, `String(v)`) can overflow the stack. Throws CharmsError
 * INVALID_INPUT.
 */
export function parsePlainJson(text: string): unknown {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      // skip the string (escapes included); an unterminated one is JSON.parse's to refuse
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_DEPTH) throw new CharmsError('INVALID_INPUT', `invalid JSON: nested deeper than ${MAX_DEPTH} levels`);
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new CharmsError('INVALID_INPUT', `invalid JSON: ${(e as Error).message}`);
  }
}

// ------------------------------------------------------------------------------ printers

const SHORT_ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};
const NEEDS_ESCAPE = /["\\\u0000-\u001f]/g;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** A JSON string literal as serde_json writes it: only `"`, `\` and C0 controls are escaped. */
export function jsonString(s: string): string {
  if (LONE_SURROGATE.test(s)) throw new CharmsError('INVALID_INPUT', 'cannot print JSON: string contains a lone UTF-16 surrogate');
  return '"' + s.replace(NEEDS_ESCAPE, (c) => SHORT_ESCAPES[c] ?? '\\u00' + c.charCodeAt(0).toString(16).padStart(2, '0')) + '"';
}

/** serde_json's map-key rule: strings as they are; integers, bools and finite floats quoted. */
function mapKey(k: Value): string {
  if (typeof k === 'string') return jsonString(k);
  if (typeof k === 'bigint' || typeof k === 'boolean') return `"${k}"`;
  if (typeof k === 'number') {
    if (!Number.isFinite(k)) throw new CharmsError('INVALID_INPUT', 'cannot print JSON: float key must be finite');
    return `"${formatFloatRyu(k)}"`;
  }
  throw new CharmsError('INVALID_INPUT', `cannot print JSON: key must be a string (found ${describe(k)})`);
}

function describe(v: Value): string {
  if (v === null || v === undefined) return 'null';
  if (v instanceof Uint8Array) return 'bytes';
  if (Array.isArray(v)) return 'array';
  if (v instanceof ValueMap) return 'map';
  if (v instanceof Tagged) return 'tag';
  return typeof v;
}

/** Appends `v` to `out`; `indent` is null for compact output, else the indentation of `v`'s line. */
function write(v: Value, indent: string | null, out: string[]): void {
  switch (typeof v) {
    case 'bigint':
      out.push(v.toString());
      return;
    case 'number':
      out.push(Number.isFinite(v) ? formatFloatRyu(v) : 'null');
      return;
    case 'string':
      out.push(jsonString(v));
      return;
    case 'boolean':
      out.push(v ? 'true' : 'false');
      return;
    case 'undefined':
      out.push('null');
      return;
  }
  if (v === null) return void out.push('null');
  if (v instanceof Uint8Array) return void out.push(bytesArray(v, indent));
  if (v instanceof Tagged) return write(new ValueMap([['@@TAGGED@@', [v.tag, v.value]]]), indent, out);
  const inner = indent === null ? null : indent + '  ';
  const open = inner === null ? '' : '\n' + inner;
  const sep = inner === null ? ',' : ',\n' + inner;
  const close = indent === null ? '' : '\n' + indent;
  if (Array.isArray(v)) {
    if (v.length === 0) return void out.push('[]');
    out.push('[', open);
    for (let i = 0; i < v.length; i++) {
      if (i > 0) out.push(sep);
      write(v[i]!, inner, out);
    }
    out.push(close, ']');
    return;
  }
  if (v instanceof ValueMap) {
    if (v.entries.length === 0) return void out.push('{}');
    const colon = inner === null ? ':' : ': ';
    out.push('{', open);
    v.entries.forEach(([k, x], i) => {
      if (i > 0) out.push(sep);
      out.push(mapKey(k), colon);
      write(x, inner, out);
    });
    out.push(close, '}');
    return;
  }
  throw new CharmsError('INTERNAL', `cannot print a ${typeof v} as JSON`);
}

function bytesArray(b: Uint8Array, indent: string | null): string {
  if (b.length === 0) return '[]';
  const items = Array.from(b, String);
  if (indent === null) return '[' + items.join(',') + ']';
  const inner = indent + '  ';
  return '[\n' + inner + items.join(',\n' + inner) + '\n' + indent + ']';
}

/** `serde_json::to_string`: no spaces, no trailing newline. */
export function toJsonCompact(v: Value): string {
  const out: string[] = [];
  write(v, null, out);
  return out.join('');
}

/** `serde_json::to_string_pretty`: 2-space indent, `": "`, `{}`/`[]` when empty, no trailing newline. */
export function toJsonPretty(v: Value): string {
  const out: string[] = [];
  write(v, '', out);
  return out.join('');
}
