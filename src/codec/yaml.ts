/**
 * YAML as serde_yaml 0.9 reads and writes it. Browser-safe (no `node:` imports).
 *
 * Reading (`parseYaml`) uses the `yaml` package only for syntax (failsafe schema: every scalar
 * arrives as text with its style and tag) and resolves scalars with serde_yaml's own rules:
 * - plain `''`, `~`, `null`, `Null`, `NULL` → null; `true`/`True`/`TRUE`/`false`/… → booleans
 *   (`yes`, `no`, `on`, `off` stay strings);
 * - integers: decimal, `0x`/`0o`/`0b` with an optional sign (`+0x10`, `-0b1`), up to the
 *   u128/i128 range → bigint; a leading zero followed by digits (`010`) is a string;
 * - floats: what Rust's `f64::from_str` accepts when finite (`1.0`, `1.`, `.5`, `1e3`, a decimal
 *   beyond i128) plus `.inf`, `-.inf`, `.nan` → number (`1.0` stays the float 1, `1` is 1n);
 * - quoted and block scalars are strings; `!!int`/`!!float`/`!!bool`/`!!null` force that type;
 * - a local tag (`!bitcoin abc`, `!cardano {tx: …}`) is serde_yaml's externally tagged enum:
 *   `ValueMap([["bitcoin", value]])`, the value resolved as if untagged; `!@@TAGGED@@ [tag, v]`
 *   (what ciborium prints for a CBOR tag) reads back as `Tagged`;
 * - duplicate keys are kept in order, aliases are expanded, more than one document is an error.
 *
 * Hostile input is bounded before the recursive parts run: the syntax tree (built without
 * recursion) is measured first and nesting beyond serde_yaml's 127 levels is refused before the
 * `yaml` composer recurses into it (a stack overflow inside it can leave V8 unable to compile
 * regular expressions: the next parse aborted the process). Alias expansion is bounded like
 * serde_yaml's "repetition limit" (at most 100 alias expansions per node of the document) and by
 * the expanded size (MAX_ALIAS_EXPANDED_NODES values produced through aliases).
 *
 * Writing (`toYaml`) is a port of the parts of libyaml's emitter that serde_yaml reaches (block
 * collections, `{}`/`[]` for empty ones, plain/single/double-quoted/literal scalars, explicit
 * `? ` keys for keys over 128 bytes or multi-line, unlimited line width), fed with the scalar
 * styles serde_yaml asks for. Output has no `---` and ends with a newline.
 */
import { type Alias, Composer, Parser, isAlias, isMap, isScalar, isSeq, visit, type CST, type Document } from 'yaml';
import { CharmsError } from '../errors.js';
import { Tagged, ValueMap, type Value } from './value.js';
import { formatFloatRyu } from './float-format.js';

// ============================================================================ scalar resolution

const NULL_WORDS = new Set(['~', 'null', 'Null', 'NULL']);
const TRUE_WORDS = new Set(['true', 'True', 'TRUE']);
const FALSE_WORDS = new Set(['false', 'False', 'FALSE']);
const U128_MAX = (1n << 128n) - 1n;
const I128_MIN = -(1n << 127n);

/** YAML 1.2: leading zero(s) followed by digits is a string (serde_yaml `digits_but_not_number`). */
function digitsButNotNumber(s: string): boolean {
  const t = s.startsWith('-') || s.startsWith('+') ? s.slice(1) : s;
  return t.length > 1 && t[0] === '0' && /^[0-9]+$/.test(t.slice(1));
}

const RADIX_DIGITS: Record<string, RegExp> = { '0x': /^[0-9a-fA-F]+$/, '0o': /^[0-7]+$/, '0b': /^[01]+$/ };

