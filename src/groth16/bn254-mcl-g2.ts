/**
 * A fast G2 subgroup test for BN254 on mcl-wasm's raw exports. mcl's `isValidOrder` multiplies by
 * r (a generic 254-bit scalar multiplication: mcl has an endomorphism test for BLS12 curves only),
 * about a quarter of a spell verification's CPU. This module tests membership with the
 * endomorphism ψ (untwist–Frobenius–twist) instead (Dai, Lin, Zhao, Zhou, "Fast subgroup
 * membership testings for G1, G2 and GT on pairing-friendly curves", eprint 2022/348, § 5.1):
 *
 *     P ∈ G2  ⇔  [x₀+1]P + ψ([x₀]P) + ψ²([x₀]P) = ψ³([2x₀]P)        (x₀ = 4965661367192848881)
 *
 * one 63-bit scalar multiplication instead of a 254-bit one. Why it is exact here: on G2, ψ acts
 * as multiplication by p ≡ 6x₀² (mod r), and (x₀+1) + x₀·p + x₀·p² − 2x₀·p³ ≡ 0 (mod r), so every
 * point of G2 passes. The twist's group E'(Fp2) has order r·h with h = 2p − r =
 * 10069 · 5864401 · 1875725156269 · 197620364512881247228717050342013327560683201906968909
 * (squarefree, prime to r), so it is cyclic and its only subgroups of prime order ℓ | h are cyclic:
 * the points that pass form a subgroup, which is G2 exactly unless it holds a point of some order
 * ℓ | h, and for each of the four ℓ the test of one point of order ℓ settles that
 * (bn254-mcl-g2.test.ts rejects one of each order, so the test accepts G2 and nothing else).
 *
 * The scalar multiplication is a plain NAF double-and-add over mcl's `dbl`/`add` (not `mcl.mul`,
 * whose GLV decomposition is only valid inside G2). Points live in scratch slots on the module's
 * heap, in mcl's internal form (Jacobian coordinates, Montgomery Fp); ψ maps (X, Y, Z) to
 * (X̄·g₂, Ȳ·g₃, Z̄) with ḡ the Fp2 conjugate, g₂ = ξ^((p−1)/3), g₃ = ξ^((p−1)/2), ξ = 9 + u.
 */
import { bn254 } from '@noble/curves/bn254.js';
import type * as Mcl from 'mcl-wasm';

type McLib = typeof Mcl;

/** The raw exports this test calls (emscripten's module object, `mcl.mod`). */
interface RawMcl {
  _malloc(n: number): number;
  _mclBnG2_dbl(z: number, x: number): void;
  _mclBnG2_add(z: number, x: number, y: number): void;
  _mclBnG2_neg(z: number, x: number): void;
  _mclBnG2_isEqual(x: number, y: number): number;
  _mclBnG2_clear(x: number): void;
  _mclBnFp2_mul(z: number, x: number, y: number): void;
  _mclBnFp_neg(z: number, x: number): void;
  /** Views of the module's memory (getters: a new view after the memory grows). */
  HEAP32: Int32Array;
  HEAP8: Int8Array;
}

const RAW_NAMES = ['_malloc', '_mclBnG2_dbl', '_mclBnG2_add', '_mclBnG2_neg', '_mclBnG2_isEqual', '_mclBnG2_clear', '_mclBnFp2_mul', '_mclBnFp_neg'] as const;

/** BN254's curve parameter x₀ (p and r are polynomials in it). */
export const BN254_X0 = 4965661367192848881n;

export interface G2Membership {
  /** True iff `q` (a point on the twist: check `isValid()` first) is in the prime-order subgroup G2. */
  inG2(q: Mcl.G2): boolean;
  /** [k]q for any k ≥ 0 by double-and-add, valid for every point on the twist (tests build torsion points with it). */
  mulGeneric(q: Mcl.G2, k: bigint): Mcl.G2;
  /** ψ(q). */
  psi(q: Mcl.G2): Mcl.G2;
}

/** Non-adjacent form of k > 0, most significant digit first. */
function naf(k: bigint): Int8Array {
  const digits: number[] = [];
  while (k > 0n) {
    let d = 0;
    if (k & 1n) {
      d = 2 - Number(k & 3n); // ±1
      k -= BigInt(d);
    }
    digits.push(d);
    k >>= 1n;
  }
  return Int8Array.from(digits.reverse());
}

