/**
 * gnark's byte encodings of BN254 Groth16 keys and proofs, as SP1's verifier reads them, decoded to
 * affine coordinates. Every coordinate is range-checked (< p); curve and subgroup membership are
 * checked by the pairing backend that receives the points. Browser-safe.
 *
 * Field elements are big-endian. In both encodings G2 coordinates put the imaginary part (A1) first.
 */
import { bn254 } from '@noble/curves/bn254.js';
import { CharmsError } from '../errors.js';
import { bigEndianToBigInt } from '../util/bytes.js';

const { Fp, Fp2 } = bn254.fields;

/** Base field modulus p and scalar field modulus r of BN254. */
export const BN254_P: bigint = Fp.ORDER;
export const BN254_R: bigint = bn254.fields.Fr.ORDER;

export interface G1Affine {
  x: bigint;
  y: bigint;
}
/** Fp2 element c0 + c1·u (u² = −1). */
interface Fp2Value {
  c0: bigint;
  c1: bigint;
}
export interface G2Affine {
  x: Fp2Value;
  y: Fp2Value;
}

/** The parts of a gnark verifying key the verifier uses. */
export interface GnarkVerifyingKey {
  alpha: G1Affine;
  beta: G2Affine;
  gamma: G2Affine;
  delta: G2Affine;
  /** K[0] and one point per public input; null = the point at infinity. */
  k: (G1Affine | null)[];
}

export interface GnarkProof {
  a: G1Affine;
  b: G2Affine;
  c: G1Affine;
}

export const invalidProof = (msg: string, cause?: unknown): CharmsError =>
  new CharmsError('PROOF_INVALID', `invalid Groth16 proof: ${msg}`, cause === undefined ? undefined : { cause });

function coordinate(b: Uint8Array, what: string): bigint {
  const v = bigEndianToBigInt(b);
  if (v >= BN254_P) throw invalidProof(`${what} is not below the field modulus`);
  return v;
}

// ---------------------------------------------------------------- compressed (verifying keys)

const HALF_P = (BN254_P - 1n) / 2n;
const TWIST_B = Fp2.div(Fp2.fromBigTuple([3n, 0n]), Fp2.fromBigTuple([9n, 1n]));

/** gnark flag in the top 2 bits: 10 = smaller y, 11 = larger y, 01 = infinity, 00 = invalid. */
function compressionFlag(b: number, what: string): 'small' | 'large' | 'infinity' {
  switch (b >> 6) {
    case 0b10:
      return 'small';
    case 0b11:
      return 'large';
    case 0b01:
      return 'infinity';
    default:
      throw new CharmsError('PROOF_INVALID', `groth16 verifying key: ${what} has no compression flag`);
  }
}

function withoutFlags(b: Uint8Array): Uint8Array {
  const c = Uint8Array.from(b);
  c[0]! &= 0x3f;
  return c;
}

function g1Compressed(b: Uint8Array, what: string): G1Affine | null {
  const flag = compressionFlag(b[0]!, what);
  if (flag === 'infinity') return null;
  const x = coordinate(withoutFlags(b), `${what}.x`);
  let y: bigint;
  try {
    y = Fp.sqrt(Fp.add(Fp.pow(x, 3n), 3n));
  } catch (e) {
    throw new CharmsError('PROOF_INVALID', `groth16 verifying key: ${what} is not on the curve`, { cause: e });
  }
  if (y > HALF_P !== (flag === 'large')) y = Fp.neg(y);
  return { x, y };
}

function g2Compressed(b: Uint8Array, what: string): G2Affine {
  const flag = compressionFlag(b[0]!, what);
  if (flag === 'infinity') throw new CharmsError('PROOF_INVALID', `groth16 verifying key: ${what} is the point at infinity`);
  const x = Fp2.fromBigTuple([coordinate(b.subarray(32, 64), `${what}.x.A0`), coordinate(withoutFlags(b.subarray(0, 32)), `${what}.x.A1`)]);
  let y: typeof x;
  try {
    y = Fp2.sqrt(Fp2.add(Fp2.pow(x, 3n), TWIST_B));
  } catch (e) {
    throw new CharmsError('PROOF_INVALID', `groth16 verifying key: ${what} is not on the curve`, { cause: e });
  }
  // "larger" compares the imaginary part unless it is zero
  const large = y.c1 !== 0n ? y.c1 > HALF_P : y.c0 > HALF_P;
  if (large !== (flag === 'large')) y = Fp2.neg(y);
  return { x: { c0: x.c0, c1: x.c1 }, y: { c0: y.c0, c1: y.c1 } };
}

/**
 * Parses a gnark Groth16 verifying key file: alpha(G1) · beta(G1, unused) · beta(G2) · gamma(G2) ·
 * delta(G1, unused) · delta(G2) · nK (u32 BE) · K[nK] (G1) · trailing commitment info (ignored).
 */
export function parseGnarkVerifyingKey(b: Uint8Array): GnarkVerifyingKey {
  if (b.length < 292) throw new CharmsError('PROOF_INVALID', `groth16 verifying key: expected at least 292 bytes, got ${b.length}`);
  const n = new DataView(b.buffer, b.byteOffset, b.byteLength).getUint32(288, false);
  if (n < 1 || b.length < 292 + 32 * n) throw new CharmsError('PROOF_INVALID', `groth16 verifying key: ${n} K points do not fit in ${b.length} bytes`);
  const alpha = g1Compressed(b.subarray(0, 32), 'alpha');
  if (!alpha) throw new CharmsError('PROOF_INVALID', 'groth16 verifying key: alpha is the point at infinity');
  const k: (G1Affine | null)[] = [];
  for (let i = 0; i < n; i++) k.push(g1Compressed(b.subarray(292 + 32 * i, 324 + 32 * i), `K[${i}]`));
  return {
    alpha,
    beta: g2Compressed(b.subarray(64, 128), 'beta'),
    gamma: g2Compressed(b.subarray(128, 192), 'gamma'),
    delta: g2Compressed(b.subarray(224, 288), 'delta'),
    k,
  };
}

// ---------------------------------------------------------------- uncompressed (proofs)

function g1Uncompressed(b: Uint8Array, what: string): G1Affine {
  const x = coordinate(b.subarray(0, 32), `${what}.x`);
  const y = coordinate(b.subarray(32, 64), `${what}.y`);
  if (x === 0n && y === 0n) throw invalidProof(`${what} is the point at infinity`);
  return { x, y };
}

function g2Uncompressed(b: Uint8Array, what: string): G2Affine {
  const x = { c1: coordinate(b.subarray(0, 32), `${what}.x.A1`), c0: coordinate(b.subarray(32, 64), `${what}.x.A0`) };
  const y = { c1: coordinate(b.subarray(64, 96), `${what}.y.A1`), c0: coordinate(b.subarray(96, 128), `${what}.y.A0`) };
  if (x.c0 === 0n && x.c1 === 0n && y.c0 === 0n && y.c1 === 0n) throw invalidProof(`${what} is the point at infinity`);
  return { x, y };
}

/** Parses a 256-byte gnark proof A(G1) ‖ B(G2) ‖ C(G1), uncompressed, with range checks. */
export function parseGnarkProof(b: Uint8Array): GnarkProof {
  if (b.length !== 256) throw invalidProof(`expected 256 bytes of gnark proof, got ${b.length}`);
  return { a: g1Uncompressed(b.subarray(0, 64), 'A'), b: g2Uncompressed(b.subarray(64, 192), 'B'), c: g1Uncompressed(b.subarray(192, 256), 'C') };
}
