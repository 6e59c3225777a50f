/**
 * Our own CBOR codec (RFC 8949), written to agree byte for byte with ciborium 0.2 as the Rust
 * reference uses it: definite lengths only on output, shortest integer heads, floats in the
 * shortest width that round-trips exactly, maps in the order given (no canonical sorting).
 * Decoding is lenient where ciborium is (indefinite lengths, tags in front of values) and
 * exposes byte offsets (`CborReader`) for hashes that need the original bytes (Cardano bodies).
 * It is stricter than ciborium-ll in two places, both refusals: nested indefinite chunks inside
 * an indefinite string, and simple values in their two-byte form. Spells are not read through
 * this generic decoder but typed, as the reference reads them (model/ciborium.ts).
 */
import { CharmsError } from '../errors.js';
import { Tagged, ValueMap, type Value } from './value.js';
import { concatByteList } from '../util/bytes.js';
import { ByteReader, ByteWriter } from '../util/byte-io.js';

const U64_MAX = (1n << 64n) - 1n;
const MAX_DEPTH = 256;

// ---------------------------------------------------------------------------------- encoding

export class CborWriter {
  private readonly out = new ByteWriter();

  byte(b: number): void {
    this.out.byte(b);
  }

  raw(bytes: Uint8Array): void {
    this.out.bytes(bytes);
  }

  /** Major type + argument in the shortest form. */
  head(major: number, arg: number | bigint): void {
    const m = major << 5;
    if (typeof arg === 'number') {
      if (arg < 24) return this.byte(m | arg);
      if (arg < 0x100) {
        this.out.byte(m | 24).byte(arg);
        return;
      }
      if (arg < 0x10000) {
        this.out.byte(m | 25).u16be(arg);
        return;
      }
      if (arg < 0x100000000) {
        this.out.byte(m | 26).u32be(arg);
        return;
      }
      arg = BigInt(arg);
    }
    if (arg < 0x100000000n) return this.head(major, Number(arg));
    this.out.byte(m | 27).u64be(arg);
  }

  int(v: bigint | number): void {
    const n = typeof v === 'number' ? BigInt(v) : v;
    if (n >= 0n) {
      if (n <= U64_MAX) return this.head(0, n);
      return this.bignum(2, n);
    }
    const m = -1n - n;
    if (m <= U64_MAX) return this.head(1, m);
    this.bignum(3, m);
  }

  private bignum(tag: number, magnitude: bigint): void {
    let hex = magnitude.toString(16);
    if (hex.length % 2) hex = '0' + hex;
    const bytes = new Uint8Array(hex.length / 2);
    for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.substr(i * 2, 2), 16);
    this.head(6, tag);
    this.bytes(bytes);
  }

  float(v: number): void {
    const h = toHalf(v);
    if (h !== undefined) {
      this.out.byte(0xf9).u16be(h);
      return;
    }
    if (Number.isNaN(v) || Math.fround(v) === v) {
      this.out.byte(0xfa).f32be(v);
      return;
    }
    this.out.byte(0xfb).f64be(v);
  }

  text(s: string): void {
    const b = TEXT_ENCODER.encode(s);
    this.head(3, b.length);
    this.raw(b);
  }

  bytes(b: Uint8Array): void {
    this.head(2, b.length);
    this.raw(b);
  }

  /** A byte sequence the Rust side types as `Vec<u8>`/`[u8; N]`: an array of uints. */
  uintArray(b: Uint8Array): void {
    this.head(4, b.length);
    for (let i = 0; i < b.length; i++) {
      const x = b[i]!;
      if (x < 24) this.byte(x);
      else {
        this.byte(0x18);
        this.byte(x);
      }
    }
  }

  arrayHeader(n: number): void {
    this.head(4, n);
  }

  mapHeader(n: number): void {
    this.head(5, n);
  }

  value(v: Value, depth = 0): void {
    if (depth > MAX_DEPTH) throw new CharmsError('INVALID_INPUT', 'value nests too deeply to encode');
    if (typeof v === 'bigint') return this.int(v);
    if (typeof v === 'number') return this.float(v);
    if (typeof v === 'string') return this.text(v);
    if (typeof v === 'boolean') return this.byte(v ? 0xf5 : 0xf4);
    if (v === null) return this.byte(0xf6);
    if (v === undefined) return this.byte(0xf7);
    if (v instanceof Uint8Array) return this.bytes(v);
    if (Array.isArray(v)) {
      this.head(4, v.length);
      for (const x of v) this.value(x, depth + 1);
      return;
    }
    if (v instanceof ValueMap) {
      this.head(5, v.entries.length);
      for (const [k, x] of v.entries) {
        this.value(k, depth + 1);
        this.value(x, depth + 1);
      }
      return;
    }
    if (v instanceof Tagged) {
      this.head(6, v.tag);
      return this.value(v.value, depth + 1);
    }
    throw new CharmsError('INTERNAL', `cannot CBOR-encode ${typeof v}`);
  }

  finish(): Uint8Array {
    return this.out.finish();
  }
}

