/**
 * The bincode (1.3, legacy config: little-endian, u64 lengths, u32 enum tags) shapes the SP1 SDK
 * 6.3.0 puts on the wire: `SP1Stdin` for uploads, `ProofFromNetwork` for downloads. The deep
 * `SP1RecursionProof` of a compressed proof is never parsed: it is cut out of stage 1's proof
 * verbatim (located by the known public values and version string at the end) and spliced into
 * stage 2's stdin. See ../shared/protocol/sp1-proving.md §1.6.
 */
import { sha256 } from '../../util/sha256.js';
import { CharmsError } from '../../errors.js';
import { bigEndianToBigInt, concatByteList, equalBytes, fromHex, toHex } from '../../util/bytes.js';
import { ByteReader } from '../../util/byte-io.js';

const u64 = (n: number | bigint): Uint8Array => {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(n), true);
  return b;
};
const u32 = (n: number): Uint8Array => {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n, true);
  return b;
};
const vec = (b: Uint8Array): Uint8Array[] => [u64(b.length), b];

/** Length of bincode(`MachineVerifyingKey`), e.g. the spell checker's cached vk file. */
const SP1_VK_BYTES = 104;

/** `SP1Stdin{buffer: [input], ptr: 0, proofs: []}`: stage 1's stdin. */
export function stdinWithInput(input: Uint8Array): Uint8Array {
  return concatByteList([u64(1), ...vec(input), u64(0), u64(0)]);
}

/** `SP1Stdin{buffer: [input], ptr: 0, proofs: [(recursionProof, vk)]}`: stage 2's stdin. */
export function stdinWithProof(input: Uint8Array, recursionProof: Uint8Array, vk: Uint8Array): Uint8Array {
  if (vk.length !== SP1_VK_BYTES) throw new CharmsError('INTERNAL', `SP1 verifying key must be ${SP1_VK_BYTES} bytes, got ${vk.length}`);
  return concatByteList([u64(1), ...vec(input), u64(0), u64(1), recursionProof, vk]);
}

/** `SP1Proof` variant tags. */
const ProofKind = { CORE: 0, COMPRESSED: 1, PLONK: 2, GROTH16: 3 } as const;

const bad = (what: string): CharmsError => new CharmsError('PROVER_TRANSIENT', `the prover network returned a malformed proof: ${what}`);

/** bincode's little-endian fixed-width integers and u64-length-prefixed vectors. */
class Reader extends ByteReader {
  constructor(b: Uint8Array) {
    super(b, () => bad('truncated'));
  }
  len(): number {
    const v = this.u64le();
    if (v > BigInt(this.remaining)) throw bad('length past the end');
    return Number(v);
  }
  vec(): Uint8Array {
    return this.take(this.len());
  }
  string(): string {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(this.vec());
    } catch (e) {
      if (e instanceof CharmsError) throw e;
      throw bad('string is not UTF-8');
    }
  }
}

export interface Groth16FromNetwork {
  publicInputs: string[];
  encodedProof: Uint8Array;
  rawProof: string;
  vkeyHash: Uint8Array;
  publicValues: Uint8Array;
  sp1Version: string;
  /** `SP1ProofWithPublicValues::bytes()`: vkey-hash prefix (4) ‖ encoded proof — 356 bytes, what goes on chain. */
  onChainBytes: Uint8Array;
}

/** Decodes a GROTH16 `ProofFromNetwork`. */
export function decodeGroth16Proof(b: Uint8Array): Groth16FromNetwork {
  const r = new Reader(b);
  if (b.length < 4) throw bad('truncated');
  const tag = r.u32le();
  if (tag !== ProofKind.GROTH16) throw bad(`not a Groth16 proof (its variant tag is not 3)`);
  const publicInputs = Array.from({ length: 5 }, () => r.string());
  const encodedHex = r.string();
  const rawProof = r.string();
  const vkeyHash = r.take(32);
  const publicValues = r.vec();
  const sp1Version = r.string();
  if (r.remaining !== 0) throw bad(`${r.remaining} bytes after the proof`);
  let encodedProof: Uint8Array;
  try {
    encodedProof = fromHex(encodedHex, 'encoded_proof');
  } catch {
    throw bad('encoded_proof is not hex');
  }
  return { publicInputs, encodedProof, rawProof, vkeyHash, publicValues, sp1Version, onChainBytes: concatByteList([vkeyHash.subarray(0, 4), encodedProof]) };
}

