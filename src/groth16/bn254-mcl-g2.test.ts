/**
 * The endomorphism G2 subgroup test (bn254-mcl-g2.ts) accepts G2 and nothing else. The twist's
 * group is cyclic of squarefree order r·h, so the points the test accepts form a subgroup that is
 * G2 exactly iff it holds no point of order ℓ for each prime ℓ | h: one point of each order settles
 * it (the module's comment has the argument). Also checked against mcl's own test (multiplication
 * by r) on random points in and out of G2, and on the B points of real proofs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bn254 } from '@noble/curves/bn254.js';
import type * as Mcl from 'mcl-wasm';
import { loadMclBackend } from './bn254-mcl.js';
import { BN254_X0, mclG2Membership, type G2Membership } from './bn254-mcl-g2.js';
import { BN254_P, BN254_R, parseGnarkProof, parseGnarkVerifyingKey } from './gnark.js';
import { GROTH16_VKS_HEX } from './constants.js';
import { fromHex } from '../util/bytes.js';
import { readSharedJson, sharedOrSkip } from '../testing/shared.js';

type McLib = typeof Mcl;

/** The prime factors of the twist's cofactor h = 2p − r. */
const H_FACTORS = [10069n, 5864401n, 1875725156269n, 197620364512881247228717050342013327560683201906968909n];
const H = 2n * BN254_P - BN254_R;

async function setup(): Promise<{ mcl: McLib; g2: G2Membership }> {
  await loadMclBackend(); // initialises the shared module as BN254 (BN_SNARK1)
  const ns = (await import('mcl-wasm')) as McLib & { default?: McLib };
  const mcl = ns.default ?? ns;
  const g2 = mclG2Membership(mcl);
  assert.ok(g2, 'this mcl-wasm build has the raw exports the fast test needs');
  return { mcl, g2 };
}

/** Miller–Rabin with fixed bases (enough to confirm the listed factors; not a general primality proof). */
function probablyPrime(n: bigint): boolean {
  const pow = (b: bigint, e: bigint) => {
    let r = 1n;
    for (b %= n; e > 0n; e >>= 1n, b = (b * b) % n) if (e & 1n) r = (r * b) % n;
    return r;
  };
  let d = n - 1n;
  let s = 0;
  while (!(d & 1n)) {
    d >>= 1n;
    s++;
  }
  return [2n, 3n, 5n, 7n, 11n, 13n, 17n, 19n, 23n, 29n, 31n, 37n].every((a) => {
    if (a % n === 0n) return true;
    let x = pow(a, d);
    if (x === 1n || x === n - 1n) return true;
    for (let i = 1; i < s; i++) if ((x = (x * x) % n) === n - 1n) return true;
    return false;
  });
}

/** Points on the twist y² = x³ + 3/(9+u) with x = (seed, seed·7919 + 1), most of them outside G2. */
function twistPoints(mcl: McLib, count: number, seed: number): Mcl.G2[] {
  const { Fp2 } = bn254.fields;
  const b = Fp2.div(Fp2.fromBigTuple([3n, 0n]), Fp2.fromBigTuple([9n, 1n]));
  const out: Mcl.G2[] = [];
  for (let i = BigInt(seed); out.length < count; i++) {
    const x = Fp2.fromBigTuple([i, i * 7919n + 1n]);
    let y;
    try {
      y = Fp2.sqrt(Fp2.add(Fp2.pow(x, 3n), b));
    } catch {
      continue; // not a square: no point with this x
    }
    const q = new mcl.G2();
    q.setStr(`1 ${x.c0.toString(16)} ${x.c1.toString(16)} ${y.c0.toString(16)} ${y.c1.toString(16)}`, 16);
    assert.ok(q.isValid(), 'on the twist');
    out.push(q);
  }
  return out;
}

test('the cofactor h = 2p − r is the product of four distinct primes other than r (so the twist group is cyclic)', () => {
  assert.equal(
    H_FACTORS.reduce((a, b) => a * b, 1n),
    H,
  );
  assert.equal(new Set(H_FACTORS).size, 4);
  for (const f of H_FACTORS) {
    assert.ok(probablyPrime(f), `${f} is prime`);
    assert.notEqual(f, BN254_R);
  }
  assert.ok(probablyPrime(BN254_R));
  // the test's identity: ψ acts on G2 as p ≡ 6x₀² (mod r), and (x₀+1) + x₀λ + x₀λ² − 2x₀λ³ ≡ 0
  const lambda = (6n * BN254_X0 * BN254_X0) % BN254_R;
  assert.equal(BN254_P % BN254_R, lambda);
  const x = BN254_X0;
  assert.equal((((x + 1n + x * lambda + x * lambda * lambda - 2n * x * lambda ** 3n) % BN254_R) + BN254_R) % BN254_R, 0n);
});