const TEXT_ENCODER = new TextEncoder();
const TEXT_DECODER = new TextDecoder('utf-8', { fatal: true });
const isUtf8 = (b: Uint8Array): boolean => {
  try {
    TEXT_DECODER.decode(b);
    return true;
  } catch {
    return false;
  }
};

/** The IEEE half-precision bits of `v` when it round-trips exactly, else undefined. */
function toHalf(v: number): number | undefined {
  if (Number.isNaN(v)) return 0x7e00;
  if (v === Infinity) return 0x7c00;
  if (v === -Infinity) return 0xfc00;
  if (v === 0) return Object.is(v, -0) ? 0x8000 : 0;
  const sign = v < 0 ? 0x8000 : 0;
  const a = Math.abs(v);
  // normal range 2^-14 .. 65504, subnormals down to 2^-24
  if (a > 65504 || a < 2 ** -24) return undefined;
  let exp = Math.floor(Math.log2(a));
  if (2 ** exp > a) exp--; // guard log2 rounding
  if (2 ** (exp + 1) <= a) exp++;
  if (exp < -14) {
    const mant = a / 2 ** -24;
    return Number.isInteger(mant) ? sign | mant : undefined;
  }
  const mant = (a / 2 ** exp - 1) * 1024;
  if (!Number.isInteger(mant)) return undefined;
  return sign | ((exp + 15) << 10) | mant;
}

/** The value of IEEE half-precision bits. */
export function fromHalf(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 31) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

export function encodeCbor(v: Value): Uint8Array {
  const w = new CborWriter();
  w.value(v);
  return w.finish();
}

// ---------------------------------------------------------------------------------- decoding

export interface CborHead {
  major: number;
  /** Argument; `null` for indefinite length (additional info 31). */
  arg: bigint | null;
  /** Additional-info bits (needed to tell f16/f32/f64 apart). */
  info: number;
}

const err = (msg: string, pos: number, cause?: unknown): CharmsError =>
  new CharmsError('CBOR_DECODE', `invalid CBOR at byte ${pos}: ${msg}`, cause === undefined ? undefined : { cause });

/**
 * Byte strings that arrived in indefinite-length (chunked) form. ciborium refuses them where serde
 * asks for `bytes` (a `UtxoId`), so typed readers need to know (see model/ciborium.ts).
 */
export const indefiniteByteStrings = new WeakSet<Uint8Array>();
/** For each chunked byte string, its longest chunk (Plutus data bounds each chunk to 64 bytes). */
export const longestChunk = new WeakMap<Uint8Array, number>();

/** A cursor over CBOR bytes. `pos` is public so callers can slice the original bytes. */
export class CborReader extends ByteReader {
  /** Whether the last text/byte string read was indefinite-length (for map keys). */
  private lastStringIndefinite = false;
  constructor(bytes: Uint8Array, start = 0) {
    super(bytes, (_what, at) => err('unexpected end of input', at), start);
  }

