/**
 * Bitcoin finality proofs for beaming sources: `{tx, proof: MerkleBlock, headers: [header…]}`.
 * The merkle block must contain the transaction (root checked against its header), headers must
 * chain from that block, and the accumulated work must reach that of `FINALITY_TARGET_BITS`
 * (about 6 mainnet blocks). Stricter than the reference: every following header must satisfy its
 * own proof of work too (the reference only checks the transaction's block).
 */
import { sha256 } from '../util/sha256.js';
import { CharmsError } from '../errors.js';
import { bigEndianToBigInt, equalBytes, fromHex, reversed } from '../util/bytes.js';
import { parseTx, txid } from './tx.js';

const FINALITY_TARGET_BITS = 0x16507000;

const bad = (m: string) => new CharmsError('INVALID_INPUT', `finality proof: ${m}`);
const sha256d = (b: Uint8Array) => sha256(sha256(b));

interface Header {
  raw: Uint8Array;
  prevHash: Uint8Array;
  merkleRoot: Uint8Array;
  bits: number;
}

function parseHeader(raw: Uint8Array): Header {
  if (raw.length !== 80) throw bad(`block header must be 80 bytes, got ${raw.length}`);
  return { raw, prevHash: raw.subarray(4, 36), merkleRoot: raw.subarray(36, 68), bits: new DataView(raw.buffer, raw.byteOffset).getUint32(72, true) };
}

/** Target from compact `bits` (negative or overflowing targets are invalid). */
export function targetFromBits(bits: number): bigint {
  const exp = bits >>> 24;
  const mant = BigInt(bits & 0x007fffff);
  if (bits & 0x00800000) throw bad('negative target');
  return exp <= 3 ? mant >> BigInt(8 * (3 - exp)) : mant << BigInt(8 * (exp - 3));
}

/** Expected hashes to find a block at this target: 2^256 / (target + 1). */
export const workOf = (target: bigint): bigint => (1n << 256n) / (target + 1n);

function checkPow(h: Header): bigint {
  const target = targetFromBits(h.bits);
  if (target === 0n || bigEndianToBigInt(reversed(sha256d(h.raw))) > target) throw bad('block header does not satisfy its proof of work');
  return workOf(target);
}

/** Parses a BIP37 merkle block and returns its header and the matched txids (root checked). */
function parseMerkleBlock(b: Uint8Array): { header: Header; matched: Uint8Array[] } {
  if (b.length < 84) throw bad('merkle block too short');
  const header = parseHeader(b.subarray(0, 80));
  const view = new DataView(b.buffer, b.byteOffset);
  const total = view.getUint32(80, true);
  let pos = 84;
  const varint = () => {
    const f = b[pos++]!;
    if (f < 0xfd) return f;
    const n = f === 0xfd ? 2 : f === 0xfe ? 4 : 8;
    let v = 0;
    for (let i = 0; i < n; i++) v += b[pos + i]! * 2 ** (8 * i);
    pos += n;
    return v;
  };
  const nHashes = varint();
  if (pos + 32 * nHashes > b.length) throw bad('merkle block truncated');
  const hashes: Uint8Array[] = [];
  for (let i = 0; i < nHashes; i++) hashes.push(b.subarray(pos + 32 * i, pos + 32 * i + 32));
  pos += 32 * nHashes;
  const nFlags = varint();
  const flags = b.subarray(pos, pos + nFlags);
  if (total === 0 || total > 1_000_000) throw bad('bad transaction count');
  let height = 0;
  const width = (h: number) => (total + (1 << h) - 1) >> h;
  while (width(height) > 1) height++;
  let bit = 0;
  let used = 0;
  const matched: Uint8Array[] = [];
  const walk = (h: number, i: number): Uint8Array => {
    if (bit >= flags.length * 8) throw bad('merkle block flags exhausted');
    const flag = (flags[bit >> 3]! >> (bit & 7)) & 1;
    bit++;
    if (h === 0 || !flag) {
      if (used >= hashes.length) throw bad('merkle block hashes exhausted');
      const hash = hashes[used++]!;
      if (h === 0 && flag) matched.push(hash);
      return hash;
    }
    const left = walk(h - 1, i * 2);
    const right = i * 2 + 1 < width(h - 1) ? walk(h - 1, i * 2 + 1) : left;
    if (i * 2 + 1 < width(h - 1) && equalBytes(left, right)) throw bad('duplicate merkle branch');
    const cat = new Uint8Array(64);
    cat.set(left, 0);
    cat.set(right, 32);
    return sha256d(cat);
  };
  const root = walk(height, 0);
  if (used !== hashes.length) throw bad('unused merkle hashes');
  if (!equalBytes(root, header.merkleRoot)) throw bad('merkle root does not match the block header');
  return { header, matched };
}

/** The txids (internal byte order) a BIP37 merkle block proves in its block; INVALID_INPUT when it does not check. */
export const merkleBlockTxids = (proof: Uint8Array): Uint8Array[] => parseMerkleBlock(proof).matched;

/** True iff the proof shows the transaction buried under enough work. */
export function verifyBitcoinFinality(txHex: string, proofHex: string, headersHex: string[]): boolean {
  try {
    const id = txid(parseTx(fromHex(txHex, 'tx')));
    const { header, matched } = parseMerkleBlock(fromHex(proofHex, 'proof'));
    if (!matched[0] || !equalBytes(matched[0], id)) throw bad('the merkle block does not contain the transaction');
    let work = checkPow(header);
    let prev = header;
    for (const hx of headersHex) {
      const h = parseHeader(fromHex(hx, 'header'));
      if (!equalBytes(h.prevHash, sha256d(prev.raw))) throw bad('headers do not chain');
      work += checkPow(h);
      prev = h;
    }
    return work >= workOf(targetFromBits(FINALITY_TARGET_BITS));
  } catch (e) {
    if (e instanceof CharmsError) return false;
    throw e;
  }
}
