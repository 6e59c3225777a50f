/**
 * SP1 / gnark Groth16 verification over BN254 behind a small backend interface, and the pure-JS
 * backend (@noble/curves). The faster WASM backend lives in `bn254-mcl.ts`; both reject the same
 * points: A and C must be on the curve, B on the twist and in the prime-order G2 subgroup (as
 * substrate-bn checks). Browser-safe.
 *
 * The check is e(A,B) = e(α,β)·e(L,γ)·e(C,δ) with L = K[0] + Σ inputᵢ·K[i+1], evaluated as one
 * multi-Miller loop of (A,B), (L,−γ), (C,−δ), divided by the cached Miller loop of (α,β), and
 * a single final exponentiation.
 *
 * Batches of proofs for one key are checked with one random linear combination (random 128-bit
 * ρᵢ): Πᵢ e(ρᵢ·Aᵢ, Bᵢ) · e(Σρᵢ·Lᵢ, −γ) · e(Σρᵢ·Cᵢ, −δ) = e(α,β)^Σρᵢ, i.e. N + 2 Miller loops and
 * one final exponentiation for N proofs. If any proof is false the equation fails except with
 * probability about 2⁻¹²⁸ (all points are in prime-order groups: G1 has cofactor 1, B is
 * subgroup-checked).
 */
import { bn254 } from '@noble/curves/bn254.js';
import { BN254_R, invalidProof, type G1Affine, type G2Affine, type GnarkProof, type GnarkVerifyingKey } from './gnark.js';

export interface Bn254Backend {
  readonly name: 'noble' | 'mcl-wasm';
  /** Converts a parsed verifying key and caches its per-key pairing terms. */
  prepareKey(vk: GnarkVerifyingKey): PreparedKey;
  /**
   * True iff the proof satisfies the pairing equation for `inputs` (already reduced mod r).
   * `repeating` lists the indices of inputs that recur across proofs (the spell vk, the vk root):
   * their products K[i+1]·input are cached. Throws CharmsError PROOF_INVALID for points off the
   * curve or outside the subgroup.
   */
  verify(key: PreparedKey, proof: GnarkProof, inputs: readonly bigint[], repeating?: readonly number[]): boolean;
  /**
   * The per-proof half of `verify`: checks the points (throws CharmsError PROOF_INVALID like
   * `verify`) and computes L, ready for `check` or `checkBatch`.
   */
  prepareProof(key: PreparedKey, proof: GnarkProof, inputs: readonly bigint[], repeating?: readonly number[]): PreparedProof;
  /** The pairing check of one prepared proof. */
  check(key: PreparedKey, proof: PreparedProof): boolean;
  /** True iff (with probability 1 − 2⁻¹²⁸) every prepared proof passes: one random linear combination. */
  checkBatch(key: PreparedKey, proofs: readonly PreparedProof[]): boolean;
}

/** A proof whose points passed the checks, with its L; only the backend that made it reads it. */
export interface PreparedProof {
  readonly backend: Bn254Backend['name'];
}

/** n random nonzero 128-bit coefficients for a batch check (crypto.getRandomValues: browser-safe). */
export function batchCoefficients(n: number): bigint[] {
  const words = new Uint32Array(4 * n);
  crypto.getRandomValues(words);
  return Array.from({ length: n }, (_, i) => {
    let v = 0n;
    for (let j = 0; j < 4; j++) v = (v << 32n) | BigInt(words[4 * i + j]!);
    return v | 1n; // never zero: a zero coefficient would drop that proof from the check
  });
}

/** Bounded memo of K[i+1]·s for repeating inputs, shared by both backends. */
export class ProductCache<P> {
  private readonly map = new Map<string, P>();
  constructor(private readonly limit = 64) {}
  get(index: number, scalar: bigint, compute: () => P, cache: boolean): P {
    if (!cache) return compute();
    const id = `${index}:${scalar}`;
    let p = this.map.get(id);
    if (p === undefined) {
      p = compute();
      if (this.map.size < this.limit) this.map.set(id, p);
    }
    return p;
  }
}

/** A verifying key in a backend's own representation; only that backend reads it. */
export interface PreparedKey {
  readonly backend: Bn254Backend['name'];
  readonly inputCount: number;
}

const { Fp2, Fp12 } = bn254.fields;
const G1 = bn254.G1.Point;
const G2 = bn254.G2.Point;
type G1P = InstanceType<typeof G1>;
type G2P = InstanceType<typeof G2>;
type Fp12T = ReturnType<typeof Fp12.mul>;
type LineCoefficients = ReturnType<typeof bn254.utils.calcPairingPrecomputes>;

/** Miller loop without the final exponentiation (noble's second parameter; its typings omit it). */
const millerLoop = (pairs: Pairs): Fp12T => (bn254.millerLoopBatch as unknown as (p: unknown[], finalExp: boolean) => Fp12T)(pairs, false);

type Pairs = [LineCoefficients, bigint, bigint][];

interface NobleProof extends PreparedProof {
  A: G1P;
  B: G2P;
  C: G1P;
  L: G1P;
}

