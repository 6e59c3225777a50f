/**
 * SP1 / gnark Groth16 verification over BN254 with @noble/curves. Every point is range-checked
 * (coordinates < p), curve-checked and, for G2, subgroup-checked, as substrate-bn does. The G2
 * line coefficients of a verifying key and the Miller loop of e(α, β) are computed once per key.
 */
import { bn254 } from '@noble/curves/bn254.js';
import { CharmsError } from '../errors.js';

const { Fp, Fp2, Fp12, Fr } = bn254.fields;
const G1 = bn254.G1.Point;
/** Miller loop without the final exponentiation (noble's second parameter; its typings omit it). */
const millerLoop = (pairs: unknown[]): ReturnType<typeof Fp12.mul> =>
  (bn254.millerLoopBatch as unknown as (p: unknown[], fe: boolean) => ReturnType<typeof Fp12.mul>)(pairs, false);
const G2 = bn254.G2.Point;
type G1P = InstanceType<typeof G1>;
type G2P = InstanceType<typeof G2>;
type Fp2T = ReturnType<typeof Fp2.fromBigTuple>;

const invalid = (msg: string) => new CharmsError('PROOF_INVALID', `invalid Groth16 proof: ${msg}`);

const be = (b: Uint8Array): bigint => {
  let v = 0n;
  for (const x of b) v = (v << 8n) | BigInt(x);
  return v;
};

function fp(b: Uint8Array, what: string): bigint {
  const v = be(b);
  if (v >= Fp.ORDER) throw invalid(`${what}: coordinate not below the field modulus`);
  return v;
}

const half = (Fp.ORDER - 1n) / 2n;
const fp2Largest = (y: Fp2T): boolean => (y.c1 !== 0n ? y.c1 > half : y.c0 > half);

// ---------------------------------------------------------------- gnark compressed (verifying keys)

const B_G1 = 3n;
const B_G2 = Fp2.div(Fp2.fromBigTuple([3n, 0n]), Fp2.fromBigTuple([9n, 1n]));

function g1Compressed(b: Uint8Array): G1P {
  const flag = b[0]! >> 6;
  if (flag === 0b01) return G1.ZERO;
  if (flag !== 0b10 && flag !== 0b11) throw invalid('bad G1 compression flag');
  const xb = Uint8Array.from(b);
  xb[0]! &= 0x3f;
  const x = fp(xb, 'G1.x');
  let y = Fp.sqrt(Fp.add(Fp.pow(x, 3n), B_G1));
  if ((y > half) !== (flag === 0b11)) y = Fp.neg(y);
  const p = G1.fromAffine({ x, y });
  p.assertValidity();
  return p;
}

function g2Compressed(b: Uint8Array): G2P {
  const flag = b[0]! >> 6;
  if (flag === 0b01) return G2.ZERO;
  if (flag !== 0b10 && flag !== 0b11) throw invalid('bad G2 compression flag');
  const a1b = Uint8Array.from(b.subarray(0, 32));
  a1b[0]! &= 0x3f;
  const x = Fp2.fromBigTuple([fp(b.subarray(32, 64), 'G2.x.A0'), fp(a1b, 'G2.x.A1')]);
  let y = Fp2.sqrt(Fp2.add(Fp2.pow(x, 3n), B_G2));
  if (fp2Largest(y) !== (flag === 0b11)) y = Fp2.neg(y);
  const p = G2.fromAffine({ x, y });
  p.assertValidity();
  return p;
}

export interface GnarkVerifyingKey {
  alpha: G1P;
  beta: G2P;
  gamma: G2P;
  delta: G2P;
  k: G1P[];
  /** Cached for speed: line coefficients of −γ, −δ and the Miller loop of e(α, β). */
  prepared: { gammaNeg: unknown; deltaNeg: unknown; alphaBeta: unknown };
  /** k[i]·s for inputs that repeat across proofs (spell vk, vk root), keyed `i:s`. */
  products: Map<string, G1P>;
}