/** serde_yaml `visit_int`: u64, i64, u128, i128 in that order — here one bigint in that range. */
function parseYamlInt(s: string): bigint | undefined {
  let negative = false;
  let body = s;
  if (s.startsWith('+')) body = s.slice(1);
  else if (s.startsWith('-')) {
    negative = true;
    body = s.slice(1);
  }
  let magnitude: bigint | undefined;
  const prefix = body.slice(0, 2);
  const digits = RADIX_DIGITS[prefix];
  if (digits?.test(body.slice(2)))
    magnitude = BigInt(body); // BigInt reads 0x/0o/0b
  else if (/^[0-9]+$/.test(body) && !digitsButNotNumber(s)) magnitude = BigInt(body);
  if (magnitude === undefined) return undefined;
  const v = negative ? -magnitude : magnitude;
  return v > U128_MAX || v < I128_MIN ? undefined : v;
}

/** Rust `f64::from_str` grammar for finite numbers (inf/nan words are rejected below as non-finite). */
const RUST_FLOAT = /^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$/;

/** serde_yaml `parse_f64`. */
function parseYamlFloat(s: string): number | undefined {
  let unsigned = s;
  if (s.startsWith('+')) {
    unsigned = s.slice(1);
    if (unsigned.startsWith('+') || unsigned.startsWith('-')) return undefined;
  }
  if (unsigned === '.inf' || unsigned === '.Inf' || unsigned === '.INF') return Infinity;
  if (s === '-.inf' || s === '-.Inf' || s === '-.INF') return -Infinity;
  if (s === '.nan' || s === '.NaN' || s === '.NAN') return NaN;
  if (!RUST_FLOAT.test(unsigned)) return undefined;
  const f = Number(unsigned);
  return Number.isFinite(f) ? f : undefined;
}

/** serde_yaml `visit_untagged_scalar`: what a plain scalar means. */
function resolvePlain(s: string): Value {
  if (s === '' || NULL_WORDS.has(s)) return null;
  if (TRUE_WORDS.has(s)) return true;
  if (FALSE_WORDS.has(s)) return false;
  const int = parseYamlInt(s);
  if (int !== undefined) return int;
  if (!digitsButNotNumber(s)) {
    const f = parseYamlFloat(s);
    if (f !== undefined) return f;
  }
  return s;
}

/** Would serde_yaml quote this string so that it does not read back as another type? */
function needsQuotesToStayString(s: string): boolean {
  return typeof resolvePlain(s) !== 'string' || digitsButNotNumber(s);
}

// ============================================================================ reading

const CORE_TAG = 'tag:yaml.org,2002:';
const MAX_DEPTH = 127; // serde_yaml refuses the 128th nesting level, as serde_json does

interface ScalarLike {
  value: unknown;
  type?: string;
  tag?: string;
}

/** Values that alias expansion may add to a document (billion-laughs guard). */
export const MAX_ALIAS_EXPANDED_NODES = 100_000;

/**
 * Each alias's target, found in one walk of the document: the node that last carried its anchor
 * before it (pre-order, as `Alias.resolve` finds it). `Alias.resolve` walks the document from the
 * start on every call, which made a document of n aliases cost n² node visits.
 */
function aliasTargets(doc: Document): Map<Alias, unknown> {
  const anchors = new Map<string, unknown>();
  const targets = new Map<Alias, unknown>();
  visit(doc, {
    Node: (_key, node) => {
      if (isAlias(node)) targets.set(node, anchors.get(node.source));
      else if (node.anchor) anchors.set(node.anchor, node);
    },
  });
  return targets;
}

class YamlReader {
  private readonly targets: Map<Alias, unknown>;
  private aliasDepth = 0;
  private jumps = 0;
  private expanded = 0;
  /** serde_yaml: more alias jumps than 100 × the document's events is "repetition limit exceeded". */
  private readonly maxJumps: number;
  constructor(doc: Document, nodeCount: number) {
    this.maxJumps = 100 * Math.max(1, nodeCount);
    this.targets = aliasTargets(doc);
  }

  private alias(node: Alias, depth: number, taggedAlready: boolean): Value {
    if (++this.jumps > this.maxJumps) this.fail('repetition limit exceeded (too many alias expansions)');
    const target = this.targets.get(node);
    this.aliasDepth++;
    try {
      return this.node(target, depth, taggedAlready);
    } finally {
      this.aliasDepth--;
    }
  }

