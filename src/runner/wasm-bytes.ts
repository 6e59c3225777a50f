/**
 * Minimal byte reader/writer for the WebAssembly binary format (LEB128 integers, names,
 * sections). Only what the app-runner's module parser and instrumenter need.
 */
import { CharmsError } from '../errors.js';
import { ByteReader, ByteWriter } from '../util/byte-io.js';

/** A module that ends (or a section that ends) while `what` is being read. */
const malformed = (what: string, at: number): CharmsError =>
  new CharmsError('INVALID_INPUT', `wasm module: malformed module (unexpected end reading ${what} at byte offset ${at})`);

export class WasmReader extends ByteReader {
  constructor(bytes: Uint8Array, start = 0, end = bytes.length) {
    super(bytes, malformed, start, end);
  }

  private fail(what: string): never {
    throw new CharmsError('INVALID_INPUT', `wasm module: malformed ${what} at byte offset ${this.pos}`);
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
    return this.take(n);
  }

  name(): string {
    const n = this.u32();
    return new TextDecoder('utf-8', { fatal: false }).decode(this.bytesN(n));
  }
}

/** The shared growable byte writer plus LEB128 encoders. */
export class WasmWriter extends ByteWriter {
  constructor(initial = 1024) {
    super(initial);
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
}
