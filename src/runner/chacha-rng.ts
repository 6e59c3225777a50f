/**
 * The deterministic generator behind the reference's `random_get`: Rust `rand` 0.10 `StdRng`,
 * i.e. ChaCha with 12 rounds, 32-byte seed as key, 64-bit block counter starting at 0, stream 0,
 * producing 4 blocks (64 words) at a time. `fillBytes` consumes whole 32-bit words; the unused
 * bytes of a partly used last word are discarded.
 */
import { CharmsError } from '../errors.js';

const ROUNDS = 12;
const BLOCKS = 4;

function rotl(x: number, n: number): number {
  return (x << n) | (x >>> (32 - n));
}

export class ChaCha12Rng {
  private readonly key = new Uint32Array(8);
  private counter = 0n;
  private readonly buf = new Uint32Array(16 * BLOCKS);
  private index = 16 * BLOCKS;

  constructor(seed: Uint8Array) {
    if (seed.length !== 32) throw new CharmsError('INTERNAL', 'ChaCha12Rng seed must be 32 bytes');
    const dv = new DataView(seed.buffer, seed.byteOffset, 32);
    for (let i = 0; i < 8; i++) this.key[i] = dv.getUint32(i * 4, true);
  }

  private refill(): void {
    const x = new Uint32Array(16);
    for (let b = 0; b < BLOCKS; b++) {
      const s = new Uint32Array(16);
      s[0] = 0x61707865;
      s[1] = 0x3320646e;
      s[2] = 0x79622d32;
      s[3] = 0x6b206574;
      s.set(this.key, 4);
      s[12] = Number(this.counter & 0xffffffffn);
      s[13] = Number((this.counter >> 32n) & 0xffffffffn);
      s[14] = 0;
      s[15] = 0;
      x.set(s);
      for (let r = 0; r < ROUNDS; r += 2) {
        qr(x, 0, 4, 8, 12);
        qr(x, 1, 5, 9, 13);
        qr(x, 2, 6, 10, 14);
        qr(x, 3, 7, 11, 15);
        qr(x, 0, 5, 10, 15);
        qr(x, 1, 6, 11, 12);
        qr(x, 2, 7, 8, 13);
        qr(x, 3, 4, 9, 14);
      }
      for (let i = 0; i < 16; i++) this.buf[b * 16 + i] = (x[i]! + s[i]!) >>> 0;
      this.counter = (this.counter + 1n) & 0xffffffffffffffffn;
    }
    this.index = 0;
  }

  nextU32(): number {
    if (this.index >= this.buf.length) this.refill();
    return this.buf[this.index++]!;
  }

  nextU64(): bigint {
    const lo = BigInt(this.nextU32());
    const hi = BigInt(this.nextU32());
    return (hi << 32n) | lo;
  }

  fillBytes(out: Uint8Array): void {
    for (let i = 0; i < out.length; i += 4) {
      const w = this.nextU32();
      for (let j = 0; j < 4 && i + j < out.length; j++) out[i + j] = (w >>> (8 * j)) & 0xff;
    }
  }
}

function qr(x: Uint32Array, a: number, b: number, c: number, d: number): void {
  x[a] = (x[a]! + x[b]!) | 0;
  x[d] = rotl(x[d]! ^ x[a]!, 16);
  x[c] = (x[c]! + x[d]!) | 0;
  x[b] = rotl(x[b]! ^ x[c]!, 12);
  x[a] = (x[a]! + x[b]!) | 0;
  x[d] = rotl(x[d]! ^ x[a]!, 8);
  x[c] = (x[c]! + x[d]!) | 0;
  x[b] = rotl(x[b]! ^ x[c]!, 7);
}
