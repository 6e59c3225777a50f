import { CharmsError } from '../errors.js';

const HEX = '0123456789abcdef';
const BYTE_HEX = Array.from({ length: 256 }, (_, i) => HEX[i >> 4]! + HEX[i & 15]!);

export function toHex(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < b.length; i++) s += BYTE_HEX[b[i]!]!;
  return s;
}

/** Parses hex (either case, optional 0x). `what` names the field in the error. */
export function fromHex(h: string, what = 'hex', expectedBytes?: number): Uint8Array {
  let s = h.trim();
  if (s.startsWith('0x') || s.startsWith('0X')) s = s.slice(2);
  if (s.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(s)) throw new CharmsError('INVALID_INPUT', `${what}: not a valid hex string`);
  if (expectedBytes !== undefined && s.length !== expectedBytes * 2)
    throw new CharmsError('INVALID_INPUT', `${what}: expected ${expectedBytes * 2} hex characters, got ${s.length}`);
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.substr(i * 2, 2), 16);
  return out;
}

/** Concatenates a few byte strings (spread arguments: use `concatByteList` for unbounded lists). */
export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  return concatByteList(parts);
}

/**
 * Concatenates any number of byte strings. Takes an array, never a spread: spreading an
 * input-sized list (150 000 CBOR chunks, script pushes) overflows the call stack.
 */
export function concatByteList(parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Lexicographic comparison of byte strings (Rust's Ord for [u8]). */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

export const reversed = (b: Uint8Array): Uint8Array => Uint8Array.from(b).reverse();

/** Big-endian bytes as an unsigned number (one hex parse: much cheaper than a shift per byte while the code is cold). */
/** The unsigned big-endian integer of `b`, eight bytes at a time (hot in proof verification). */
export function bigEndianToBigInt(b: Uint8Array): bigint {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let v = 0n;
  let i = 0;
  for (; i + 8 <= b.length; i += 8) v = (v << 64n) | view.getBigUint64(i);
  for (; i < b.length; i++) v = (v << 8n) | BigInt(b[i]!);
  return v;
}

export const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
