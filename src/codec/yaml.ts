/**
 * YAML as serde_yaml 0.9 reads and writes it. Reading uses the `yaml` package (YAML 1.2 core
 * schema, integers as bigints, maps in order); a custom tag such as `!bitcoin <hex>` becomes the
 * externally tagged enum form `{bitcoin: <value>}`, as serde_yaml deserializes it. Writing
 * follows libyaml's emitter (which serde_yaml uses) byte for byte for the block styles Charms
 * prints: plain vs quoted scalars, `? key` for keys over 128 characters, sequences in mappings
 * not indented, `{}`/`[]` for empty collections.
 */
import { Alias, isAlias, isMap, isScalar, isSeq, parseAllDocuments, type Node as YamlNode, type Document } from 'yaml';
import { CharmsError } from '../errors.js';
import { Tagged, ValueMap, type Value } from './value.js';
import { formatFloatRyu } from './float-format.js';

// ------------------------------------------------------------------------------ reading

function fromNode(node: unknown, doc: Document, depth: number): Value {
  if (depth > 256) throw new CharmsError('INVALID_INPUT', 'YAML nests too deeply');
  if (node === null || node === undefined) return null;
  if (isAlias(node)) return fromNode((node as Alias).resolve(doc), doc, depth + 1);
  const n = node as YamlNode & { tag?: string };
  let v: Value;
  if (isMap(n)) {
    v = new ValueMap(n.items.map((p) => [fromNode(p.key, doc, depth + 1), fromNode(p.value, doc, depth + 1)]));
  } else if (isSeq(n)) {
    v = n.items.map((x) => fromNode(x, doc, depth + 1));
  } else if (isScalar(n)) {
    const x = n.value;
    if (x === null || x === undefined) v = null;
    else if (typeof x === 'bigint' || typeof x === 'boolean' || typeof x === 'string') v = x;
    else if (typeof x === 'number') v = Number.isInteger(x) && !/[.eEnN]/.test(String(n.source ?? '')) ? BigInt(x) : x;
    else v = String(x);
  } else throw new CharmsError('INVALID_INPUT', 'unsupported YAML node');
  const tag = n.tag;
  if (tag && tag.startsWith('!') && !tag.startsWith('!!') && !tag.startsWith('tag:yaml.org'))
    return new ValueMap([[tag.slice(1), typeof v === 'bigint' && isScalar(n) ? String(n.source ?? v) : v]]);
  return v;
}

/** Parses one YAML document (JSON is YAML too) into a Value. */
export function parseYaml(text: string): Value {
  const docs = parseAllDocuments(text, { intAsBigInt: true, schema: 'core', uniqueKeys: false, prettyErrors: false });
  if (!Array.isArray(docs)) throw new CharmsError('INVALID_INPUT', 'YAML: empty stream');
  if (docs.length > 1) throw new CharmsError('INVALID_INPUT', 'YAML: expected one document, found several');
  const doc = docs[0];
  if (!doc) return null;
  if (doc.errors.length > 0) throw new CharmsError('INVALID_INPUT', `YAML: ${doc.errors[0]!.message.split('\n')[0]}`);
  return fromNode(doc.contents, doc, 0);
}

// ------------------------------------------------------------------------------ writing

/** Would serde_yaml read this plain string back as something other than a string? */
function looksNonString(s: string): boolean {
  if (['', '~', 'null', 'Null', 'NULL', 'true', 'True', 'TRUE', 'false', 'False', 'FALSE'].includes(s)) return true;
  if (/^[-+]?(0|[1-9][0-9]*)$/.test(s) || /^[-+]?[0-9]+$/.test(s)) return true;
  if (/^[-+]?0x[0-9a-fA-F]+$/.test(s) || /^[-+]?0o[0-7]+$/.test(s) || /^[-+]?0b[01]+$/.test(s)) return true;
  if (/^[-+]?\.(inf|Inf|INF)$/.test(s) || /^\.(nan|NaN|NAN)$/.test(s)) return true;
  // Rust f64::from_str on an optional-sign decimal / exponent form (finite values only)
  const unsigned = s.startsWith('+') ? s.slice(1) : s;
  return /^-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/.test(unsigned);
}

