/**
 * BN254 backend on mcl-wasm (BSD-3-Clause; WebAssembly embedded in the package, no Node APIs),
 * about 3× faster than the pure-JS one. mcl keeps one curve per module instance: this backend
 * initialises it as BN_SNARK1 (Ethereum's alt_bn128 = SP1's BN254), so nothing else in the same
 * program may initialise the `mcl-wasm` module with another curve.
 */
import type * as Mcl from 'mcl-wasm';
import { CharmsError } from '../errors.js';
import { claimSharedMcl } from './mcl-owner.js';
import { mclG2Membership } from './bn254-mcl-g2.js';
import { batchCoefficients, ProductCache, type Bn254Backend, type PreparedKey, type PreparedProof } from './bn254.js';
import { BN254_R, invalidProof, type G1Affine, type G2Affine, type GnarkProof, type GnarkVerifyingKey } from './gnark.js';

/** The mcl-wasm module object (its namespace `Mcl` names the point types). */
type McLib = typeof Mcl;

interface MclKey extends PreparedKey {
  k: (Mcl.G1 | null)[];
  gammaNeg: Mcl.PrecomputedG2;
  deltaNeg: Mcl.PrecomputedG2;
  alphaBeta: Mcl.GT;
  products: ProductCache<Mcl.G1>;
}

/**
 * A checked proof. L = K[0] + Σ sᵢ·K[i+1] is computed only for a check on its own: a batch needs
 * Σ ρⱼ·Lⱼ alone, which it takes as one small multi-scalar multiplication over the K points with
 * the scalars Σⱼ ρⱼ·sⱼᵢ summed as integers (no per-proof multiplication at all).
 */
interface MclProof extends PreparedProof {
  A: Mcl.G1;
  B: Mcl.G2;
  C: Mcl.G1;
  inputs: readonly bigint[];
  repeating: readonly number[];
  L?: Mcl.G1;
}

let loading: Promise<Bn254Backend> | undefined;

/** Loads and initialises mcl-wasm once (≈60–100 ms); later calls return the same backend. */
export function loadMclBackend(): Promise<Bn254Backend> {
  loading ??= (async () => {
    if (!claimSharedMcl('bn254')) throw new CharmsError('UNSUPPORTED', 'the mcl-wasm instance of this process already serves BLS12-381 mock proofs');
    const ns = (await import('mcl-wasm')) as McLib & { default?: McLib };
    const mcl = ns.default ?? ns; // CommonJS package: Node puts module.exports on `default`
    await mcl.init(mcl.BN_SNARK1);
    // parsing checks the curve equation; the G2 subgroup check is done once, explicitly, below
    mcl.verifyOrderG2(false);
    return makeBackend(mcl);
  })();
  loading.catch(() => (loading = undefined)); // allow a retry after a failed load
  return loading;
}

