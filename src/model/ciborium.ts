/**
 * A CBOR reader that reads typed values exactly as the reference's verifier does: ciborium 0.2.2
 * (`ciborium/src/de/mod.rs`, headers and segments from `ciborium-ll`) driving the serde
 * deserializers of the charms types. It streams over the bytes, one typed read per serde call,
 * instead of decoding a generic tree first, because what ciborium accepts depends on the type
 * asked for: a tuple reads exactly its arity and never checks the declared count (so a 4-item
 * array header in front of three items changes nothing, and an indefinite array leaves its break
 * unread for the next value to trip on), a `char` is a definite text of at most 4 bytes holding one
 * character, a `UtxoId` a definite byte string.
 *
 * The rules, each as ciborium has them:
 * - headers (`ciborium-ll`): additional info 28–30 and an indefinite length on major types 0, 1
 *   and 6 are syntax errors; major 7 with info 24 is a simple value (so `f8 14` is `false`);
 * - tags in front of a typed item are skipped, except tags 2/3 where an integer is asked for: then
 *   a byte string (definite or chunked) must follow, at most 16 significant bytes (a bignum);
 * - byte and text strings may be chunked where ciborium reads segments (`Vec<u8>`, `[u8; 32]`,
 *   bignums, long or chunked strings in `Data`); chunks may nest (flattened), each text chunk is
 *   UTF-8 on its own; where ciborium reads into its 4096-byte scratch buffer (field names,
 *   `UtxoId`, short strings) only a definite string of at most 4096 bytes is accepted;
 * - sequences (`Vec`, `[u8; 32]`, tuples) may also arrive as a byte string, whose bytes are then
 *   `u8` items; maps and structs only as maps;
 * - `Option` is None for null or undefined (no tags skipped in front of them); `bool` and `unit`
 *   skip tags; `Data` (a ciborium `Value`, `deserialize_any`) keeps tags, except a tag 2/3 on a
 *   definite byte string of at most 16 bytes, which is an integer; unknown simple values and a
 *   break are errors there, also inside an ignored (unknown) struct field;
 * - nesting: at most 256 containers deep (ciborium's recursion limit, counted from the top).
 */
import { CharmsError } from '../errors.js';
import { fromHalf } from '../codec/cbor.js';
import { Tagged, ValueMap, type Value } from '../codec/value.js';
import { bigEndianToBigInt, concatByteList } from '../util/bytes.js';
import { invalid } from './primitives.js';

const SCRATCH = 4096;
const RECURSION_LIMIT = 256;
const U64_MAX = (1n << 64n) - 1n;
const I128_MAX = (1n << 127n) - 1n;
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A `ciborium-ll` header; `at` is its offset, so pushing it back is rewinding there. */
export type CborHeader = { at: number } & (
  | { kind: 'positive' | 'negative' | 'tag'; n: bigint }
  | { kind: 'bytes' | 'text' | 'array' | 'map'; len: number | null }
  | { kind: 'float'; f: number }
  | { kind: 'simple'; n: number }
  | { kind: 'break' }
);

/** What ciborium's `Expected` names for a header that is not what was asked for. */
function unexpected(h: CborHeader): string {
  switch (h.kind) {
    case 'positive':
      return `integer \`${h.n}\``;
    case 'negative':
      return `integer \`${-1n - h.n}\``;
    case 'bytes':
      return 'bytes';
    case 'text':
      return 'string';
    case 'array':
      return 'sequence';
    case 'map':
      return 'map';
    case 'tag':
      return 'tag';
    case 'float':
      return `floating point \`${h.f}\``;
    case 'break':
      return 'break';
    case 'simple':
      return h.n === 20 ? 'boolean `false`' : h.n === 21 ? 'boolean `true`' : h.n === 22 ? 'null' : h.n === 23 ? 'undefined' : 'simple';
  }
}

const invalidType = (path: string, h: CborHeader, what: string): CharmsError => invalid(path, `invalid type: ${unexpected(h)}, expected ${what}`);

/** Answers "is there another item?" for a sequence or map whose header said `len`. */
export type Access = () => boolean;

export class CiboriumReader {
  pos = 0;
  private recurse = RECURSION_LIMIT;

  constructor(private readonly bytes: Uint8Array) {}

  private syntax(at: number, msg: string): CharmsError {
    return new CharmsError('CBOR_DECODE', `invalid CBOR at byte ${at}: ${msg}`);
  }