  fail(message: string): never {
    throw new CharmsError('INVALID_INPUT', `invalid YAML: ${message}`);
  }

  node(node: unknown, depth: number, taggedAlready = false): Value {
    if (depth > MAX_DEPTH) this.fail('recursion limit exceeded');
    if (node === null || node === undefined) return null;
    if (isAlias(node)) return this.alias(node as Alias, depth, taggedAlready);
    if (this.aliasDepth > 0 && ++this.expanded > MAX_ALIAS_EXPANDED_NODES) this.fail(`aliases expand to more than ${MAX_ALIAS_EXPANDED_NODES} values`);
    const tag = taggedAlready ? undefined : (node as { tag?: string }).tag;
    if (tag?.startsWith('!')) return this.taggedEnum(tag, node, depth);
    if (isMap(node)) {
      if (depth + 1 > MAX_DEPTH) this.fail('recursion limit exceeded');
      return new ValueMap(node.items.map((p) => [this.node(p.key, depth + 1), this.node(p.value, depth + 1)]));
    }
    if (isSeq(node)) {
      if (depth + 1 > MAX_DEPTH) this.fail('recursion limit exceeded');
      return node.items.map((x) => this.node(x, depth + 1));
    }
    if (isScalar(node)) return this.scalar(node as ScalarLike, tag);
    return this.fail('unsupported node');
  }

  scalar(n: ScalarLike, tag: string | undefined): Value {
    const text = n.value === null || n.value === undefined ? '' : String(n.value);
    if (tag?.startsWith(CORE_TAG)) {
      const kind = tag.slice(CORE_TAG.length);
      const typed =
        kind === 'bool'
          ? TRUE_WORDS.has(text) || (FALSE_WORDS.has(text) ? false : undefined)
          : kind === 'int'
            ? parseYamlInt(text)
            : kind === 'float'
              ? parseYamlFloat(text)
              : kind === 'null'
                ? NULL_WORDS.has(text)
                  ? null
                  : undefined
                : text; // !!str, !!binary, …: the text itself
      if (typed === undefined)
        this.fail(`invalid value: string ${JSON.stringify(text)}, expected ${kind === 'int' ? 'an integer' : `a ${kind === 'bool' ? 'boolean' : kind}`}`);
      return typed;
    }
    if (tag !== undefined) return text; // verbatim non-core tags
    return n.type === 'PLAIN' || n.type === undefined ? resolvePlain(text) : text;
  }