function makeBackend(mcl: McLib): Bn254Backend {
  const hex = (v: bigint) => v.toString(16);
  // the endomorphism test (bn254-mcl-g2.ts), about 3× faster than mcl's multiplication by r;
  // mcl's own test if this mcl-wasm build lacks the raw exports it needs
  const membership = mclG2Membership(mcl);
  const inG2 = membership ? (q: Mcl.G2) => membership.inG2(q) : (q: Mcl.G2) => q.isValidOrder();
  /** mcl parses "1 x y" (affine) and rejects points off the curve. */
  const g1 = (p: G1Affine, what: string): Mcl.G1 => {
    const q = new mcl.G1();
    try {
      q.setStr(`1 ${hex(p.x)} ${hex(p.y)}`, 16);
    } catch (e) {
      throw invalidProof(`${what} is not on the curve`, e);
    }
    if (!q.isValid()) throw invalidProof(`${what} is not on the curve`);
    return q;
  };
  const g2 = (p: G2Affine, what: string): Mcl.G2 => {
    const q = new mcl.G2();
    try {
      q.setStr(`1 ${hex(p.x.c0)} ${hex(p.x.c1)} ${hex(p.y.c0)} ${hex(p.y.c1)}`, 16);
    } catch (e) {
      throw invalidProof(`${what} is not a valid G2 point (off the curve or outside the subgroup)`, e);
    }
    if (!q.isValid() || !inG2(q))
      // on the twist and in the prime-order subgroup
      throw invalidProof(`${what} is not a valid G2 point (off the curve or outside the subgroup)`);
    return q;
  };
  const fr = (v: bigint): Mcl.Fr => {
    const s = new mcl.Fr();
    s.setStr(hex(v), 16);
    return s;
  };

  const backend: Bn254Backend = {
    name: 'mcl-wasm',
    prepareKey(vk: GnarkVerifyingKey): PreparedKey {
      const key: MclKey = {
        backend: 'mcl-wasm',
        inputCount: vk.k.length - 1,
        k: vk.k.map((p, i) => (p ? g1(p, `K[${i}]`) : null)),
        gammaNeg: new mcl.PrecomputedG2(mcl.neg(g2(vk.gamma, 'gamma'))),
        deltaNeg: new mcl.PrecomputedG2(mcl.neg(g2(vk.delta, 'delta'))),
        alphaBeta: mcl.pairing(g1(vk.alpha, 'alpha'), g2(vk.beta, 'beta')),
        products: new ProductCache(),
      };
      return key;
    },
    verify(key: PreparedKey, proof: GnarkProof, inputs: readonly bigint[], repeating: readonly number[] = []): boolean {
      return check(key, prepareProof(key, proof, inputs, repeating));
    },
    prepareProof,
    check,
    checkBatch(prepared: PreparedKey, proofs: readonly PreparedProof[]): boolean {
      const key = prepared as MclKey;
      const ps = proofs as readonly MclProof[];
      const rho = batchCoefficients(ps.length);
      const r = rho.map(fr);
      const ml = millerLoopVec(
        ps.map((p, i) => mcl.mul(p.A, r[i]!)),
        ps.map((p) => p.B),
      );
      // Σ ρⱼ·Lⱼ = (Σ ρⱼ)·K[0] + Σᵢ (Σⱼ ρⱼ·sⱼᵢ)·K[i+1]
      const sums: bigint[] = [];
      ps.forEach((p, j) => p.inputs.forEach((s, i) => (sums[i] = (sums[i] ?? 0n) + rho[j]! * s)));
      const L = combination(key, rho.reduce((a, b) => a + b, 0n) % BN254_R, sums);
      const C = mcl.mulVec(
        ps.map((p) => p.C),
        r,
      );
      const rest = mcl.precomputedMillerLoop2(L, key.gammaNeg, C, key.deltaNeg);
      const sum = fr(rho.reduce((a, b) => a + b, 0n) % BN254_R);
      return mcl.finalExp(mcl.mul(ml, rest)).isEqual(mcl.pow(key.alphaBeta, sum));
    },
  };
  return backend;

  /**
   * Πᵢ millerLoop(Pᵢ, Qᵢ) for n ≥ 1 pairs. mcl's multi-Miller loop shares the squarings (about
   * 25% faster at n = 64) but the package does not wrap it: it is called on the module's heap
   * with the points' internal words. If that shape is missing (another mcl-wasm version), the
   * loops are multiplied one by one.
   */
  function millerLoopVec(P: Mcl.G1[], Q: Mcl.G2[]): Mcl.GT {
    const words = (x: unknown): Uint32Array | undefined => {
      const a = (x as { a_?: unknown }).a_;
      return a instanceof Uint32Array ? a : undefined;
    };
    const out = new mcl.GT();
    const raw = ((mcl as unknown as { mod?: object }).mod ?? {}) as {
      _malloc?: (n: number) => number;
      _free?: (p: number) => void;
      _mclBn_millerLoopVec?: (f: number, x: number, y: number, n: number) => void;
      HEAP32?: Int32Array;
    };
    const w1 = words(P[0]);
    const w2 = words(Q[0]);
    const wt = words(out);
    if (!w1 || !w2 || !wt || !raw._malloc || !raw._free || !raw._mclBn_millerLoopVec) {
      let ml = mcl.millerLoop(P[0]!, Q[0]!);
      for (let i = 1; i < P.length; i++) ml = mcl.mul(ml, mcl.millerLoop(P[i]!, Q[i]!));
      return ml;
    }
    const n = P.length;
    const s1 = w1.length * 4;
    const s2 = w2.length * 4;
    const pos = raw._malloc(n * (s1 + s2) + wt.length * 4);
    try {
      P.forEach((p, i) => raw.HEAP32!.set(words(p)!, (pos + i * s1) >> 2));
      Q.forEach((q, i) => raw.HEAP32!.set(words(q)!, (pos + n * s1 + i * s2) >> 2));
      const at = pos + n * (s1 + s2);
      raw._mclBn_millerLoopVec(at, pos, pos + n * s1, n);
      wt.set(raw.HEAP32!.subarray(at >> 2, (at >> 2) + wt.length)); // HEAP32 read after the call: memory may have grown
    } finally {
      raw._free(pos);
    }
    return out;
  }

  function prepareProof(_key: PreparedKey, proof: GnarkProof, inputs: readonly bigint[], repeating: readonly number[] = []): PreparedProof {
    const A = g1(proof.a, 'A');
    const B = g2(proof.b, 'B');
    const C = g1(proof.c, 'C');
    const p: MclProof = { backend: 'mcl-wasm', A, B, C, inputs, repeating };
    return p;
  }

  /** c₀·K[0] + Σ cᵢ·K[i+1] (scalars reduced here), one multi-scalar multiplication. */
  function combination(key: MclKey, c0: bigint, cs: readonly bigint[]): Mcl.G1 {
    const points: Mcl.G1[] = [];
    const scalars: Mcl.Fr[] = [];
    const k0 = key.k[0];
    if (k0 && c0 !== 0n) {
      points.push(k0);
      scalars.push(fr(c0));
    }
    cs.forEach((c, i) => {
      const k = key.k[i + 1];
      const s = c % BN254_R;
      if (s === 0n || !k) return;
      points.push(k);
      scalars.push(fr(s));
    });
    if (points.length === 0) return new mcl.G1(); // a fresh G1 is the point at infinity
    return points.length === 1 ? mcl.mul(points[0]!, scalars[0]!) : mcl.mulVec(points, scalars);
  }

  /** L = K[0] + Σ sᵢ·K[i+1] of one proof: cached products for repeating inputs, one multi-scalar multiplication for the others. */
  function lOf(key: MclKey, p: MclProof): Mcl.G1 {
    if (p.L) return p.L;
    const terms: Mcl.G1[] = key.k[0] ? [key.k[0]] : [];
    const others = p.inputs.map((s, i) => {
      const k = key.k[i + 1];
      if (s === 0n || !k || !p.repeating.includes(i)) return s;
      terms.push(key.products.get(i, s, () => mcl.mul(k, fr(s)), true));
      return 0n;
    });
    if (others.some((s) => s !== 0n)) terms.push(combination(key, 0n, others));
    let L = terms[0] ?? new mcl.G1();
    for (const t of terms.slice(1)) L = mcl.add(L, t);
    p.L = L;
    return L;
  }

  function check(prepared: PreparedKey, proof: PreparedProof): boolean {
    const key = prepared as MclKey;
    const p = proof as MclProof;
    const { A, B, C } = p;
    const L = lOf(key, p);
    // e(A,B)·e(L,−γ)·e(C,−δ) == e(α,β) after one final exponentiation; mcl's Miller loop
    // gives 1 for the point at infinity, so an infinite L needs no special case.
    const ml = mcl.mul(mcl.millerLoop(A, B), mcl.precomputedMillerLoop2(L, key.gammaNeg, C, key.deltaNeg));
    return mcl.finalExp(ml).isEqual(key.alphaBeta);
  }
}