/** Writes a GROTH16 `ProofFromNetwork` (the fake network in tests serves these). */
export function encodeGroth16Proof(p: Omit<Groth16FromNetwork, 'onChainBytes'>): Uint8Array {
  const str = (s: string) => vec(new TextEncoder().encode(s));
  if (p.publicInputs.length !== 5 || p.vkeyHash.length !== 32) throw new CharmsError('INTERNAL', 'Groth16 proof needs 5 public inputs and a 32-byte vkey hash');
  return concatByteList([
    u32(ProofKind.GROTH16),
    ...p.publicInputs.flatMap(str),
    ...str(toHex(p.encodedProof)),
    ...str(p.rawProof),
    p.vkeyHash,
    ...vec(p.publicValues),
    ...str(p.sp1Version),
  ]);
}

/** Writes a COMPRESSED `ProofFromNetwork` around opaque `SP1RecursionProof` bytes. */
export function encodeCompressedProof(recursionProof: Uint8Array, publicValues: Uint8Array, sp1Version: string): Uint8Array {
  return concatByteList([u32(ProofKind.COMPRESSED), recursionProof, ...vec(publicValues), ...vec(new TextEncoder().encode(sp1Version))]);
}

/**
 * Splits a COMPRESSED `ProofFromNetwork` into the verbatim `SP1RecursionProof` bytes, checking that
 * its public values are exactly `expectedPublicValues` (the proof cannot be parsed, so the known tail
 * `u64 len ‖ pv ‖ u64 len ‖ version` is what locates the split).
 */
export function spliceCompressedProof(b: Uint8Array, expectedPublicValues: Uint8Array): { recursionProof: Uint8Array; sp1Version: string } {
  if (b.length < 4 + 16) throw bad('truncated');
  const dv = new DataView(b.buffer, b.byteOffset, b.length);
  const tag = dv.getUint32(0, true);
  if (tag !== ProofKind.COMPRESSED) throw bad(`not a compressed proof (its variant tag is not 1)`);
  // The version string is short printable ASCII ("v6.1.0"); try every length that fits.
  for (let vlen = 1; vlen <= 64 && vlen + 8 + 8 + 4 <= b.length; vlen++) {
    const vAt = b.length - vlen;
    if (dv.getBigUint64(vAt - 8, true) !== BigInt(vlen)) continue;
    const version = b.subarray(vAt);
    if (!version.every((c) => c >= 0x20 && c < 0x7f)) continue;
    const pvEnd = vAt - 8;
    const pvAt = pvEnd - expectedPublicValues.length;
    if (pvAt - 8 < 4) continue;
    if (dv.getBigUint64(pvAt - 8, true) !== BigInt(expectedPublicValues.length)) continue;
    if (!equalBytes(b.subarray(pvAt, pvEnd), expectedPublicValues)) continue;
    return { recursionProof: b.subarray(4, pvAt - 8), sp1Version: new TextDecoder().decode(version) };
  }
  throw new CharmsError('PROVER_TRANSIENT', 'stage 1 proof does not commit to the expected public values (CBOR of the spell vk and the full spell)');
}

/** sha256(pv) with the top 3 bits cleared: SP1's committed-values digest, as a decimal public input. */
export function committedDigestDecimal(pv: Uint8Array): string {
  const d = sha256(pv);
  d[0] = d[0]! & 0x1f;
  return bigEndianToBigInt(d).toString(10);
}