const isPrintable = (c: number): boolean =>
  c === 0x0a ||
  (c >= 0x20 && c <= 0x7e) ||
  c === 0x85 ||
  (c >= 0xa0 && c <= 0xd7ff) ||
  (c >= 0xe000 && c <= 0xfffd && c !== 0xfeff) ||
  c >= 0x10000;

interface Analysis {
  plain: boolean;
  single: boolean;
}

/** libyaml's scalar analysis, block context. */
function analyze(s: string): Analysis {
  if (s.length === 0) return { plain: false, single: true };
  if (s.startsWith('---') || s.startsWith('...')) return { plain: false, single: true };
  const chars = [...s];
  let indicators = false;
  let special = false;
  let lineBreak = false;
  let spaceBreak = false;
  let previousSpace = false;
  let previousBreak = false;
  const ws = (ch: string | undefined) => ch === undefined || ch === ' ' || ch === '\n' || ch === '\t' || ch === '\r';
  chars.forEach((ch, i) => {
    const next = chars[i + 1];
    const followedByWs = ws(next);
    if (i === 0) {
      if ('#,[]{}&*!|>\'"%@`'.includes(ch)) indicators = true;
      if ((ch === '?' || ch === ':') && followedByWs) indicators = true;
      if (ch === '-' && followedByWs) indicators = true;
    } else {
      if (ch === ':' && followedByWs) indicators = true;
      if (ch === '#' && ws(chars[i - 1])) indicators = true;
    }
    const code = ch.codePointAt(0)!;
    if (!isPrintable(code) || code === 0xfeff) special = true;
    if (ch === '\n') lineBreak = true;
    if (ch === ' ') {
      previousSpace = true;
      previousBreak = false;
    } else if (ch === '\n') {
      if (previousSpace) spaceBreak = true;
      previousBreak = true;
      previousSpace = false;
    } else {
      previousSpace = false;
      previousBreak = false;
    }
  });
  const leadingSpace = chars[0] === ' ';
  const trailingSpace = chars[chars.length - 1] === ' ';
  void previousBreak;
  let plain = !indicators && !leadingSpace && !trailingSpace && !lineBreak && !spaceBreak;
  let single = !spaceBreak;
  if (special) plain = single = false;
  return { plain, single };
}

const WIDTH = 80;

/** A plain scalar, folded at spaces past the line width as libyaml does. */
function writePlain(s: string, column: number, indent: number): string {
  let out = '';
  let col = column;
  const chars = [...s];
  chars.forEach((ch, i) => {
    if (ch === ' ' && col > WIDTH && chars[i - 1] !== ' ' && chars[i + 1] !== ' ' && i > 0) {
      out += '\n' + ' '.repeat(indent);
      col = indent;
      return;
    }
    out += ch;
    col++;
  });
  return out;
}

function doubleQuoted(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    const esc: Record<number, string> = {
      0: '\\0', 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r', 27: '\\e',
      0x22: '\\"', 0x5c: '\\\\', 0x85: '\\N', 0xa0: '\\_', 0x2028: '\\L', 0x2029: '\\P',
    };
    if (esc[c] !== undefined) out += esc[c];
    else if (isPrintable(c) && c !== 0xfeff) out += ch;
    else if (c <= 0xff) out += '\\x' + c.toString(16).toUpperCase().padStart(2, '0');
    else if (c <= 0xffff) out += '\\u' + c.toString(16).toUpperCase().padStart(4, '0');
    else out += '\\U' + c.toString(16).toUpperCase().padStart(8, '0');
  }
  return out + '"';
}

