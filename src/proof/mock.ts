/**
 * Mock proofs: arkworks Groth16 over BLS12-381 for the protocol's one-constraint dummy circuit,
 * against the mock keys. Unlike the reference (which discards the pairing result), verification
 * here checks the pairing; `proveMock` makes real proofs the reference accepts.
 */
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { CharmsError } from '../errors.js';
import { fromHex } from '../util/bytes.js';
import { MOCK_GROTH16_PK_HEX, MOCK_GROTH16_VK_HEX } from './keys-data.js';

const { Fp, Fr, Fp12 } = bls12_381.fields;
const G1 = bls12_381.G1.Point;
const G2 = bls12_381.G2.Point;
type G1P = InstanceType<typeof G1>;
type G2P = InstanceType<typeof G2>;

const invalid = (msg: string) => new CharmsError('PROOF_INVALID', `invalid mock proof: ${msg}`);

/** Reads arkworks' compressed (ZCash-flag) encodings, checking x < q as ark does. */
class ArkReader {
  pos = 0;
  constructor(private b: Uint8Array) {}
  private take(n: number): Uint8Array {
    if (this.pos + n > this.b.length) throw invalid('unexpected end of data');
    const out = this.b.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  private checkFq(bytes: Uint8Array, flagged: boolean): void {
    const c = Uint8Array.from(bytes);
    if (flagged) c[0]! &= 0x1f;
    let v = 0n;
    for (const x of c) v = (v << 8n) | BigInt(x);
    if (v >= Fp.ORDER) throw invalid('coordinate not below the field modulus');
  }
  g1(): G1P {
    const b = this.take(48);
    this.checkFq(b, true);
    try {
      const p = G1.fromBytes(b);
      p.assertValidity();
      return p;
    } catch {
      throw invalid('bad G1 point');
    }
  }
  g2(): G2P {
    const b = this.take(96);
    this.checkFq(b.subarray(0, 48), true);
    this.checkFq(b.subarray(48, 96), false);
    try {
      const p = G2.fromBytes(b);
      p.assertValidity();
      return p;
    } catch {
      throw invalid('bad G2 point');
    }
  }
  vec<T>(item: () => T): T[] {
    const n = new DataView(this.b.buffer, this.b.byteOffset + this.pos).getBigUint64(0, true);
    this.take(8);
    if (n > 1024n) throw invalid('vector too long');
    return Array.from({ length: Number(n) }, item);
  }
}

interface MockVk {
  alpha: G1P;
  beta: G2P;
  gamma: G2P;
  delta: G2P;
  gammaAbc: G1P[];
}

function readVk(r: ArkReader): MockVk {
  return { alpha: r.g1(), beta: r.g2(), gamma: r.g2(), delta: r.g2(), gammaAbc: r.vec(() => r.g1()) };
}

let vkCache: MockVk | undefined;
const mockVk = (): MockVk => (vkCache ??= readVk(new ArkReader(fromHex(MOCK_GROTH16_VK_HEX))));

/** The circuit's public input: the first 31 bytes of SHA-256(public values), little-endian. */
export function mockPublicInput(publicValues: Uint8Array): bigint {
  const h = sha256(publicValues);
  let v = 0n;
  for (let i = 30; i >= 0; i--) v = (v << 8n) | BigInt(h[i]!);
  return v;
}

/** Scalar multiplication that accepts zero scalars and the point at infinity (noble's does not). */
function mul(p: G1P, s: bigint): G1P;
function mul(p: G2P, s: bigint): G2P;
function mul(p: G1P | G2P, s: bigint): G1P | G2P {
  const zero = (p as G1P).is0() || s === 0n;
  if (p instanceof G1) return zero ? G1.ZERO : (p as G1P).multiplyUnsafe(s);
  return zero ? G2.ZERO : (p as G2P).multiplyUnsafe(s);
}

/** True iff the 192-byte proof verifies for these public values (strict pairing check). */
export function verifyMockProof(proof: Uint8Array, publicValues: Uint8Array): boolean {
  if (proof.length !== 192) throw invalid(`expected 192 bytes, got ${proof.length}`);
  const r = new ArkReader(proof);
  const A = r.g1();
  const B = r.g2();
  const C = r.g1();
  const vk = mockVk();
  if (vk.gammaAbc.length !== 2) throw invalid('mock verifying key has an unexpected input count');
  const x = mockPublicInput(publicValues);
  const L = vk.gammaAbc[0]!.add(mul(vk.gammaAbc[1]!, x));
  const pairs: { g1: G1P; g2: G2P }[] = [
    { g1: A.negate(), g2: B },
    { g1: vk.alpha, g2: vk.beta },
    { g1: L, g2: vk.gamma },
    { g1: C, g2: vk.delta },
  ].filter((p) => !p.g1.is0() && !p.g2.is0());
  return Fp12.eql(bls12_381.pairingBatch(pairs), Fp12.ONE);
}

// ------------------------------------------------------------------------------ proving

interface MockPk {
  vk: MockVk;
  betaG1: G1P;
  deltaG1: G1P;
  aQuery: G1P[];
  bG1Query: G1P[];
  bG2Query: G2P[];
  hQuery: G1P[];
  lQuery: G1P[];
}

let pkCache: MockPk | undefined;
function mockPk(): MockPk {
  if (pkCache) return pkCache;
  const r = new ArkReader(fromHex(MOCK_GROTH16_PK_HEX));
  const vk = readVk(r);
  pkCache = {
    vk,
    betaG1: r.g1(),
    deltaG1: r.g1(),
    aQuery: r.vec(() => r.g1()),
    bG1Query: r.vec(() => r.g1()),
    bG2Query: r.vec(() => r.g2()),
    hQuery: r.vec(() => r.g1()),
    lQuery: r.vec(() => r.g1()),
  };
  return pkCache;
}

/** The 4th root of unity of the circuit's evaluation domain. */
const OMEGA4 = BigInt('0x8d51ccce760304d0ec030002760300000001000000000000');

const randomScalar = (): bigint => {
  const b = new Uint8Array(64);
  crypto.getRandomValues(b);
  let v = 0n;
  for (const x of b) v = (v << 8n) | BigInt(x);
  return Fr.create(v);
};

/**
 * A Groth16 proof (arkworks compressed A ‖ B ‖ C, 192 bytes) that the mock circuit is satisfied
 * for these public values, with fresh randomness (r, s).
 */
export function proveMock(publicValues: Uint8Array, rs?: { r: bigint; s: bigint }): Uint8Array {
  const pk = mockPk();
  const x = mockPublicInput(publicValues);
  const z = [1n, x, x];
  const r = rs?.r ?? randomScalar();
  const s = rs?.s ?? randomScalar();
  const sum1 = (pts: G1P[], sc: bigint[]) => pts.reduce((acc, p, i) => acc.add(mul(p, sc[i] ?? 0n)), G1.ZERO);
  const A = pk.vk.alpha.add(sum1(pk.aQuery, z)).add(mul(pk.deltaG1, r));
  const B = pk.vk.beta.add(pk.bG2Query.reduce((acc, p, i) => acc.add(mul(p, z[i] ?? 0n)), G2.ZERO)).add(mul(pk.vk.delta, s));
  const B1 = pk.betaG1.add(sum1(pk.bG1Query, z)).add(mul(pk.deltaG1, s));
  const inv16 = Fr.inv(16n);
  const twoXm1 = Fr.sub(Fr.mul(2n, x), 1n);
  const h = [Fr.mul(twoXm1, inv16), Fr.mul(Fr.add(twoXm1, OMEGA4), inv16), Fr.mul(OMEGA4, inv16)];
  const C = mul(pk.lQuery[0]!, x)
    .add(sum1(pk.hQuery, h))
    .add(mul(A, s))
    .add(mul(B1, r))
    .subtract(mul(pk.deltaG1, Fr.mul(r, s)));
  const out = new Uint8Array(192);
  out.set(A.toBytes(true), 0);
  out.set(B.toBytes(true), 48);
  out.set(C.toBytes(true), 144);
  return out;
}
