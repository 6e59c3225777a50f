/**
 * Minimal byte reader/writer for the WebAssembly binary format (LEB128 integers, names,
 * sections). Only what the app-runner's module parser and instrumenter need.
 */
import { CharmsError } from '../errors.js';

export class WasmReader {
  pos: number;
  constructor(
    readonly bytes: Uint8Array,
    start = 0,
    readonly end = bytes.length,
  ) {
    if (end > bytes.length || start > end)
      throw new CharmsError('INVALID_INPUT', `wasm module: malformed module (range ${start}..${end} runs past the end at ${bytes.length})`);
    this.pos = start;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  private fail(what: string): never {
    throw new CharmsError('INVALID_INPUT', `wasm module: malformed ${what} at byte offset ${this.pos}`);
  }

  u8(): number {
    if (this.pos >= this.end) this.fail('module (unexpected end)');
    return this.bytes[this.pos++]!;
  }

  /** Unsigned LEB128 up to 32 bits. */
  u32(): number {
    let result = 0;
    let shift = 0;
    for (let i = 0; i < 5; i++) {
      const b = this.u8();
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) {
        if (result > 0xffffffff) this.fail('u32 (too large)');
        return result;
      }
      shift += 7;
    }
    return this.fail('u32 (LEB128 too long)');
  }

  /** Signed LEB128 up to 32 bits, returned as a JS number. */
  s32(): number {
    return Number(this.sleb(5, 32));
  }

  /** Signed LEB128 up to 64 bits. */
  s64(): bigint {
    return this.sleb(10, 64);
  }

  /** Signed 33-bit LEB (block types). */
  s33(): number {
    return Number(this.sleb(5, 33));
  }

  private sleb(maxBytes: number, bits: number): bigint {
    let result = 0n;
    let shift = 0n;
    for (let i = 0; i < maxBytes; i++) {
      const b = this.u8();
      result |= BigInt(b & 0x7f) << shift;
      shift += 7n;
      if ((b & 0x80) === 0) {
        if ((b & 0x40) !== 0) result -= 1n << shift;
        return BigInt.asIntN(bits, result);
      }
    }
    return this.fail('signed LEB128 (too long)');
  }

  bytesN(n: number): Uint8Array {
    if (this.pos + n > this.end) this.fail('module (unexpected end)');
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  name(): string {
    const n = this.u32();
    return new TextDecoder('utf-8', { fatal: false }).decode(this.bytesN(n));
  }
}

/** Growable output buffer with LEB128 encoders. */
export class WasmWriter {
  private buf: Uint8Array;
  length = 0;
  constructor(initial = 1024) {
    this.buf = new Uint8Array(initial);
  }

  private ensure(extra: number): void {
    if (this.length + extra <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + extra) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  byte(b: number): this {
    this.ensure(1);
    this.buf[this.length++] = b;
    return this;
  }

  bytes(b: Uint8Array): this {
    this.ensure(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
    return this;
  }

  u32(v: number): this {
    let n = v >>> 0;
    do {
      let b = n & 0x7f;
      n >>>= 7;
      if (n !== 0) b |= 0x80;
      this.byte(b);
    } while (n !== 0);
    return this;
  }

  s64(v: bigint): this {
    let n = BigInt.asIntN(64, v);
    for (;;) {
      const b = Number(n & 0x7fn);
      n >>= 7n;
      const done = (n === 0n && (b & 0x40) === 0) || (n === -1n && (b & 0x40) !== 0);
      this.byte(done ? b : b | 0x80);
      if (done) return this;
    }
  }

  s32(v: number): this {
    return this.s64(BigInt(v | 0));
  }

  name(s: string): this {
    const b = new TextEncoder().encode(s);
    return this.u32(b.length).bytes(b);
  }

  /** Writes `id`, the LEB size of `content`, then `content`. */
  section(id: number, content: Uint8Array): this {
    return this.byte(id).u32(content.length).bytes(content);
  }

  finish(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}
