/**
 * JSON as serde_json reads and writes it: a lossless parser (integers stay bigints, maps keep
 * their order) and byte-exact compact and pretty printers. Browser-safe.
 */
import { CharmsError } from '../errors.js';
import { Tagged, ValueMap, type Value } from './value.js';
import { formatFloatRyu } from './float-format.js';

// ------------------------------------------------------------------------------ parser

class JsonParser {
  i = 0;
  constructor(private s: string) {}

  fail(msg: string): never {
    let line = 1;
    let col = 1;
    for (let k = 0; k < this.i && k < this.s.length; k++) {
      if (this.s[k] === '\n') {
        line++;
        col = 1;
      } else col++;
    }
    throw new CharmsError('INVALID_INPUT', `${msg} at line ${line} column ${col}`);
  }

  ws(): void {
    const s = this.s;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.i++;
      else break;
    }
  }

  value(depth: number): Value {
    if (depth > 512) this.fail('recursion limit exceeded');
    this.ws();
    const c = this.s[this.i];
    if (c === '{') return this.object(depth);
    if (c === '[') return this.array(depth);
    if (c === '"') return this.string();
    if (c === 't') return this.literal('true', true);
    if (c === 'f') return this.literal('false', false);
    if (c === 'n') return this.literal('null', null);
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.number();
    if (c === undefined) this.fail('EOF while parsing a value');
    this.fail('expected value');
  }

  literal(word: string, v: Value): Value {
    if (this.s.startsWith(word, this.i)) {
      this.i += word.length;
      return v;
    }
    this.fail('expected value');
  }

  number(): Value {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(this.s.slice(this.i, this.i + 400));
    if (!m) this.fail('invalid number');
    const text = m[0];
    // very long numbers: re-run without the window
    const full = text.length === 400 ? /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(this.s.slice(this.i))![0] : text;
    this.i += full.length;
    if (/[.eE]/.test(full)) return Number(full);
    return BigInt(full);
  }

  string(): string {
    const s = this.s;
    this.i++; // opening quote
    let out = '';
    let start = this.i;
    for (;;) {
      if (this.i >= s.length) this.fail('EOF while parsing a string');
      const c = s.charCodeAt(this.i);
      if (c === 0x22) {
        out += s.slice(start, this.i);
        this.i++;
        return out;
      }
      if (c < 0x20) this.fail('control character (\\u0000-\\u001F) found while parsing a string');
      if (c === 0x5c) {
        out += s.slice(start, this.i);
        const e = s[this.i + 1];
        this.i += 2;
        switch (e) {
          case '"':
            out += '"';
            break;
          case '\\':
            out += '\\';
            break;
          case '/':
            out += '/';
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
            const h = s.slice(this.i, this.i + 4);
            if (!/^[0-9a-fA-F]{4}$/.test(h)) this.fail('invalid escape');
            out += String.fromCharCode(parseInt(h, 16));
            this.i += 4;
            break;
          }
          default:
            this.fail('invalid escape');
        }
        start = this.i;
        continue;
      }
      this.i++;
    }
  }

  array(depth: number): Value[] {
    this.i++;
    const out: Value[] = [];
    this.ws();
    if (this.s[this.i] === ']') {
      this.i++;
      return out;
    }
    for (;;) {
      out.push(this.value(depth + 1));
      this.ws();
      const c = this.s[this.i++];
      if (c === ']') return out;
      if (c !== ',') this.fail('expected `,` or `]`');
    }
  }

  object(depth: number): ValueMap {
    this.i++;
    const m = new ValueMap();
    this.ws();
    if (this.s[this.i] === '}') {
      this.i++;
      return m;
    }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') this.fail('key must be a string');
      const k = this.string();
      this.ws();
      if (this.s[this.i++] !== ':') this.fail('expected `:`');
      m.entries.push([k, this.value(depth + 1)]);
      this.ws();
      const c = this.s[this.i++];
      if (c === '}') return m;
      if (c !== ',') this.fail('expected `,` or `}`');
    }
  }
}

export function parseJson(text: string): Value {
  const p = new JsonParser(text);
  const v = p.value(0);
  p.ws();
  if (p.i < text.length) p.fail('trailing characters');
  return v;
}

// ------------------------------------------------------------------------------ printers

const ESC: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

export function jsonString(s: string): string {
  // serde_json escapes only quote, backslash and control characters
  return '"' + s.replace(/["\\\u0000-\u001f]/g, (c) => ESC[c] ?? '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')) + '"';
}

function mapKey(k: Value): string {
  if (typeof k === 'string') return jsonString(k);
  if (typeof k === 'bigint') return `"${k}"`;
  if (typeof k === 'boolean') return `"${k}"`;
  throw new CharmsError('INVALID_INPUT', 'key must be a string');
}

function scalar(v: Value): string | undefined {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isFinite(v) ? formatFloatRyu(v) : 'null';
  if (typeof v === 'string') return jsonString(v);
  return undefined;
}

function write(v: Value, indent: string | null, level: number, out: string[]): void {
  const s = scalar(v);
  if (s !== undefined) {
    out.push(s);
    return;
  }
  if (v instanceof Uint8Array) return write(Array.from(v, (b) => BigInt(b)), indent, level, out);
  if (v instanceof Tagged) return write(new ValueMap([['@@TAGGED@@', [v.tag, v.value]]]), indent, level, out);
  const nl = indent === null ? '' : '\n' + indent.repeat(level + 1);
  const close = indent === null ? '' : '\n' + indent.repeat(level);
  if (Array.isArray(v)) {
    if (v.length === 0) return void out.push('[]');
    out.push('[');
    v.forEach((x, i) => {
      out.push(i ? ',' + nl : nl);
      write(x, indent, level + 1, out);
    });
    out.push(close + ']');
    return;
  }
  if (v instanceof ValueMap) {
    if (v.entries.length === 0) return void out.push('{}');
    out.push('{');
    v.entries.forEach(([k, x], i) => {
      out.push((i ? ',' + nl : nl) + mapKey(k) + (indent === null ? ':' : ': '));
      write(x, indent, level + 1, out);
    });
    out.push(close + '}');
    return;
  }
  throw new CharmsError('INTERNAL', `cannot print ${typeof v} as JSON`);
}

/** serde_json::to_string */
export function toJsonCompact(v: Value): string {
  const out: string[] = [];
  write(v, null, 0, out);
  return out.join('');
}

/** serde_json::to_string_pretty (2-space indent, no trailing newline) */
export function toJsonPretty(v: Value): string {
  const out: string[] = [];
  write(v, '  ', 0, out);
  return out.join('');
}
