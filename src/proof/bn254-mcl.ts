/**
 * BN254 backend on mcl-wasm (BSD-3-Clause; WebAssembly embedded in the package, no Node APIs),
 * about 3× faster than the pure-JS one. mcl keeps one curve per module instance: this backend
 * initialises it as BN_SNARK1 (Ethereum's alt_bn128 = SP1's BN254), so nothing else in the same
 * program may initialise the `mcl-wasm` module with another curve.
 */
import type * as Mcl from 'mcl-wasm';
import { ProductCache, type Bn254Backend, type PreparedKey } from './bn254.js';
import { invalidProof, type G1Affine, type G2Affine, type GnarkProof, type GnarkVerifyingKey } from './gnark.js';

type Mcl = typeof Mcl;

interface MclKey extends PreparedKey {
  k: (Mcl.G1 | null)[];
  gammaNeg: Mcl.PrecomputedG2;
  deltaNeg: Mcl.PrecomputedG2;
  alphaBeta: Mcl.GT;
  products: ProductCache<Mcl.G1>;
}

let loading: Promise<Bn254Backend> | undefined;

/** Loads and initialises mcl-wasm once (≈60–100 ms); later calls return the same backend. */
export function loadMclBackend(): Promise<Bn254Backend> {
  loading ??= (async () => {
    const ns = (await import('mcl-wasm')) as Mcl & { default?: Mcl };
    const mcl = ns.default ?? ns; // CommonJS package: Node puts module.exports on `default`
    await mcl.init(mcl.BN_SNARK1);
    // parsing checks the curve equation; the G2 subgroup check is done once, explicitly, below
    mcl.verifyOrderG2(false);
    return makeBackend(mcl);
  })();
  loading.catch(() => (loading = undefined)); // allow a retry after a failed load
  return loading;
}

function makeBackend(mcl: Mcl): Bn254Backend {
  const hex = (v: bigint) => v.toString(16);
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
    if (!q.isValid() || !q.isValidOrder()) // on the twist and in the prime-order subgroup
      throw invalidProof(`${what} is not a valid G2 point (off the curve or outside the subgroup)`);
    return q;
  };
  const fr = (v: bigint): Mcl.Fr => {
    const s = new mcl.Fr();
    s.setStr(hex(v), 16);
    return s;
  };

  return {
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
    verify(prepared: PreparedKey, proof: GnarkProof, inputs: readonly bigint[], repeating: readonly number[] = []): boolean {
      const key = prepared as MclKey;
      const A = g1(proof.a, 'A');
      const B = g2(proof.b, 'B');
      const C = g1(proof.c, 'C');
      // L = K[0] + Σ sᵢ·K[i+1]: cached products for repeating inputs, one multi-scalar
      // multiplication for the others
      const terms: Mcl.G1[] = key.k[0] ? [key.k[0]] : [];
      const points: Mcl.G1[] = [];
      const scalars: Mcl.Fr[] = [];
      inputs.forEach((s, i) => {
        const k = key.k[i + 1];
        if (s === 0n || !k) return;
        if (repeating.includes(i)) terms.push(key.products.get(i, s, () => mcl.mul(k, fr(s)), true));
        else {
          points.push(k);
          scalars.push(fr(s));
        }
      });
      if (points.length > 0) terms.push(points.length === 1 ? mcl.mul(points[0]!, scalars[0]!) : mcl.mulVec(points, scalars));
      let L = terms[0] ?? new mcl.G1(); // a fresh G1 is the point at infinity
      for (const t of terms.slice(1)) L = mcl.add(L, t);
      // e(A,B)·e(L,−γ)·e(C,−δ) == e(α,β) after one final exponentiation; mcl's Miller loop
      // gives 1 for the point at infinity, so an infinite L needs no special case.
      const ml = mcl.mul(mcl.millerLoop(A, B), mcl.precomputedMillerLoop2(L, key.gammaNeg, C, key.deltaNeg));
      return mcl.finalExp(ml).isEqual(key.alphaBeta);
    },
  };
}
