/**
 * Mock proofs on mcl-wasm (BLS12-381): the same proofs and verdicts as the pure-JS code in
 * `mock.ts`, several times faster; Node services select it with `loadMclMockCurve` +
 * `useMockCurve`. mcl keeps one curve per module instance and the BN254 verifier already owns
 * the package's instance, so this loads a second, private instance of the package (Node's
 * module cache is bypassed for it and restored afterwards). Node only.
 */
import { createRequire } from 'node:module';
import type * as Mcl from 'mcl-wasm';
import { claimSharedMcl } from './mcl-owner.js';
import { CharmsError } from '../errors.js';
import { ArkReader, MOCK_PROOF_BYTES, mockQuotient, readMockPk, type MockCurve, type PointCodec } from './mock.js';

/** The mcl-wasm module object (its namespace `Mcl` names the point types). */
type McLib = typeof Mcl;

/** A fresh copy of the mcl-wasm package (its own WebAssembly instance), leaving the shared one alone. */
async function freshMclPackage(): Promise<McLib> {
  // Import the shared instance first: once ESM has it, later `import('mcl-wasm')` (the BN254
  // backend) keep getting it. Without this, an ESM import after the cache juggling below would
  // see a half-loaded copy of the package.
  await import('mcl-wasm');
  const require = createRequire(import.meta.url);
  const entry = require.resolve('mcl-wasm');
  const dir = entry.slice(0, entry.lastIndexOf('/') + 1);
  const ours = () => Object.keys(require.cache).filter((k) => k.startsWith(dir));
  const saved = ours().map((k) => [k, require.cache[k]] as const);
  for (const [k] of saved) delete require.cache[k];
  try {
    return require('mcl-wasm') as McLib;
  } finally {
    for (const k of ours()) delete require.cache[k];
    for (const [k, m] of saved) require.cache[k] = m;
  }
}

let loading: Promise<MockCurve> | undefined;

const sharedMclPackage = (ns: McLib & { default?: McLib }): McLib => ns.default ?? ns; // CommonJS: module.exports on `default`

/**
 * Loads and initialises the BLS12-381 instance once (≈50–100 ms), and decodes the mock keys.
 * `shareInstance`: a process that never verifies real proofs with mcl (one-shot mock commands)
 * may use the package's shared instance, saving a second load of the package; the BN254
 * verifier then stays on pure JS in that process.
 */
export function loadMclMockCurve(opts: { shareInstance?: boolean } = {}): Promise<MockCurve> {
  loading ??= (async () => {
    const mcl =
      opts.shareInstance && claimSharedMcl('bls12-381') ? sharedMclPackage((await import('mcl-wasm')) as McLib & { default?: McLib }) : await freshMclPackage();
    await mcl.init(mcl.BLS12_381);
    mcl.setETHserialization(true); // ZCash compressed points, as arkworks writes them
    mcl.verifyOrderG1(true); // deserialize checks the subgroup, as ark's validating decoder
    mcl.verifyOrderG2(true);
    return makeCurve(mcl);
  })();
  loading.catch(() => (loading = undefined));
  return loading;
}

function makeCurve(mcl: McLib): MockCurve {
  const codec: PointCodec<Mcl.G1, Mcl.G2> = {
    g1(b) {
      const p = new mcl.G1();
      p.deserialize(b);
      return p;
    },
    g2(b) {
      const p = new mcl.G2();
      p.deserialize(b);
      return p;
    },
  };
  const fr = (v: bigint): Mcl.Fr => {
    const f = new mcl.Fr();
    f.setStr(v.toString(16), 16);
    return f;
  };
  // The keys are the protocol's constants embedded in this package: decoded without the subgroup
  // checks (a third of this set-up); mock-mcl.test.ts decodes them with the checks on. Proofs are
  // always decoded with them.
  mcl.verifyOrderG1(false);
  mcl.verifyOrderG2(false);
  const pk = readMockPk(codec); // its first part is the verifying key (mock-mcl.test.ts checks the two agree)
  const vk = pk.vk;
  if (vk.gammaAbc.length !== 2) throw new CharmsError('INTERNAL', 'mock verifying key must have exactly one public input');
  mcl.verifyOrderG1(true);
  mcl.verifyOrderG2(true);
  const gammaNeg = new mcl.PrecomputedG2(mcl.neg(vk.gamma));
  const deltaNeg = new mcl.PrecomputedG2(mcl.neg(vk.delta));
  const alphaBeta = mcl.pairing(vk.alpha, vk.beta);
  // the assignment is (1, x, x): the constant parts and the x-weighted sums are fixed per key
  const [a0, a1, a2] = pk.aQuery as [Mcl.G1, Mcl.G1, Mcl.G1];
  const [b0, b1, b2] = pk.bG2Query as [Mcl.G2, Mcl.G2, Mcl.G2];
  const [c0, c1, c2] = pk.bG1Query as [Mcl.G1, Mcl.G1, Mcl.G1];
  const aBase = mcl.add(vk.alpha, a0);
  const aX = mcl.add(a1, a2);
  const bBase = mcl.add(vk.beta, b0);
  const bX = mcl.add(b1, b2);
  const b1Base = mcl.add(pk.betaG1, c0);
  const b1X = mcl.add(c1, c2);
  const [h0, h1, h2] = pk.hQuery as [Mcl.G1, Mcl.G1, Mcl.G1];
  const l0 = pk.lQuery[0]!;

  return {
    name: 'mcl-wasm',
    verify(proof: Uint8Array, x: bigint): boolean {
      const r = new ArkReader(proof, 'proof', codec);
      const A = r.g1();
      const B = r.g2();
      const C = r.g1();
      const L = mcl.add(vk.gammaAbc[0]!, mcl.mul(vk.gammaAbc[1]!, fr(x)));
      // e(A,B)·e(L,−γ)·e(C,−δ) == e(α,β); the Miller loop gives 1 for the point at infinity
      const ml = mcl.mul(mcl.millerLoop(A, B), mcl.precomputedMillerLoop2(L, gammaNeg, C, deltaNeg));
      return mcl.finalExp(ml).isEqual(alphaBeta);
    },
    prove(x: bigint, r: bigint, s: bigint): Uint8Array {
      const X = fr(x);
      const R = fr(r);
      const S = fr(s);
      const A = mcl.add(aBase, mcl.mulVec([aX, pk.deltaG1], [X, R]));
      const B = mcl.add(bBase, mcl.mulVec([bX, vk.delta], [X, S]));
      const B1 = mcl.add(b1Base, mcl.mulVec([b1X, pk.deltaG1], [X, S]));
      const [q0, q1, q2] = mockQuotient(x).map(fr) as [Mcl.Fr, Mcl.Fr, Mcl.Fr];
      const C = mcl.mulVec([l0, h0, h1, h2, A, B1, pk.deltaG1], [X, q0, q1, q2, S, R, mcl.neg(mcl.mul(R, S))]);
      const out = new Uint8Array(MOCK_PROOF_BYTES);
      out.set(A.serialize(), 0);
      out.set(B.serialize(), 48);
      out.set(C.serialize(), 144);
      return out;
    },
  };
}