  /** A local tag is an externally tagged enum variant; `!@@TAGGED@@ [tag, value]` is a CBOR tag. */
  taggedEnum(tag: string, node: unknown, depth: number): Value {
    const variant = tag.length > 1 ? tag.slice(1) : tag;
    const inner = this.node(node, depth, true);
    if (variant === '@@TAGGED@@') {
      if (Array.isArray(inner) && inner.length === 2 && typeof inner[0] === 'bigint' && inner[0] >= 0n && inner[0] < 1n << 64n)
        return new Tagged(inner[0], inner[1]!);
      this.fail('!@@TAGGED@@ expects a sequence [tag, value]');
    }
    return new ValueMap([[variant, inner]]);
  }
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let k = text.indexOf('\n'); k !== -1 && k < offset; k = text.indexOf('\n', k + 1)) {
    line++;
    lineStart = k + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

/**
 * Parses one YAML document (JSON is YAML too) into a Value, resolving scalars as serde_yaml 0.9
 * does (see the module comment). An empty stream is null. Throws CharmsError INVALID_INPUT.
 */
export function parseYaml(text: string): Value {
  const tokens = Array.from(new Parser().parse(text));
  const { depth, nodes } = measureCst(tokens);
  if (depth > MAX_DEPTH + 1) throw new CharmsError('INVALID_INPUT', 'invalid YAML: recursion limit exceeded');
  const docs = Array.from(new Composer({ schema: 'failsafe', uniqueKeys: false }).compose(tokens)) as Document[];
  if (docs.length === 0) return null;
  if (docs.length > 1) throw new CharmsError('INVALID_INPUT', 'invalid YAML: deserializing from YAML containing more than one document is not supported');
  const doc = docs[0]!;
  const err = doc.errors[0];
  if (err !== undefined) {
    const { line, column } = lineAndColumn(text, err.pos[0]);
    const message = err.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    throw new CharmsError('INVALID_INPUT', `invalid YAML: ${message} at line ${line} column ${column}`, { cause: err });
  }
  return new YamlReader(doc, nodes).node(doc.contents, 0);
}

/**
 * Collection nesting depth and node count of a concrete syntax tree, walked with an explicit
 * stack (the tree of hostile input can be arbitrarily deep).
 */
function measureCst(tokens: CST.Token[]): { depth: number; nodes: number } {
  let depth = 0;
  let nodes = 0;
  const stack: [CST.Token | undefined, number][] = tokens.map((t) => [t, 0]);
  while (stack.length > 0) {
    const [t, d] = stack.pop()!;
    if (t === undefined) continue;
    switch (t.type) {
      case 'document':
        stack.push([t.value, d]);
        break;
      case 'block-map':
      case 'block-seq':
      case 'flow-collection':
        nodes++;
        if (d + 1 > depth) depth = d + 1;
        if (depth > MAX_DEPTH + 1) return { depth, nodes };
        for (const item of t.items) {
          if ('key' in item) stack.push([item.key ?? undefined, d + 1]);
          stack.push([item.value, d + 1]);
        }
        break;
      case 'alias':
      case 'scalar':
      case 'single-quoted-scalar':
      case 'double-quoted-scalar':
      case 'block-scalar':
        nodes++;
        break;
      default:
        break;
    }
  }
  return { depth, nodes };
}

// ============================================================================ writing

type Style = 'plain' | 'single' | 'double' | 'literal';

const isBreak = (c: number): boolean => c === 0x0a || c === 0x0d || c === 0x85 || c === 0x2028 || c === 0x2029;
/** libyaml IS_BLANKZ; `NaN` stands for the NUL after the end of the scalar. */
const isBlankz = (c: number): boolean => Number.isNaN(c) || c === 0 || c === 0x20 || c === 0x09 || isBreak(c);
/** libyaml IS_PRINTABLE (unsafe-libyaml counts U+10000… as printable). */
const isPrintable = (c: number): boolean =>
  c === 0x0a || (c >= 0x20 && c <= 0x7e) || (c >= 0xa0 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd && c !== 0xfeff) || (c >= 0x10000 && c <= 0x10ffff);

const FIRST_CHAR_INDICATORS = new Set('#,[]{}&*!|>\'"%@`');

interface ScalarAnalysis {
  multiline: boolean;
  blockPlainAllowed: boolean;
  singleQuotedAllowed: boolean;
  blockAllowed: boolean;
  /** UTF-8 length, which libyaml compares with 128 for simple keys */
  byteLength: number;
}

function utf8Length(cps: number[]): number {
  let n = 0;
  for (const c of cps) n += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  return n;
}

/** libyaml `yaml_emitter_analyze_scalar`, block context only (flow collections are always empty here). */
function analyzeScalar(cps: number[]): ScalarAnalysis {
  const byteLength = utf8Length(cps);
  if (cps.length === 0) return { multiline: false, blockPlainAllowed: true, singleQuotedAllowed: true, blockAllowed: false, byteLength };
  let blockIndicators = false;
  let lineBreaks = false;
  let special = false;
  let leadingSpace = false;
  let leadingBreak = false;
  let trailingSpace = false;
  let trailingBreak = false;
  let breakSpace = false;
  let spaceBreak = false;
  let previousSpace = false;
  let previousBreak = false;
  let precededByWhitespace = true;
  const startsWith3 = (ch: number) => cps[0] === ch && cps[1] === ch && cps[2] === ch;
  if (startsWith3(0x2d) || startsWith3(0x2e)) blockIndicators = true; // `---` / `...`
  const last = cps.length - 1;
  for (let i = 0; i <= last; i++) {
    const c = cps[i]!;
    const followedByWhitespace = isBlankz(i < last ? cps[i + 1]! : NaN);
    if (i === 0) {
      if (FIRST_CHAR_INDICATORS.has(String.fromCodePoint(c))) blockIndicators = true;
      if ((c === 0x3f || c === 0x3a) && followedByWhitespace) blockIndicators = true; // `? ` `: `
      if (c === 0x2d && followedByWhitespace) blockIndicators = true; // `- `
    } else {
      if (c === 0x3a && followedByWhitespace) blockIndicators = true;
      if (c === 0x23 && precededByWhitespace) blockIndicators = true; // ` #`
    }
    if (!isPrintable(c)) special = true;
    if (isBreak(c)) lineBreaks = true;
    if (c === 0x20) {
      if (i === 0) leadingSpace = true;
      if (i === last) trailingSpace = true;
      if (previousBreak) breakSpace = true;
      previousSpace = true;
      previousBreak = false;
    } else if (isBreak(c)) {
      if (i === 0) leadingBreak = true;
      if (i === last) trailingBreak = true;
      if (previousSpace) spaceBreak = true;
      previousSpace = false;
      previousBreak = true;
    } else {
      previousSpace = false;
      previousBreak = false;
    }
    precededByWhitespace = isBlankz(c);
  }
  let blockPlainAllowed = true;
  let singleQuotedAllowed = true;
  let blockAllowed = true;
  if (leadingSpace || leadingBreak || trailingSpace || trailingBreak) blockPlainAllowed = false;
  if (trailingSpace) blockAllowed = false;
  if (breakSpace) blockPlainAllowed = singleQuotedAllowed = false;
  if (spaceBreak || special) blockPlainAllowed = singleQuotedAllowed = blockAllowed = false;
  if (lineBreaks || blockIndicators) blockPlainAllowed = false;
  return { multiline: lineBreaks, blockPlainAllowed, singleQuotedAllowed, blockAllowed, byteLength };
}

const DOUBLE_QUOTE_ESCAPES: Record<number, string> = {
  0x00: '0',
  0x07: 'a',
  0x08: 'b',
  0x09: 't',
  0x0a: 'n',
  0x0b: 'v',
  0x0c: 'f',
  0x0d: 'r',
  0x1b: 'e',
  0x22: '"',
  0x5c: '\\',
  0x85: 'N',
  0xa0: '_',
  0x2028: 'L',
  0x2029: 'P',
};

const hexUpper = (v: number, width: number) => v.toString(16).toUpperCase().padStart(width, '0');
const BEST_INDENT = 2;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The emitter state libyaml keeps while writing: column, indentation and whitespace flags. */
class YamlEmitter {
  private out: string[] = [];
  private column = 0;
  private whitespace = true;
  private indention = true;
  private indent = -1;
  private readonly indents: number[] = [];

  result(): string {
    return this.out.join('');
  }

  private put(s: string, chars = s.length): void {
    this.out.push(s);
    this.column += chars;
  }

  private putBreak(): void {
    this.out.push('\n');
    this.column = 0;
  }

  /** A break character from a scalar: `\n` as a newline, others (LS, PS) copied as they are. */
  private writeBreak(c: number): void {
    if (c === 0x0a) this.putBreak();
    else {
      this.out.push(String.fromCodePoint(c));
      this.column = 0;
    }
  }

  private increaseIndent(flow: boolean, indentless: boolean): void {
    this.indents.push(this.indent);
    if (this.indent < 0) this.indent = flow ? BEST_INDENT : 0;
    else if (!indentless) this.indent += BEST_INDENT;
  }

  private popIndent(): void {
    this.indent = this.indents.pop()!;
  }

  writeIndent(): void {
    const indent = Math.max(this.indent, 0);
    if (!this.indention || this.column > indent || (this.column === indent && !this.whitespace)) this.putBreak();
    while (this.column < indent) this.put(' ');
    this.whitespace = true;
    this.indention = true;
  }

  private writeIndicator(indicator: string, needWhitespace: boolean, isWhitespace: boolean, isIndention: boolean): void {
    if (needWhitespace && !this.whitespace) this.put(' ');
    this.put(indicator);
    this.whitespace = isWhitespace;
    this.indention = this.indention && isIndention;
  }

  // ------------------------------------------------------------------ nodes

  node(v: Value, mappingContext: boolean, simpleKey: boolean): void {
    if (v instanceof Uint8Array)
      throw new CharmsError('INVALID_INPUT', 'cannot print YAML: serialization and deserialization of bytes in YAML is not implemented');
    if (v instanceof Tagged) return this.sequence([v.tag, v.value], mappingContext, '@@TAGGED@@');
    if (Array.isArray(v)) return this.sequence(v, mappingContext);
    if (v instanceof ValueMap) return this.mapping(v);
    this.scalar(v, simpleKey);
  }

  /** Writes `!suffix` with libyaml's "!" handle (URI-unsafe characters %-escaped). */
  private tag(suffix: string): void {
    if (!this.whitespace) this.put(' ');
    let content = '!';
    for (const byte of new TextEncoder().encode(suffix)) {
      const ch = String.fromCharCode(byte);
      content += /[0-9A-Za-z_\-;/?:@&=+$,.~*'()[\]]/.test(ch) ? ch : '%' + hexUpper(byte, 2);
    }
    this.put(content);
    this.whitespace = false;
    this.indention = false;
  }

  private sequence(items: Value[], mappingContext: boolean, tag?: string): void {
    if (tag !== undefined) this.tag(tag);
    if (items.length === 0) return this.emptyFlow('[', ']');
    this.increaseIndent(false, mappingContext && !this.indention);
    for (const item of items) {
      this.writeIndent();
      this.writeIndicator('-', true, false, true);
      this.node(item, false, false);
    }
    this.popIndent();
  }

  private mapping(m: ValueMap): void {
    if (m.entries.length === 0) return this.emptyFlow('{', '}');
    this.increaseIndent(false, false);
    for (const [k, v] of m.entries) {
      this.writeIndent();
      if (isSimpleKey(k)) {
        this.node(k, true, true);
        this.writeIndicator(':', false, false, false);
      } else {
        this.writeIndicator('?', true, false, true);
        this.node(k, true, false);
        this.writeIndent();
        this.writeIndicator(':', true, false, true);
      }
      this.node(v, true, false);
    }
    this.popIndent();
  }

  private emptyFlow(open: string, close: string): void {
    this.writeIndicator(open, true, true, false);
    this.writeIndicator(close, false, false, false);
  }

  private scalar(v: Value, simpleKey: boolean): void {
    const [text, requested] = scalarText(v);
    if (LONE_SURROGATE.test(text)) throw new CharmsError('INVALID_INPUT', 'cannot print YAML: string contains a lone UTF-16 surrogate');
    const cps = Array.from(text, (ch) => ch.codePointAt(0)!);
    const a = analyzeScalar(cps);
    const style = selectStyle(requested, a, simpleKey);
    this.increaseIndent(true, false);
    if (style === 'plain') this.plain(text, cps.length);
    else if (style === 'single') this.singleQuoted(cps);
    else if (style === 'double') this.doubleQuoted(cps);
    else this.literal(cps);
    this.popIndent();
  }

  // ------------------------------------------------------------------ scalar writers
  // The width is unlimited (serde_yaml sets -1), so libyaml never folds long lines.

  private plain(text: string, chars: number): void {
    if (!this.whitespace && chars !== 0) this.put(' ');
    this.put(text, chars); // no breaks: a multi-line scalar is never plain
    this.whitespace = false;
    this.indention = false;
  }

  private singleQuoted(cps: number[]): void {
    this.writeIndicator("'", true, false, false);
    let breaks = false;
    for (const c of cps) {
      if (isBreak(c)) {
        if (!breaks && c === 0x0a) this.putBreak();
        this.writeBreak(c);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        if (c === 0x27) this.put("'");
        this.put(String.fromCodePoint(c), 1);
        this.indention = false;
        breaks = false;
      }
    }
    if (breaks) this.writeIndent();
    this.writeIndicator("'", false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  private doubleQuoted(cps: number[]): void {
    this.writeIndicator('"', true, false, false);
    for (const c of cps) {
      if (!isPrintable(c) || c === 0xfeff || isBreak(c) || c === 0x22 || c === 0x5c) {
        const short = DOUBLE_QUOTE_ESCAPES[c];
        if (short !== undefined) this.put('\\' + short);
        else if (c <= 0xff) this.put('\\x' + hexUpper(c, 2));
        else if (c <= 0xffff) this.put('\\u' + hexUpper(c, 4));
        else this.put('\\U' + hexUpper(c, 8));
      } else this.put(String.fromCodePoint(c), 1);
    }
    this.writeIndicator('"', false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  private literal(cps: number[]): void {
    this.writeIndicator('|', true, false, false);
    // block scalar hints: explicit indentation when the text starts with a space or break,
    // `-` without a final break, `+` when it ends with two breaks (or is a single break)
    if (cps[0] === 0x20 || isBreak(cps[0]!)) this.writeIndicator(String(BEST_INDENT), false, false, false);
    const n = cps.length;
    if (!isBreak(cps[n - 1]!)) this.writeIndicator('-', false, false, false);
    else if (n === 1 || isBreak(cps[n - 2]!)) this.writeIndicator('+', false, false, false);
    this.putBreak();
    this.indention = true;
    this.whitespace = true;
    let breaks = true;
    for (const c of cps) {
      if (isBreak(c)) {
        this.writeBreak(c);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        this.put(String.fromCodePoint(c), 1);
        this.indention = false;
        breaks = false;
      }
    }
  }
}

/** The text of a scalar and the style serde_yaml asks the emitter for. */
function scalarText(v: Value): [string, Style | 'any'] {
  switch (typeof v) {
    case 'string':
      if (v.includes('\n')) return [v, 'literal'];
      return [v, needsQuotesToStayString(v) ? 'single' : 'any'];
    case 'bigint':
      return [v.toString(), 'plain'];
    case 'number':
      if (Number.isNaN(v)) return ['.nan', 'plain'];
      if (v === Infinity) return ['.inf', 'plain'];
      if (v === -Infinity) return ['-.inf', 'plain'];
      return [formatFloatRyu(v), 'plain'];
    case 'boolean':
      return [v ? 'true' : 'false', 'plain'];
    default:
      return ['null', 'plain']; // null, undefined
  }
}

/** libyaml `yaml_emitter_select_scalar_style` in block context. */
function selectStyle(requested: Style | 'any', a: ScalarAnalysis, simpleKey: boolean): Style {
  let style: Style = requested === 'any' ? 'plain' : requested;
  if (simpleKey && a.multiline) style = 'double';
  if (style === 'plain' && (!a.blockPlainAllowed || (a.byteLength === 0 && simpleKey))) style = 'single';
  if (style === 'single' && !a.singleQuotedAllowed) style = 'double';
  if (style === 'literal' && (!a.blockAllowed || simpleKey)) style = 'double';
  return style;
}

/** libyaml `yaml_emitter_check_simple_key`: one-line scalars up to 128 bytes, empty collections. */
function isSimpleKey(k: Value): boolean {
  if (Array.isArray(k)) return k.length === 0;
  if (k instanceof ValueMap) return k.entries.length === 0;
  if (k instanceof Tagged || k instanceof Uint8Array) return false;
  const [text] = scalarText(k);
  const a = analyzeScalar(Array.from(text, (ch) => ch.codePointAt(0)!));
  return !a.multiline && a.byteLength <= 128;
}

/**
 * `serde_yaml::to_string` of a ciborium Value: block style, no `---`, a final newline. Bytes are
 * refused as serde_yaml refuses them; a CBOR tag prints as `!@@TAGGED@@` over `[tag, value]`.
 */
export function toYaml(v: Value): string {
  const e = new YamlEmitter();
  e.node(v, false, false);
  e.writeIndent(); // document end: finish the last line
  return e.result();
}
