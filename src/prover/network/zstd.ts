/**
 * A zstd frame writer that stores its input in raw (uncompressed) blocks. The SDK uploads
 * `zstd(bincode(item))` to presigned URLs; the store only needs a valid zstd frame, so compression
 * is optional. Writing raw blocks takes 30 lines and no native or wasm dependency (Node 20's zlib
 * has no zstd; it arrived in 22.15). Cost: 15 bytes + 3 per 128 KiB. Format: RFC 8878.
 */
import { CharmsError } from '../../errors.js';

const MAGIC = [0x28, 0xb5, 0x2f, 0xfd];
const MAX_BLOCK = 128 * 1024;

export function zstdRawFrame(data: Uint8Array): Uint8Array {
  const blocks = Math.max(1, Math.ceil(data.length / MAX_BLOCK));
  const out = new Uint8Array(4 + 1 + 8 + blocks * 3 + data.length);
  out.set(MAGIC, 0);
  // Frame header descriptor: content size field of 8 bytes (flag 3), single segment, no checksum, no dictionary.
  out[4] = 0b1110_0000;
  new DataView(out.buffer).setBigUint64(5, BigInt(data.length), true);
  let o = 13;
  for (let b = 0; b < blocks; b++) {
    const chunk = data.subarray(b * MAX_BLOCK, Math.min(data.length, (b + 1) * MAX_BLOCK));
    const last = b === blocks - 1 ? 1 : 0;
    const header = (chunk.length << 3) | (0 /* raw */ << 1) | last;
    out[o++] = header & 0xff;
    out[o++] = (header >> 8) & 0xff;
    out[o++] = (header >> 16) & 0xff;
    out.set(chunk, o);
    o += chunk.length;
  }
  return out;
}

/**
 * Reads back a frame made only of raw blocks (what `zstdRawFrame` writes). For the loopback fake
 * network in tests; anything else (compressed blocks, checksums, skippable frames) is refused.
 */
/** A frame this reader does not take: INVALID_INPUT naming what is wrong. */
const notRawFrame = (why: string): CharmsError => new CharmsError('INVALID_INPUT', `zstd frame: ${why}`);

export function readZstdRawFrame(frame: Uint8Array): Uint8Array {
  if (frame.length < 6 || MAGIC.some((m, i) => frame[i] !== m)) throw notRawFrame('not a zstd frame');
  const fhd = frame[4]!;
  const fcsFlag = fhd >> 6;
  const single = (fhd >> 5) & 1;
  if (fhd & 0b111) throw notRawFrame('checksum or dictionary not supported');
  let o = 5 + (single ? 0 : 1);
  const fcsLen = [single ? 1 : 0, 2, 4, 8][fcsFlag]!;
  o += fcsLen;
  const parts: Uint8Array[] = [];
  for (;;) {
    if (o + 3 > frame.length) throw notRawFrame('truncated block header');
    const h = frame[o]! | (frame[o + 1]! << 8) | (frame[o + 2]! << 16);
    o += 3;
    const type = (h >> 1) & 3;
    const size = h >>> 3;
    if (type !== 0) throw notRawFrame(`block type ${type} not supported`);
    if (o + size > frame.length) throw notRawFrame('truncated block');
    parts.push(frame.subarray(o, o + size));
    o += size;
    if (h & 1) break;
  }
  if (o !== frame.length) throw notRawFrame('bytes after the frame');
  const out = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
  let w = 0;
  for (const p of parts) {
    out.set(p, w);
    w += p.length;
  }
  return out;
}