/** The G2 test on this mcl module, or undefined if the module lacks the raw exports (another mcl-wasm build). */
export function mclG2Membership(mcl: McLib): G2Membership | undefined {
  const raw = (mcl as unknown as { mod?: Partial<RawMcl> }).mod;
  if (!raw || RAW_NAMES.some((n) => typeof raw[n] !== 'function')) return undefined;
  const m = raw as RawMcl;
  const words = (x: unknown): Uint32Array | undefined => {
    const a = (x as { a_?: unknown }).a_;
    return a instanceof Uint32Array ? a : undefined;
  };
  const g2Words = words(new mcl.G2())?.length ?? 0;
  const fp2Words = words(new mcl.Fp2())?.length ?? 0;
  if (g2Words === 0 || g2Words !== 3 * fp2Words || fp2Words % 2 !== 0) return undefined;
  const G = g2Words * 4; // bytes of a point: x, y, z in Fp2
  const F2 = fp2Words * 4;
  const F = F2 / 2; // an Fp2 is (a, b) = a + b·u

  // ψ's constants as mcl Fp2 values (their internal form is copied to the heap below)
  const { Fp2 } = bn254.fields;
  const p = bn254.fields.Fp.ORDER;
  const xi = Fp2.create({ c0: 9n, c1: 1n });
  const constant = (e: bigint): Uint32Array => {
    const v = Fp2.pow(xi, e);
    const c = new mcl.Fp2();
    c.setStr(`${v.c0.toString(16)} ${v.c1.toString(16)}`, 16);
    return words(c)!;
  };
  const g2c = constant((p - 1n) / 3n);
  const g3c = constant((p - 1n) / 2n);

  // scratch: the input P, −P, two accumulators, [x₀]P, and ψ work slots, then the constants
  const SLOTS = 8;
  const base = m._malloc(SLOTS * G + 3 * F2);
  const slot = (i: number) => base + i * G;
  const [sP, sNegP, sAcc0, sAcc1, sA, sT0, sT1, sT2] = Array.from({ length: SLOTS }, (_, i) => slot(i)) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const cG2 = base + SLOTS * G;
  const cG3 = cG2 + F2;
  const tmpF2 = cG3 + F2;
  m.HEAP32.set(g2c, cG2 >> 2);
  m.HEAP32.set(g3c, cG3 >> 2);
  const X0_NAF = naf(BN254_X0);

  const load = (at: number, q: Mcl.G2) => m.HEAP32.set(words(q)!, at >> 2); // HEAP read at each use: memory may grow
  const read = (at: number): Mcl.G2 => {
    const q = new mcl.G2();
    words(q)!.set(m.HEAP32.subarray(at >> 2, (at >> 2) + g2Words));
    return q;
  };

  /** dst = conjugate(src) · c for Fp2 values (dst ≠ src). */
  const conjMul = (dst: number, src: number, c: number) => {
    m.HEAP8.copyWithin(tmpF2, src, src + F);
    m._mclBnFp_neg(tmpF2 + F, src + F);
    m._mclBnFp2_mul(dst, tmpF2, c);
  };
  /** dst = ψ(src), dst ≠ src. */
  const psiAt = (dst: number, src: number) => {
    conjMul(dst, src, cG2);
    conjMul(dst + F2, src + F2, cG3);
    m.HEAP8.copyWithin(dst + 2 * F2, src + 2 * F2, src + 2 * F2 + F);
    m._mclBnFp_neg(dst + 2 * F2 + F, src + 2 * F2 + F);
  };
  /** [digits]P into a fresh slot (P and −P loaded); returns the slot holding the result. No call aliases its output with an input. */
  const mulNaf = (digits: Int8Array): number => {
    let acc = sAcc0;
    let other = sAcc1;
    m._mclBnG2_clear(acc);
    for (const d of digits) {
      m._mclBnG2_dbl(other, acc);
      [acc, other] = [other, acc];
      if (d !== 0) {
        m._mclBnG2_add(other, acc, d > 0 ? sP : sNegP);
        [acc, other] = [other, acc];
      }
    }
    return acc;
  };
  const loadP = (q: Mcl.G2) => {
    load(sP, q);
    m._mclBnG2_neg(sNegP, sP);
  };

  return {
    inG2(q) {
      loadP(q);
      const a = mulNaf(X0_NAF);
      m.HEAP8.copyWithin(sA, a, a + G); // a = [x₀]P
      // lhs = [x₀+1]P + ψ(a) + ψ²(a)
      m._mclBnG2_add(sT0, sA, sP);
      psiAt(sT1, sA);
      m._mclBnG2_add(sT2, sT0, sT1); // T2 = [x₀+1]P + ψ(a)
      psiAt(sT0, sT1); // T0 = ψ²(a)
      m._mclBnG2_add(sT1, sT2, sT0); // T1 = lhs
      // rhs = ψ³([2]a)
      m._mclBnG2_dbl(sT0, sA);
      psiAt(sT2, sT0);
      psiAt(sT0, sT2);
      psiAt(sT2, sT0);
      return m._mclBnG2_isEqual(sT1, sT2) === 1;
    },
    mulGeneric(q, k) {
      if (k < 0n) throw new RangeError('mulGeneric takes k >= 0');
      loadP(q);
      return k === 0n ? new mcl.G2() : read(mulNaf(naf(k)));
    },
    psi(q) {
      load(sP, q);
      psiAt(sT0, sP);
      return read(sT0);
    },
  };
}