function literalBlock(s: string, indent: number): string {
  const trailing = s.match(/\n*$/)![0].length;
  const chomp = trailing === 0 ? '-' : trailing === 1 ? '' : '+';
  const indicator = s.startsWith(' ') || s.startsWith('\n') ? String(2) : '';
  const body = trailing === 0 ? s : s.slice(0, s.length - trailing);
  const pad = ' '.repeat(indent);
  const lines = body.split('\n').map((l) => (l === '' ? '' : pad + l));
  let out = `|${indicator}${chomp}\n${lines.join('\n')}`;
  if (trailing > 1) out += '\n'.repeat(trailing - 1);
  return out;
}

/** A string scalar; `column` is where it starts, `indent` the continuation indentation. */
function stringScalar(s: string, column: number, indent: number, asKey: boolean): string {
  if (s.includes('\n') && !asKey) {
    const a = analyze(s);
    if (a.single || a.plain || !/[^\n -~\u0085\u00a0-\ud7ff\ue000-\ufffd]/.test(s)) return literalBlock(s, indent);
  }
  if (looksNonString(s)) return `'${s.replace(/'/g, "''")}'`;
  const a = analyze(s);
  if (a.plain) return asKey ? s : writePlain(s, column, indent);
  if (a.single && !s.includes('\n')) return `'${s.replace(/'/g, "''")}'`;
  return doubleQuoted(s);
}

function scalarText(v: Value, column: number, indent: number, asKey = false): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return '.nan';
    if (v === Infinity) return '.inf';
    if (v === -Infinity) return '-.inf';
    return formatFloatRyu(v);
  }
  if (typeof v === 'string') return stringScalar(v, column, indent, asKey);
  if (v instanceof Uint8Array)
    throw new CharmsError('INVALID_INPUT', 'serialization and deserialization of bytes in YAML is not implemented');
  if (Array.isArray(v) && v.length === 0) return '[]';
  if (v instanceof ValueMap && v.entries.length === 0) return '{}';
  throw new CharmsError('INTERNAL', 'not a YAML scalar');
}

const isCollection = (v: Value): boolean =>
  (Array.isArray(v) && v.length > 0) || (v instanceof ValueMap && v.entries.length > 0) || v instanceof Tagged;

const pad = (n: number) => ' '.repeat(n);

/** A value after `key:` / `- ` / `:`; `indent` is the indentation of that line's collection. */
function valuePart(v: Value, indent: number, column: number, inSeq: boolean): string {
  if (v instanceof Tagged) return valuePart(new ValueMap([[`!${v.tag}`, v.value]]), indent, column, inSeq);
  if (!isCollection(v)) return ' ' + scalarText(v, column + 1, indent + 2);
  if (inSeq) {
    // `- k: v` / `- - x`: first entry on the same line
    const inner = Array.isArray(v) ? seqLines(v, indent + 2) : mapLines(v as ValueMap, indent + 2);
    return ' ' + inner.slice(indent + 2);
  }
  if (Array.isArray(v)) return '\n' + seqLines(v, indent);
  return '\n' + mapLines(v as ValueMap, indent + 2);
}

function seqLines(s: Value[], indent: number): string {
  return s.map((x) => pad(indent) + '-' + valuePart(x, indent, indent + 1, true)).join('\n');
}

function mapLines(m: ValueMap, indent: number): string {
  return m.entries
    .map(([k, v]) => {
      if (isCollection(k)) throw new CharmsError('INVALID_INPUT', 'YAML output: complex map keys are not supported');
      const key = scalarText(k, indent, indent, true);
      if (key.length <= 128 && !key.includes('\n')) return pad(indent) + key + ':' + valuePart(v, indent, indent + key.length + 1, false);
      return pad(indent) + '? ' + key + '\n' + pad(indent) + ':' + valuePart(v, indent, indent + 1, true);
    })
    .join('\n');
}

/** serde_yaml::to_string: block style, no leading `---`, trailing newline. */
export function toYaml(v: Value): string {
  if (v instanceof ValueMap && v.entries.length > 0) return mapLines(v, 0) + '\n';
  if (Array.isArray(v) && v.length > 0) return seqLines(v, 0) + '\n';
  return scalarText(v, 0, 2) + '\n';
}