  peekByte(): number {
    this.need(1);
    return this.bytes[this.pos]!;
  }

  head(): CborHead {
    this.need(1);
    const b = this.bytes[this.pos++]!;
    const major = b >> 5;
    const info = b & 31;
    if (info < 24) return { major, arg: BigInt(info), info };
    const view = this.view;
    let arg: bigint;
    switch (info) {
      case 24:
        this.need(1);
        arg = BigInt(this.bytes[this.pos]!);
        this.pos += 1;
        break;
      case 25:
        this.need(2);
        arg = BigInt(view.getUint16(this.pos));
        this.pos += 2;
        break;
      case 26:
        this.need(4);
        arg = BigInt(view.getUint32(this.pos));
        this.pos += 4;
        break;
      case 27:
        this.need(8);
        arg = view.getBigUint64(this.pos);
        this.pos += 8;
        break;
      case 31:
        if (major === 0 || major === 1 || major === 6) throw err('indefinite length not allowed for this major type', this.pos - 1);
        return { major, arg: null, info };
      default:
        throw err(`reserved additional info ${info}`, this.pos - 1);
    }
    return { major, arg, info };
  }

  /** A length that must fit the remaining input (guards against huge allocations). */
  private length(arg: bigint, unit: number): number {
    if (arg > BigInt(this.bytes.length - this.pos) / BigInt(unit) + 1n) throw err(`length ${arg} exceeds the input`, this.pos);
    return Number(arg);
  }

  private isBreak(): boolean {
    this.need(1);
    if (this.bytes[this.pos] === 0xff) {
      this.pos++;
      return true;
    }
    return false;
  }

  private chunked(major: 2 | 3): Uint8Array {
    const parts: Uint8Array[] = [];
    let longest = 0;
    while (!this.isBreak()) {
      const h = this.head();
      if (h.major !== major || h.arg === null) throw err('bad chunk in indefinite string', this.pos);
      const n = this.length(h.arg, 1);
      this.need(n);
      const chunk = this.bytes.subarray(this.pos, this.pos + n);
      // each text chunk is UTF-8 on its own (RFC 8949 3.2.3; ciborium-ll reads it so)
      if (major === 3 && !isUtf8(chunk)) throw err('text chunk is not valid UTF-8', this.pos);
      parts.push(chunk);
      this.pos += n;
      if (n > longest) longest = n;
    }
    const out = concatByteList(parts);
    if (major === 2) longestChunk.set(out, longest);
    return out;
  }

  value(depth = 0): Value {
    if (depth > MAX_DEPTH) throw err('nesting too deep', this.pos);
    const start = this.pos;
    const h = this.head();
    switch (h.major) {
      case 0:
        return h.arg!;
      case 1:
        return -1n - h.arg!;
      case 2:
      case 3: {
        let b: Uint8Array;
        if (h.arg === null) b = this.chunked(h.major as 2 | 3);
        else {
          const n = this.length(h.arg, 1);
          this.need(n);
          b = this.bytes.slice(this.pos, this.pos + n);
          this.pos += n;
        }
        this.lastStringIndefinite = h.arg === null;
        if (h.major === 2) {
          if (h.arg === null) indefiniteByteStrings.add(b);
          return b;
        }
        try {
          return TEXT_DECODER.decode(b);
        } catch (e) {
          throw err('text string is not valid UTF-8', start, e);
        }
      }
      case 4: {
        const out: Value[] = [];
        if (h.arg === null) while (!this.isBreak()) out.push(this.value(depth + 1));
        else {
          const n = this.length(h.arg, 1);
          for (let i = 0; i < n; i++) out.push(this.value(depth + 1));
        }
        return out;
      }
      case 5: {
        const m = new ValueMap();
        const entry = () => {
          this.lastStringIndefinite = false;
          const k = this.value(depth + 1);
          // a text key in chunked form: struct field names may not be (ciborium's identifier rule)
          if (this.lastStringIndefinite && !(k instanceof ValueMap) && !Array.isArray(k)) (m.indefiniteKeys ??= new Set()).add(m.entries.length);
          m.entries.push([k, this.value(depth + 1)]);
        };
        if (h.arg === null) while (!this.isBreak()) entry();
        else {
          const n = this.length(h.arg, 2);
          for (let i = 0; i < n; i++) entry();
        }
        return m;
      }
      case 6:
        return new Tagged(h.arg!, this.value(depth + 1));
      default: {
        // major 7
        const view = this.view;
        switch (h.info) {
          case 20:
            return false;
          case 21:
            return true;
          case 22:
            return null;
          case 23:
            return undefined;
          case 25:
            return fromHalf(Number(h.arg));
          case 26:
            return view.getFloat32(this.pos - 4);
          case 27:
            return view.getFloat64(this.pos - 8);
          case 31:
            throw err('unexpected break', start);
          default:
            throw err(`unsupported simple value ${h.arg}`, start);
        }
      }
    }
  }

