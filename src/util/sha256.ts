/**
 * SHA-256: Node's native hash where there is one (hashing an app binary or a large transaction
 * with the pure-JS code costs milliseconds in a fresh process, before the JIT warms up), else
 * @noble/hashes (browsers). Both give the same bytes; the tests compare them.
 */
import { sha256 as pureSha256 } from '@noble/hashes/sha2.js';

type NodeCrypto = typeof import('node:crypto');
// through globalThis, so that browser bundlers see no Node global to polyfill (Node ≥ 20.16)
const host = globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } };
const nodeCrypto = host.process?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined;

export const sha256 = (data: Uint8Array): Uint8Array => (nodeCrypto ? new Uint8Array(nodeCrypto.createHash('sha256').update(data).digest()) : pureSha256(data));

/** SHA-256 of the concatenation of `parts`, without building it where the native hash can stream. */
export function sha256Parts(parts: readonly Uint8Array[]): Uint8Array {
  if (!nodeCrypto) {
    let n = 0;
    for (const p of parts) n += p.length;
    const all = new Uint8Array(n);
    n = 0;
    for (const p of parts) {
      all.set(p, n);
      n += p.length;
    }
    return pureSha256(all);
  }
  const h = nodeCrypto.createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
}

export { pureSha256 };

// ------------------------------------------------------------------------------------------------
// Double SHA-256 of byte ranges into a caller's buffer, without allocating: block parsing hashes
// every transaction and every merkle node, mostly under 300 bytes, where a native hash's per-call
// cost (and the garbage of its objects) exceeds the hashing. Plain JS, so browser-safe too.

const K = Int32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74,
  0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d,
  0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e,
  0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5,
  0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const IV = Int32Array.from([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
const W = new Int32Array(64);
const H = new Int32Array(8);
/** The message block being filled (bytes that did not start a whole block in the source). */
const pending = new Uint8Array(64);
let pendingLen = 0;
let total = 0;

/** One compression of the 64 bytes at `src[off]` into H. */
function compress(src: Uint8Array, off: number): void {
  for (let i = 0; i < 16; i++) {
    const p = off + 4 * i;
    W[i] = (src[p]! << 24) | (src[p + 1]! << 16) | (src[p + 2]! << 8) | src[p + 3]!;
  }
  for (let i = 16; i < 64; i++) {
    const x = W[i - 15]!;
    const y = W[i - 2]!;
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
    W[i] = (W[i - 16]! + s0 + W[i - 7]! + s1) | 0;
  }
  let a = H[0]!;
  let b = H[1]!;
  let c = H[2]!;
  let d = H[3]!;
  let e = H[4]!;
  let f = H[5]!;
  let g = H[6]!;
  let h = H[7]!;
  for (let i = 0; i < 64; i++) {
    const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + s1 + ((e & f) ^ (~e & g)) + K[i]! + W[i]!) | 0;
    const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  H[0] = (H[0]! + a) | 0;
  H[1] = (H[1]! + b) | 0;
  H[2] = (H[2]! + c) | 0;
  H[3] = (H[3]! + d) | 0;
  H[4] = (H[4]! + e) | 0;
  H[5] = (H[5]! + f) | 0;
  H[6] = (H[6]! + g) | 0;
  H[7] = (H[7]! + h) | 0;
}

function begin(): void {
  H.set(IV);
  pendingLen = 0;
  total = 0;
}

function feed(src: Uint8Array, start: number, end: number): void {
  total += end - start;
  let p = start;
  if (pendingLen > 0) {
    while (pendingLen < 64 && p < end) pending[pendingLen++] = src[p++]!;
    if (pendingLen < 64) return;
    compress(pending, 0);
    pendingLen = 0;
  }
  for (; p + 64 <= end; p += 64) compress(src, p);
  while (p < end) pending[pendingLen++] = src[p++]!;
}

/** Pads, compresses the last block(s) and writes the digest to `out[o..o+32)`. */
function finish(out: Uint8Array, o: number): void {
  const bits = total * 8;
  pending[pendingLen++] = 0x80;
  if (pendingLen > 56) {
    pending.fill(0, pendingLen);
    compress(pending, 0);
    pendingLen = 0;
  }
  pending.fill(0, pendingLen, 56);
  const hi = Math.floor(bits / 0x100000000);
  pending[56] = hi >>> 24;
  pending[57] = hi >>> 16;
  pending[58] = hi >>> 8;
  pending[59] = hi;
  pending[60] = bits >>> 24;
  pending[61] = bits >>> 16;
  pending[62] = bits >>> 8;
  pending[63] = bits;
  compress(pending, 0);
  for (let i = 0; i < 8; i++) {
    const v = H[i]!;
    out[o + 4 * i] = v >>> 24;
    out[o + 4 * i + 1] = v >>> 16;
    out[o + 4 * i + 2] = v >>> 8;
    out[o + 4 * i + 3] = v;
  }
}

const mid = new Uint8Array(32);
/** Above this many bytes Node's native hash (with SHA extensions) is faster despite its per-call cost. */
const NATIVE_FROM = 1024;

/**
 * SHA-256(SHA-256(m)) where m is `src[s1,e1) ‖ src[s2,e2) ‖ src[s3,e3)` (leave the later ranges
 * empty when there is one), written to `out[o..o+32)`. Bitcoin's txid (of the legacy form, three
 * slices of a segwit transaction) and merkle node.
 */
export function sha256dInto(src: Uint8Array, out: Uint8Array, o: number, s1: number, e1: number, s2 = 0, e2 = 0, s3 = 0, e3 = 0): void {
  if (nodeCrypto && e1 - s1 + (e2 - s2) + (e3 - s3) >= NATIVE_FROM) {
    const h = nodeCrypto.createHash('sha256').update(src.subarray(s1, e1));
    if (e2 > s2) h.update(src.subarray(s2, e2));
    if (e3 > s3) h.update(src.subarray(s3, e3));
    mid.set(h.digest());
  } else {
    begin();
    feed(src, s1, e1);
    if (e2 > s2) feed(src, s2, e2);
    if (e3 > s3) feed(src, s3, e3);
    finish(mid, 0);
  }
  begin();
  feed(mid, 0, 32);
  finish(out, o);
}
