/**
 * The one growable byte writer and the one bounds-checked byte reader behind every binary codec
 * (Bitcoin transactions, CBOR, the WASM instrumenter, protobuf, bincode). Each codec adds its own
 * integer forms (compact size, CBOR heads, LEB128) on top and names its own errors.
 */
import type { CharmsError } from '../errors.js';

/** An output buffer that doubles when full. `finish()` returns a right-sized copy. */
export class ByteWriter {
  private buf: Uint8Array;
  private view: DataView;
  /** Bytes written so far. */
  length = 0;

  constructor(initial = 256) {
    this.buf = new Uint8Array(Math.max(16, initial));
    this.view = new DataView(this.buf.buffer);
  }

  /** Makes room for `n` more bytes. */
  reserve(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  byte(b: number): this {
    if (this.length === this.buf.length) this.reserve(1);
    this.buf[this.length++] = b;
    return this;
  }

  bytes(b: Uint8Array): this {
    this.reserve(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
    return this;
  }

  u16be(v: number): this {
    this.reserve(2);
    this.view.setUint16(this.length, v);
    this.length += 2;
    return this;
  }

  u32le(v: number): this {
    this.reserve(4);
    this.view.setUint32(this.length, v >>> 0, true);
    this.length += 4;
    return this;
  }

  u32be(v: number): this {
    this.reserve(4);
    this.view.setUint32(this.length, v >>> 0);
    this.length += 4;
    return this;
  }

  u64le(v: bigint): this {
    this.reserve(8);
    this.view.setBigUint64(this.length, BigInt.asUintN(64, v), true);
    this.length += 8;
    return this;
  }

  u64be(v: bigint): this {
    this.reserve(8);
    this.view.setBigUint64(this.length, BigInt.asUintN(64, v));
    this.length += 8;
    return this;
  }

  f32be(v: number): this {
    this.reserve(4);
    this.view.setFloat32(this.length, v);
    this.length += 4;
    return this;
  }

  f64be(v: number): this {
    this.reserve(8);
    this.view.setFloat64(this.length, v);
    this.length += 8;
    return this;
  }

  finish(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}

/**
 * A cursor over `bytes[start, end)`. Every read checks the bounds first; running past the end
 * throws the error the codec's `onEnd` makes (what was being read, at which offset).
 */
export class ByteReader {
  pos: number;
  private dv: DataView | undefined;

  constructor(
    readonly bytes: Uint8Array,
    private readonly onEnd: (what: string, at: number) => CharmsError,
    start = 0,
    readonly end = bytes.length,
  ) {
    if (end > bytes.length || start > end) throw onEnd(`range ${start}..${end} of ${bytes.length} bytes`, start);
    this.pos = start;
  }

  /** A DataView of the input, made on first use (readers are often made per small section). */
  get view(): DataView {
    return (this.dv ??= new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength));
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  /** Throws unless `n` more bytes are there. */
  need(n: number, what = 'data'): void {
    if (n < 0 || n > this.end - this.pos) throw this.onEnd(what, this.pos);
  }

  u8(what = 'byte'): number {
    if (this.pos >= this.end) throw this.onEnd(what, this.pos);
    return this.bytes[this.pos++]!;
  }

  u16le(what = 'u16'): number {
    this.need(2, what);
    const v = this.view.getUint16(this.pos, true);
    this.pos += 2;
    return v;
  }

  u32le(what = 'u32'): number {
    this.need(4, what);
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }

  u64le(what = 'u64'): bigint {
    this.need(8, what);
    const v = this.view.getBigUint64(this.pos, true);
    this.pos += 8;
    return v;
  }

  /** The next `n` bytes as a view into the input (no copy). */
  take(n: number, what = 'bytes'): Uint8Array {
    this.need(n, what);
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** The next `n` bytes as a copy (safe to keep after the input is reused). */
  copy(n: number, what = 'bytes'): Uint8Array {
    this.need(n, what);
    const out = this.bytes.slice(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}