  /** Skips one item and returns its raw bytes (a view into the input). */
  rawItem(): Uint8Array {
    const start = this.pos;
    this.value();
    return this.bytes.subarray(start, this.pos);
  }
}

/** Decodes one CBOR item. Trailing bytes are an error unless `allowTrailing`. */
export function decodeCbor(bytes: Uint8Array, opts: { allowTrailing?: boolean } = {}): Value {
  const r = new CborReader(bytes);
  const v = r.value();
  if (!opts.allowTrailing && !r.done) throw err(`${bytes.length - r.pos} trailing bytes`, r.pos);
  return v;
}

/**
 * Checks that `bytes` hold one well-formed CBOR item of bounded shape without building it: every
 * declared length fits the remaining input (an array declaring 2^32−1 items in 8 MiB is refused
 * at its head), nesting stays under `maxDepth` and the items number at most `maxItems`. For
 * answers a foreign decoder (one without those guards) is about to read.
 */
export function checkCborShape(bytes: Uint8Array, limits: { maxDepth: number; maxItems: number }): void {
  const r = new CborReader(bytes);
  const end = bytes.length;
  /** Items still expected per open container (-1: indefinite, until a break). */
  const open: number[] = [];
  let items = 0;
  const refuse = (why: string) => {
    throw err(why, r.pos);
  };
  for (;;) {
    // close finished containers
    while (open.length > 0 && open[open.length - 1] === 0) open.pop();
    if (open.length === 0 && items > 0) break;
    if (open.length > 0 && open[open.length - 1] === -1 && r.peekByte() === 0xff) {
      r.pos++;
      open.pop(); // counted in its parent when its head was read
      continue;
    }
    if (++items > limits.maxItems) refuse(`more than ${limits.maxItems} items`);
    const h = r.head();
    const left = BigInt(end - r.pos);
    let child = 0; // items this one opens
    switch (h.major) {
      case 2:
      case 3:
        if (h.arg === null) child = -1;
        else {
          if (h.arg > left) refuse(`length ${h.arg} exceeds the input`);
          r.pos += Number(h.arg);
        }
        break;
      case 4:
      case 5:
        if (h.arg === null) child = -1;
        else {
          const n = h.major === 5 ? h.arg * 2n : h.arg;
          if (n > left) refuse(`length ${h.arg} exceeds the input`);
          child = Number(n);
        }
        break;
      case 6:
        child = 1;
        break;
      case 7:
        if (h.info === 31) refuse('unexpected break');
        break;
    }
    if (open.length > 0 && open[open.length - 1]! > 0) open[open.length - 1]!--;
    if (child !== 0) {
      if (open.length >= limits.maxDepth) refuse('nesting too deep');
      open.push(child);
    }
  }
  if (r.pos !== end) refuse(`${end - r.pos} trailing bytes`);
}