  private readExact(n: number): Uint8Array {
    if (n > this.bytes.length - this.pos) throw this.syntax(this.bytes.length, 'unexpected end of input');
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** The next header (`Decoder::pull`). */
  pull(): CborHeader {
    const at = this.pos;
    const b = this.readExact(1)[0]!;
    const major = b >> 5;
    const info = b & 31;
    let arg: bigint | null;
    if (info < 24) arg = BigInt(info);
    else if (info <= 27) arg = bigEndianToBigInt(this.readExact(1 << (info - 24)));
    else if (info === 31) arg = null;
    else throw this.syntax(at, `reserved additional info ${info}`);
    const len = arg === null ? null : Number(arg);
    switch (major) {
      case 0:
      case 1:
      case 6:
        if (arg === null) throw this.syntax(at, 'indefinite length on an integer or tag');
        return { at, kind: major === 0 ? 'positive' : major === 1 ? 'negative' : 'tag', n: arg };
      case 2:
        return { at, kind: 'bytes', len };
      case 3:
        return { at, kind: 'text', len };
      case 4:
        return { at, kind: 'array', len };
      case 5:
        return { at, kind: 'map', len };
      default: {
        if (info === 31) return { at, kind: 'break' };
        if (info < 25) return { at, kind: 'simple', n: Number(arg) };
        const view = new DataView(this.bytes.buffer, this.bytes.byteOffset + at + 1);
        return { at, kind: 'float', f: info === 25 ? fromHalf(view.getUint16(0)) : info === 26 ? view.getFloat32(0) : view.getFloat64(0) };
      }
    }
  }

  /** Puts a pulled header back (`Decoder::push`). */
  push(h: CborHeader): void {
    this.pos = h.at;
  }

  /** The next header after any tags in front of it (the loop every typed `deserialize_*` has). */
  untagged(): CborHeader {
    let h = this.pull();
    while (h.kind === 'tag') h = this.pull();
    return h;
  }

  /** One level deeper (ciborium's `recurse`, 256 levels). */
  nested<T>(f: () => T): T {
    if (this.recurse === 0) throw invalid('', 'recursion limit exceeded');
    this.recurse--;
    try {
      return f();
    } finally {
      this.recurse++;
    }
  }

  /** ciborium's `Access`: a definite count is counted down, never checked; indefinite ends at a break. */
  access(len: number | null): Access {
    let left = len;
    return () => {
      if (left !== null) {
        if (left === 0) return false;
        left--;
        return true;
      }
      const h = this.pull();
      if (h.kind === 'break') return false;
      this.push(h);
      return true;
    };
  }

  /** The segments of a byte or text string whose header was just pulled (`Decoder::bytes/text`). */
  private segments(h: CborHeader & { len: number | null }): Uint8Array {
    const kind = h.kind;
    if (h.len !== null) return this.segment(kind, h.len, h.at);
    const parts: Uint8Array[] = [];
    let nested = 1;
    for (;;) {
      const s = this.pull();
      if (s.kind === 'break') {
        if (nested === 1) return concatByteList(parts);
        nested--;
      } else if (s.kind !== kind) throw this.syntax(s.at, `a chunk of another type in an indefinite ${kind === 'bytes' ? 'byte' : 'text'} string`);
      else if ((s as { len: number | null }).len === null) nested++;
      else parts.push(this.segment(kind, (s as { len: number }).len, s.at));
    }
  }

  private segment(kind: string, len: number, at: number): Uint8Array {
    const b = this.readExact(len);
    if (kind === 'text') this.utf8(b, at);
    return b;
  }

  private utf8(b: Uint8Array, at: number): string {
    try {
      return UTF8.decode(b);
    } catch {
      throw this.syntax(at, 'text is not valid UTF-8');
    }
  }

  /** An integer (`Deserializer::integer`): tags skipped; tags 2/3 make a bignum of a byte string. */
  integer(path: string): bigint {
    for (;;) {
      const h = this.pull();
      if (h.kind === 'positive') return h.n;
      if (h.kind === 'negative') return -1n - h.n;
      if (h.kind !== 'tag') throw invalidType(path, h, 'integer');
      if (h.n !== 2n && h.n !== 3n) continue;
      const raw = this.bignum(path);
      return h.n === 2n ? raw : -1n - raw;
    }
  }

  private bignum(path: string): bigint {
    const b = this.pull();
    if (b.kind !== 'bytes') throw invalidType(path, b, 'bytes');
    const bytes = this.segments(b);
    let i = 0;
    while (i < bytes.length && bytes[i] === 0) i++;
    if (bytes.length - i > 16) throw invalid(path, 'bigint too large');
    return bigEndianToBigInt(bytes.subarray(i));
  }

  /** An unsigned integer of `bits` bits (u8/u32/u64: serde's range check after ciborium's u64). */
  uint(path: string, bits: 8 | 32 | 64): bigint {
    const n = this.integer(path);
    if (n < 0n) throw invalid(path, 'unexpected negative integer');
    if (n > U64_MAX) throw invalid(path, 'integer too large');
    if (n >= 1n << BigInt(bits)) throw invalid(path, `invalid value: integer \`${n}\`, expected u${bits}`);
    return n;
  }

  u32(path: string): number {
    return Number(this.uint(path, 32));
  }

  bool(path: string): boolean {
    const h = this.untagged();
    if (h.kind === 'simple' && (h.n === 20 || h.n === 21)) return h.n === 21;
    throw invalidType(path, h, 'a boolean');
  }

  /** `char`: a definite text of at most 4 bytes that holds exactly one character. */
  char(path: string): string {
    const h = this.untagged();
    if (h.kind === 'text' && h.len !== null && h.len <= 4) {
      const s = this.utf8(this.readExact(h.len), h.at);
      if ([...s].length === 1) return s;
    }
    throw invalidType(path, h, 'a character');
  }

  /**
   * A struct field name (`deserialize_identifier`): a definite text or byte string of at most 4096
   * bytes. Returns undefined for bytes that are not UTF-8 (no field has that name).
   */
  identifier(path: string): string | undefined {
    const h = this.untagged();
    if ((h.kind === 'text' || h.kind === 'bytes') && h.len !== null && h.len <= SCRATCH) {
      const b = this.readExact(h.len);
      if (h.kind === 'text') return this.utf8(b, h.at);
      try {
        return UTF8.decode(b);
      } catch {
        return undefined;
      }
    }
    throw invalidType(path, h, 'str or bytes');
  }

  /** `deserialize_bytes` with a visitor that only takes bytes: a definite byte string ≤ 4096 bytes. */
  definiteBytes(path: string, what: string): Uint8Array {
    const h = this.untagged();
    if (h.kind === 'bytes' && h.len !== null && h.len <= SCRATCH) return this.readExact(h.len).slice();
    throw invalidType(path, h, what);
  }

  /**
   * `deserialize_seq` (also tuples and tuple structs): an array read through `onArray`, or a byte
   * string whose bytes are the items (`onBytes`).
   */
  seq<T>(path: string, onArray: (next: Access) => T, onBytes: (bytes: Uint8Array) => T, what = 'array'): T {
    const h = this.untagged();
    if (h.kind === 'array') return this.nested(() => onArray(this.access(h.len)));
    if (h.kind === 'bytes') return onBytes(this.segments(h));
    throw invalidType(path, h, what);
  }

  /** A `Vec<T>` (or a set): every item, read by `item`; a byte string's bytes through `fromByte`. */
  vec<T>(path: string, item: (p: string) => T, fromByte: (b: number, p: string) => T): T[] {
    return this.seq(
      path,
      (next) => {
        const out: T[] = [];
        while (next()) out.push(item(`${path}[${out.length}]`));
        return out;
      },
      (bytes) => Array.from(bytes, (b, i) => fromByte(b, `${path}[${i}]`)),
    );
  }

  /**
   * The common shape of a `Vec<u8>` or `[u8; N]` on chain, read in one tight loop: an untagged
   * array of definite length (`count` items if given) whose items are all untagged u8 written as
   * `00`–`17` or `18 xx`. Anything else (tags, other integer widths, a byte string, an indefinite
   * array, another count, the end of the input) returns undefined with nothing read, and the
   * type-by-type reader takes it from the start, errors and all. Same value either way.
   */
  private plainU8Array(count?: number): Uint8Array | undefined {
    const b = this.bytes;
    let at = this.pos;
    const h = b[at];
    if (h === undefined || h >> 5 !== 4 || this.recurse === 0) return undefined;
    let len = h & 31;
    at++;
    if (len === 24) len = b[at++] ?? -1;
    else if (len === 25) {
      len = ((b[at] ?? 256) << 8) | (b[at + 1] ?? 256);
      at += 2;
    } else if (len > 24) return undefined;
    if (len < 0 || len > 0xffff || (count !== undefined && len !== count) || len > b.length - at) return undefined;
    const out = new Uint8Array(len);
    for (let i = 0; i < len; i++) {
      const v = b[at];
      if (v === undefined) return undefined;
      if (v < 24) {
        out[i] = v;
        at++;
      } else if (v === 24 && at + 1 < b.length) {
        out[i] = b[at + 1]!;
        at += 2;
      } else return undefined;
    }
    this.pos = at;
    return out;
  }

  /** A `Vec<u8>`: an array of u8 or a byte string. */
  byteVec(path: string): Uint8Array {
    const plain = this.plainU8Array();
    if (plain) return plain;
    return Uint8Array.from(
      this.vec(
        path,
        (p) => Number(this.uint(p, 8)),
        (b) => b,
      ),
    );
  }

  /** `[u8; 32]` as the reference's B32 visitor reads it: 32 items, then no 33rd. */
  b32(path: string): Uint8Array {
    const short = (n: number) => invalid(path, `invalid length ${n}, expected 32 elements`);
    const long = () => invalid(path, 'invalid length 33, expected exactly 32 elements');
    const plain = this.plainU8Array(32);
    if (plain) return plain;
    return this.seq(
      path,
      (next) => {
        const out = new Uint8Array(32);
        for (let i = 0; i < 32; i++) {
          if (!next()) throw short(i);
          out[i] = Number(this.uint(`${path}[${i}]`, 8));
        }
        if (next()) {
          this.uint(`${path}[32]`, 8);
          throw long();
        }
        return out;
      },
      (bytes) => {
        if (bytes.length < 32) throw short(bytes.length);
        if (bytes.length > 32) throw long();
        return bytes.slice();
      },
    );
  }

  /** `deserialize_map`: every entry, in the order given. */
  map<K, V>(path: string, key: (p: string) => K, value: (p: string, k: K) => V): [K, V][] {
    const h = this.untagged();
    if (h.kind !== 'map') throw invalidType(path, h, 'a map');
    return this.nested(() => {
      const next = this.access(h.len);
      const out: [K, V][] = [];
      while (next()) {
        const k = key(`${path} key`);
        out.push([k, value(`${path}.${out.length}`, k)]);
      }
      return out;
    });
  }

  /**
   * A struct as serde derive reads one through ciborium (a map of field names): each known field
   * read by its reader, unknown fields skipped as `IgnoredAny` (which still reads them with
   * `deserialize_any`), a repeated field and a missing required field are errors.
   */
  struct(path: string, fields: Record<string, (p: string) => void>, required: readonly string[]): void {
    const h = this.untagged();
    if (h.kind !== 'map') throw invalidType(path, h, 'a map');
    this.nested(() => {
      const next = this.access(h.len);
      const seen = new Set<string>();
      while (next()) {
        const name = this.identifier(`${path} field name`);
        const read = name === undefined || !Object.hasOwn(fields, name) ? undefined : fields[name]!;
        if (read === undefined) {
          this.any(`${path}.${name ?? '?'}`);
          continue;
        }
        if (seen.has(name!)) throw invalid(path, `duplicate field \`${name}\``);
        seen.add(name!);
        read(`${path}.${name}`);
      }
      for (const f of required) if (!seen.has(f)) throw invalid(path, `missing field \`${f}\``);
    });
  }

  /** `Option<T>`: null or undefined is None, anything else is read by `some`. */
  option<T>(some: () => T): T | undefined {
    const h = this.pull();
    if (h.kind === 'simple' && (h.n === 22 || h.n === 23)) return undefined;
    this.push(h);
    return some();
  }

  /** A ciborium `Value` (`deserialize_any`), as the reference's `Data` holds it. */
  any(path: string): Value {
    const h = this.pull();
    switch (h.kind) {
      case 'positive':
        return h.n;
      case 'negative':
        return -1n - h.n;
      case 'bytes':
        return this.segments(h).slice();
      case 'text':
        return this.utf8(this.segments(h), h.at);
      case 'array':
        return this.nested(() => {
          const next = this.access(h.len);
          const out: Value[] = [];
          while (next()) out.push(this.any(path));
          return out;
        });
      case 'map':
        return this.nested(() => {
          const next = this.access(h.len);
          const out = new ValueMap();
          while (next()) out.entries.push([this.any(path), this.any(path)]);
          return out;
        });
      case 'tag': {
        const b = this.pull();
        this.push(b);
        if ((h.n === 2n || h.n === 3n) && b.kind === 'bytes' && b.len !== null && b.len <= 16) {
          const raw = this.bignum(path);
          if (h.n === 3n && raw > I128_MAX) throw invalid(path, 'integer too large');
          return h.n === 2n ? raw : -1n - raw;
        }
        return this.nested(() => new Tagged(h.n, this.any(path)));
      }
      case 'float':
        return h.f;
      case 'simple':
        if (h.n === 20 || h.n === 21) return h.n === 21;
        if (h.n === 22 || h.n === 23) return null;
        throw invalidType(path, h, 'known simple value');
      case 'break':
        throw invalidType(path, h, 'non-break');
    }
  }
}