/** Parses a gnark Groth16 verifying key as SP1 reads it. */
export function parseGnarkVk(b: Uint8Array): GnarkVerifyingKey {
  if (b.length < 292) throw invalid('verifying key too short');
  const alpha = g1Compressed(b.subarray(0, 32));
  const beta = g2Compressed(b.subarray(64, 128));
  const gamma = g2Compressed(b.subarray(128, 192));
  const delta = g2Compressed(b.subarray(224, 288));
  const n = new DataView(b.buffer, b.byteOffset).getUint32(288, false);
  if (b.length < 292 + 32 * n) throw invalid('verifying key truncated');
  const k: G1P[] = [];
  for (let i = 0; i < n; i++) k.push(g1Compressed(b.subarray(292 + 32 * i, 324 + 32 * i)));
  const pre = bn254.utils.calcPairingPrecomputes;
  const a = alpha.toAffine();
  const alphaBeta = millerLoop([[pre(beta), a.x, a.y]]);
  for (const p of k) p.precompute(8); // window tables: faster scalar multiplication
  return { alpha, beta, gamma, delta, k, prepared: { gammaNeg: pre(gamma.negate()), deltaNeg: pre(delta.negate()), alphaBeta }, products: new Map() };
}

// ---------------------------------------------------------------- gnark uncompressed (proofs)

function g1Uncompressed(b: Uint8Array, what: string): G1P {
  const x = fp(b.subarray(0, 32), `${what}.x`);
  const y = fp(b.subarray(32, 64), `${what}.y`);
  if (x === 0n && y === 0n) throw invalid(`${what} is the point at infinity`);
  try {
    const p = G1.fromAffine({ x, y });
    p.assertValidity();
    return p;
  } catch {
    throw invalid(`${what} is not on the curve`);
  }
}

function g2Uncompressed(b: Uint8Array, what: string): G2P {
  const x = Fp2.fromBigTuple([fp(b.subarray(32, 64), `${what}.x.A0`), fp(b.subarray(0, 32), `${what}.x.A1`)]);
  const y = Fp2.fromBigTuple([fp(b.subarray(96, 128), `${what}.y.A0`), fp(b.subarray(64, 96), `${what}.y.A1`)]);
  if (Fp2.is0(x) && Fp2.is0(y)) throw invalid(`${what} is the point at infinity`);
  try {
    const p = G2.fromAffine({ x, y });
    p.assertValidity(); // on curve and in the prime-order subgroup
    return p;
  } catch {
    throw invalid(`${what} is not a valid G2 point (off the curve or outside the subgroup)`);
  }
}

/**
 * Verifies a 256-byte gnark proof (A ‖ B ‖ C, uncompressed) for the given public inputs
 * (big-endian 32-byte values, reduced mod r as substrate-bn's `Fr::from_slice` does).
 */
export function verifyGnarkProof(vk: GnarkVerifyingKey, proof: Uint8Array, inputs: Uint8Array[]): boolean {
  if (proof.length !== 256) throw invalid(`expected 256 proof bytes, got ${proof.length}`);
  if (inputs.length + 1 !== vk.k.length) throw invalid(`expected ${vk.k.length - 1} public inputs, got ${inputs.length}`);
  const A = g1Uncompressed(proof.subarray(0, 64), 'A');
  const B = g2Uncompressed(proof.subarray(64, 192), 'B');
  const C = g1Uncompressed(proof.subarray(192, 256), 'C');
  let L = vk.k[0]!;
  inputs.forEach((input, i) => {
    const s = Fr.create(be(input));
    if (s === 0n) return;
    const key = `${i}:${s}`;
    let prod = vk.products.get(key);
    if (!prod) {
      prod = vk.k[i + 1]!.multiplyUnsafe(s);
      // inputs 0 and 3 are per-version constants (spell vk, vk root); digests and nonces vary
      if ((i === 0 || i === 3) && vk.products.size < 64) vk.products.set(key, prod);
    }
    L = L.add(prod);
  });
  // e(A,B) == e(α,β)·e(L,γ)·e(C,δ)  ⇔  e(A,B)·e(L,−γ)·e(C,−δ) / e(α,β) == 1
  const pre = bn254.utils.calcPairingPrecomputes;
  const pairs: [unknown, bigint, bigint][] = [];
  const add = (p: G1P, q: unknown) => {
    if (p.is0()) return; // contributes 1
    const a = p.toAffine();
    pairs.push([q, a.x, a.y]);
  };
  add(A, pre(B));
  add(L, vk.prepared.gammaNeg);
  add(C, vk.prepared.deltaNeg);
  const ml = millerLoop(pairs);
  const f = Fp12.finalExponentiate(Fp12.mul(ml, Fp12.inv(vk.prepared.alphaBeta as never)));
  return Fp12.eql(f, Fp12.ONE);
}