test('ψ is multiplication by 6x₀² on G2, and mulGeneric agrees with mcl on G2 and has order r·h on the twist', async () => {
  const { mcl, g2 } = await setup();
  const six = new mcl.Fr();
  six.setStr((6n * BN254_X0 * BN254_X0).toString());
  for (const s of ['a', 'b', 'charms']) {
    const q = mcl.hashAndMapToG2(s);
    assert.ok(q.isValidOrder());
    assert.ok(g2.psi(q).isEqual(mcl.mul(q, six)), `ψ(${s})`);
    const k = 0x1234567890abcdef1234567890abcdefn;
    const kf = new mcl.Fr();
    kf.setStr(k.toString());
    assert.ok(g2.mulGeneric(q, k).isEqual(mcl.mul(q, kf)));
    assert.ok(g2.mulGeneric(q, BN254_R).isZero());
  }
  for (const q of twistPoints(mcl, 4, 1)) {
    assert.ok(g2.mulGeneric(q, BN254_R * H).isZero(), 'the twist group has order r·h');
    assert.ok(!g2.mulGeneric(q, BN254_R).isZero());
  }
});

test('a point of each prime order ℓ | h is rejected, alone and added to a G2 point (the test is exact)', async () => {
  const { mcl, g2 } = await setup();
  const inside = mcl.hashAndMapToG2('G2 point');
  const points = twistPoints(mcl, 3, 100);
  for (const l of H_FACTORS) {
    let found = 0;
    for (const q of points) {
      const t = g2.mulGeneric(q, (BN254_R * H) / l);
      if (t.isZero()) continue; // q has no component of order ℓ
      found++;
      assert.ok(t.isValid());
      assert.ok(g2.mulGeneric(t, l).isZero(), `order ${l}`);
      assert.equal(g2.inG2(t), false, `a point of order ${l} is not in G2`);
      assert.equal(t.isValidOrder(), false);
      const mixed = mcl.add(inside, t);
      assert.equal(g2.inG2(mixed), false, `G2 point + point of order ${l}`);
      assert.equal(mixed.isValidOrder(), false);
    }
    assert.ok(found > 0, `some point has a component of order ${l}`);
  }
  assert.equal(g2.inG2(new mcl.G2()), true, 'the point at infinity is in G2');
});

test('on random twist points and their G2 parts, the fast test agrees with mcl multiplying by r', async () => {
  const { mcl, g2 } = await setup();
  let outside = 0;
  for (const q of twistPoints(mcl, 40, 5000)) {
    const expected = q.isValidOrder();
    if (!expected) outside++;
    assert.equal(g2.inG2(q), expected);
    const cleared = g2.mulGeneric(q, H); // [h]q is in G2
    assert.equal(cleared.isValidOrder(), true);
    assert.equal(g2.inG2(cleared), true);
    const n = mcl.neg(cleared);
    assert.equal(g2.inG2(n), true);
  }
  assert.ok(outside >= 39, 'random twist points are almost never in G2');
});

test('the B points of real proofs and the verifying keys’ G2 points pass', async (t) => {
  if (!sharedOrSkip(t)) return;
  const { mcl, g2 } = await setup();
  const asMcl = (p: { x: { c0: bigint; c1: bigint }; y: { c0: bigint; c1: bigint } }) => {
    const q = new mcl.G2();
    q.setStr(`1 ${[p.x.c0, p.x.c1, p.y.c0, p.y.c1].map((v) => v.toString(16)).join(' ')}`, 16);
    assert.ok(q.isValid());
    return q;
  };
  const vectors = readSharedJson<{ proof_hex: string }[]>('vectors', 'groth16-real-btc.json');
  assert.ok(vectors.length > 0);
  for (const v of vectors) {
    const bytes = fromHex(v.proof_hex);
    const b = asMcl(parseGnarkProof(bytes.subarray(bytes.length - 256)).b);
    assert.equal(g2.inG2(b), true);
    // B + a point of order 10069 is on the twist, outside G2
    const [q] = twistPoints(mcl, 1, 7);
    const tor = g2.mulGeneric(q!, (BN254_R * H) / H_FACTORS[0]!);
    if (!tor.isZero()) assert.equal(g2.inG2(mcl.add(b, tor)), false);
  }
  for (const hex of Object.values(GROTH16_VKS_HEX)) {
    const vk = parseGnarkVerifyingKey(fromHex(hex));
    for (const p of [vk.beta, vk.gamma, vk.delta]) assert.equal(g2.inG2(asMcl(p)), true);
  }
});