/** noble's Miller loop cannot take the point at infinity; such a pair contributes 1. */
function addPair(pairs: Pairs, p: G1P, q: G2P | LineCoefficients): void {
  if (p.is0()) return;
  if (!Array.isArray(q) && (q as G2P).is0()) return;
  const a = p.toAffine();
  pairs.push([Array.isArray(q) ? q : bn254.utils.calcPairingPrecomputes(q as G2P), a.x, a.y]);
}

interface NobleKey extends PreparedKey {
  k: (G1P | null)[];
  gammaNeg: LineCoefficients;
  deltaNeg: LineCoefficients;
  alphaBetaInverse: Fp12T;
  products: ProductCache<G1P>;
}

const g1 = (p: G1Affine): G1P => G1.fromAffine(p);
const g2 = (p: G2Affine): G2P => G2.fromAffine({ x: Fp2.fromBigTuple([p.x.c0, p.x.c1]), y: Fp2.fromBigTuple([p.y.c0, p.y.c1]) });

function checkedG1(p: G1Affine, what: string): G1P {
  try {
    const q = g1(p);
    q.assertValidity();
    return q;
  } catch (e) {
    throw invalidProof(`${what} is not on the curve`, e);
  }
}

function checkedG2(p: G2Affine, what: string): G2P {
  try {
    const q = g2(p);
    q.assertValidity(); // on the twist and in the prime-order subgroup
    return q;
  } catch (e) {
    throw invalidProof(`${what} is not a valid G2 point (off the curve or outside the subgroup)`, e);
  }
}

/** Pure-JS backend: synchronous, no initialisation, roughly 3× slower than mcl-wasm. */
export const nobleBackend: Bn254Backend = {
  name: 'noble',
  prepareKey(vk: GnarkVerifyingKey): PreparedKey {
    const pre = bn254.utils.calcPairingPrecomputes;
    const alpha = g1(vk.alpha);
    // no window tables for K: building them costs more on a one-shot (CLI, browser) verification
    // than they save, and the products of repeating inputs are cached anyway
    const k = vk.k.map((p) => (p ? g1(p) : null));
    const key: NobleKey = {
      backend: 'noble',
      inputCount: vk.k.length - 1,
      k,
      gammaNeg: pre(g2(vk.gamma).negate()),
      deltaNeg: pre(g2(vk.delta).negate()),
      alphaBetaInverse: Fp12.inv(millerLoop([[pre(g2(vk.beta)), alpha.x, alpha.y]])),
      products: new ProductCache(),
    };
    return key;
  },
  verify(key: PreparedKey, proof: GnarkProof, inputs: readonly bigint[], repeating: readonly number[] = []): boolean {
    return nobleBackend.check(key, nobleBackend.prepareProof(key, proof, inputs, repeating));
  },
  prepareProof(prepared: PreparedKey, proof: GnarkProof, inputs: readonly bigint[], repeating: readonly number[] = []): PreparedProof {
    const key = prepared as NobleKey;
    const A = checkedG1(proof.a, 'A');
    const B = checkedG2(proof.b, 'B');
    const C = checkedG1(proof.c, 'C');
    let L = key.k[0] ?? G1.ZERO;
    inputs.forEach((s, i) => {
      const k = key.k[i + 1];
      // public scalars: no constant-time multiplication needed
      if (s !== 0n && k) L = L.add(key.products.get(i, s, () => k.multiplyUnsafe(s), repeating.includes(i)));
    });
    const p: NobleProof = { backend: 'noble', A, B, C, L };
    return p;
  },
  check(prepared: PreparedKey, proof: PreparedProof): boolean {
    const key = prepared as NobleKey;
    const { A, B, C, L } = proof as NobleProof;
    const pairs: Pairs = [];
    addPair(pairs, A, B);
    addPair(pairs, L, key.gammaNeg);
    addPair(pairs, C, key.deltaNeg);
    const f = Fp12.finalExponentiate(Fp12.mul(millerLoop(pairs), key.alphaBetaInverse));
    return Fp12.eql(f, Fp12.ONE);
  },
  checkBatch(prepared: PreparedKey, proofs: readonly PreparedProof[]): boolean {
    const key = prepared as NobleKey;
    const ps = proofs as readonly NobleProof[];
    const rho = batchCoefficients(ps.length);
    const pairs: Pairs = [];
    let L = G1.ZERO;
    let C = G1.ZERO;
    let sum = 0n;
    ps.forEach((p, i) => {
      const r = rho[i]!;
      if (!p.A.is0()) addPair(pairs, p.A.multiplyUnsafe(r), p.B);
      if (!p.L.is0()) L = L.add(p.L.multiplyUnsafe(r));
      if (!p.C.is0()) C = C.add(p.C.multiplyUnsafe(r));
      sum += r;
    });
    addPair(pairs, L, key.gammaNeg);
    addPair(pairs, C, key.deltaNeg);
    // e(α,β)^Σρ on the Miller-loop side: the final exponentiation is a homomorphism
    const f = Fp12.finalExponentiate(Fp12.mul(millerLoop(pairs), Fp12.pow(key.alphaBetaInverse, sum % BN254_R)));
    return Fp12.eql(f, Fp12.ONE);
  },
};
