/**
 * Mock proofs: arkworks Groth16 over BLS12-381 for the protocol's one-constraint dummy circuit
 * (`a·1 = c`, c public), against the mock keys. The reference discards the pairing result when it
 * verifies; here the pairing is checked. `proveMock` makes real proofs that the reference accepts.
 * Browser-safe: pure JS (@noble/curves) by default; Node services switch to the WebAssembly
 * backend (mcl-wasm, `mock-mcl.ts`) with `useMockCurve`, which gives the same bytes and verdicts
 * several times faster.
 */
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { sha256 } from '../util/sha256.js';
import { CharmsError } from '../errors.js';
import { bigEndianToBigInt, fromHex } from '../util/bytes.js';
import { ByteReader } from '../util/byte-io.js';
import { MOCK_GROTH16_PK_HEX, MOCK_GROTH16_VK_HEX } from './constants.js';

const { Fp, Fr, Fp12 } = bls12_381.fields;
const G1 = bls12_381.G1.Point;
const G2 = bls12_381.G2.Point;
type G1P = InstanceType<typeof G1>;
type G2P = InstanceType<typeof G2>;

/** Serialized size of an arkworks compressed proof A(G1) ‖ B(G2) ‖ C(G1). */
export const MOCK_PROOF_BYTES = 192;

const invalid = (msg: string, cause?: unknown) => new CharmsError('PROOF_INVALID', `invalid mock proof: ${msg}`, cause === undefined ? undefined : { cause });

/** Decoders of one curve library: throw for a point off the curve or outside the subgroup. */
export interface PointCodec<P1, P2> {
  g1(bytes: Uint8Array): P1;
  g2(bytes: Uint8Array): P2;
}

/**
 * Reads arkworks' compressed encodings (ZCash flag bits: 0x80 compressed, 0x40 infinity, 0x20
 * larger y). noble and mcl (ETH serialization) decode the same format; x < q is checked here
 * because ark rejects non-canonical coordinates, and the codec checks every point is on the
 * curve and in the subgroup.
 */
export class ArkReader<P1, P2> extends ByteReader {
  constructor(
    b: Uint8Array,
    private readonly what: string,
    private readonly codec: PointCodec<P1, P2>,
  ) {
    super(b, (_w, at) => invalid(`${what}: unexpected end of data at byte ${at}`));
  }
  private checkCoordinate(bytes: Uint8Array, flagged: boolean): void {
    const c = bytes.slice();
    if (flagged) c[0]! &= 0x1f;
    const v = bigEndianToBigInt(c);
    if (v >= Fp.ORDER) throw invalid(`${this.what}: coordinate at byte ${this.pos - 48} is not below the field modulus`);
  }
  g1(): P1 {
    const b = this.take(48);
    this.checkCoordinate(b, true);
    try {
      return this.codec.g1(b);
    } catch (e) {
      throw invalid(`${this.what}: G1 point at byte ${this.pos - 48} is not valid`, e);
    }
  }
  g2(): P2 {
    const b = this.take(96);
    this.checkCoordinate(b.subarray(0, 48), true);
    this.checkCoordinate(b.subarray(48, 96), false);
    try {
      return this.codec.g2(b);
    } catch (e) {
      throw invalid(`${this.what}: G2 point at byte ${this.pos - 96} is not valid`, e);
    }
  }
  /** ark Vec: u64 little-endian length, then the items. */
  vec<T>(item: () => T): T[] {
    const n = this.u64le();
    if (n > 64n) throw invalid(`${this.what}: vector of ${n} items is too long`);
    return Array.from({ length: Number(n) }, item);
  }
}

const nobleCodec: PointCodec<G1P, G2P> = {
  g1(b) {
    const p = G1.fromBytes(b);
    p.assertValidity();
    return p;
  },
  g2(b) {
    const p = G2.fromBytes(b);
    p.assertValidity();
    return p;
  },
};

export interface MockVk<P1 = G1P, P2 = G2P> {
  alpha: P1;
  beta: P2;
  gamma: P2;
  delta: P2;
  gammaAbc: P1[];
}

const readVk = <P1, P2>(r: ArkReader<P1, P2>): MockVk<P1, P2> => ({ alpha: r.g1(), beta: r.g2(), gamma: r.g2(), delta: r.g2(), gammaAbc: r.vec(() => r.g1()) });

/** The mock verifying key decoded with `codec` (checked: one public input). */
export function readMockVk<P1, P2>(codec: PointCodec<P1, P2>): MockVk<P1, P2> {
  const vk = readVk(new ArkReader(fromHex(MOCK_GROTH16_VK_HEX), 'mock verifying key', codec));
  if (vk.gammaAbc.length !== 2) throw invalid('mock verifying key must have exactly one public input');
  return vk;
}

let vkCache: MockVk | undefined;
const mockVk = (): MockVk => (vkCache ??= readMockVk(nobleCodec));

/** A curve library that proves and strictly verifies mock proofs; both give the same bytes and verdicts. */
export interface MockCurve {
  readonly name: 'noble' | 'mcl-wasm';
  /** The strict pairing check for public input x; throws PROOF_INVALID for a malformed proof. */
  verify(proof: Uint8Array, x: bigint): boolean;
  /** The compressed proof for public input x with blinding (r, s). */
  prove(x: bigint, r: bigint, s: bigint): Uint8Array;
}

let curve: MockCurve | undefined;
/** Selects the curve library for mock proofs (undefined: back to the pure-JS default). */
export function useMockCurve(c: MockCurve | undefined): void {
  curve = c;
}
/** The curve library mock proofs currently use. */
export const mockCurveName = (): MockCurve['name'] => curve?.name ?? 'noble';

/** The circuit's public input: the first 31 bytes of SHA-256(public values) read little-endian. */
export function mockPublicInput(publicValues: Uint8Array): bigint {
  return bigEndianToBigInt(sha256(publicValues).subarray(0, 31).reverse());
}

/** Scalar multiplication that accepts zero scalars and the point at infinity (noble's does not). */
function mul<P extends G1P | G2P>(p: P, s: bigint): P {
  if (s === 0n || p.is0()) return (p instanceof G1 ? G1.ZERO : G2.ZERO) as P;
  return p.multiplyUnsafe(s) as P;
}

/**
 * True iff the 192-byte proof passes the strict Groth16 pairing check for these public values.
 * Throws CharmsError PROOF_INVALID if the proof is not three valid points (as ark's decoder does).
 */
export function verifyMockProof(proof: Uint8Array, publicValues: Uint8Array): boolean {
  if (proof.length !== MOCK_PROOF_BYTES) throw invalid(`expected ${MOCK_PROOF_BYTES} bytes, got ${proof.length}`);
  return (curve ?? nobleMockCurve).verify(proof, mockPublicInput(publicValues));
}

function nobleVerify(proof: Uint8Array, x: bigint): boolean {
  const r = new ArkReader(proof, 'proof', nobleCodec);
  const A = r.g1();
  const B = r.g2();
  const C = r.g1();
  const vk = mockVk();
  const L = vk.gammaAbc[0]!.add(mul(vk.gammaAbc[1]!, x));
  // e(A,B) == e(α,β)·e(L,γ)·e(C,δ); pairs with an infinite point contribute 1 (noble throws on them)
  const pairs = [
    { g1: A.negate(), g2: B },
    { g1: vk.alpha, g2: vk.beta },
    { g1: L, g2: vk.gamma },
    { g1: C, g2: vk.delta },
  ].filter((p) => !p.g1.is0() && !p.g2.is0());
  return Fp12.eql(bls12_381.pairingBatch(pairs), Fp12.ONE);
}

const VK_TEXT_WITH_0X = [0x82, 0x78, 0x42, 0x30, 0x78]; // array(2), text(66), "0x"

/**
 * The public-values encodings mock provers have used for a spell: HEAD frames the vk as
 * `"0x" + hex`, provers before the prefix was added (protocol ≤ 6 era) used the bare hex
 * (`text(64)`). Given the HEAD form, returns it and the older form; otherwise just the input.
 */
export function mockPublicValuesVariants(publicValues: Uint8Array): Uint8Array[] {
  if (publicValues.length < 69 || VK_TEXT_WITH_0X.some((b, i) => publicValues[i] !== b)) return [publicValues];
  const old = new Uint8Array(publicValues.length - 2);
  old.set([0x82, 0x78, 0x40]);
  old.set(publicValues.subarray(5), 3);
  return [publicValues, old];
}

// ------------------------------------------------------------------------------ proving

export interface MockPk<P1 = G1P, P2 = G2P> {
  vk: MockVk<P1, P2>;
  betaG1: P1;
  deltaG1: P1;
  aQuery: P1[];
  bG1Query: P1[];
  bG2Query: P2[];
  hQuery: P1[];
  lQuery: P1[];
}

/** The mock proving key decoded with `codec` (checked against the one-constraint circuit). */
export function readMockPk<P1, P2>(codec: PointCodec<P1, P2>): MockPk<P1, P2> {
  const r = new ArkReader(fromHex(MOCK_GROTH16_PK_HEX), 'mock proving key', codec);
  const pk: MockPk<P1, P2> = {
    vk: readVk(r),
    betaG1: r.g1(),
    deltaG1: r.g1(),
    aQuery: r.vec(() => r.g1()),
    bG1Query: r.vec(() => r.g1()),
    bG2Query: r.vec(() => r.g2()),
    hQuery: r.vec(() => r.g1()),
    lQuery: r.vec(() => r.g1()),
  };
  // variables are [1, c, a]; the quotient has 3 coefficients (domain of size 4)
  if (pk.aQuery.length !== 3 || pk.bG2Query.length !== 3 || pk.bG1Query.length !== 3 || pk.hQuery.length !== 3 || pk.lQuery.length !== 1)
    throw new CharmsError('INTERNAL', 'mock proving key does not match the one-constraint mock circuit');
  return pk;
}

let pkCache: MockPk | undefined;
const mockPk = (): MockPk => (pkCache ??= readMockPk(nobleCodec));

/** Generator of the size-4 evaluation domain of the mock circuit (a 4th root of unity in Fr). */
const OMEGA4 = BigInt('0x8d51ccce760304d0ec030002760300000001000000000000');

function randomScalar(): bigint {
  const b = new Uint8Array(64); // 512 bits reduced mod r: negligible bias
  crypto.getRandomValues(b);
  return Fr.create(bigEndianToBigInt(b));
}

const sumG1 = (points: G1P[], scalars: bigint[]): G1P => points.reduce((acc, p, i) => acc.add(mul(p, scalars[i] ?? 0n)), G1.ZERO);
const sumG2 = (points: G2P[], scalars: bigint[]): G2P => points.reduce((acc, p, i) => acc.add(mul(p, scalars[i] ?? 0n)), G2.ZERO);

/**
 * A Groth16 proof (arkworks compressed A ‖ B ‖ C, 192 bytes) that the mock circuit is satisfied
 * for these public values. Fresh random (r, s) per proof; `blinding` fixes them (tests only;
 * r = s = 0 gives the deterministic no-zk proof).
 */
export function proveMock(publicValues: Uint8Array, blinding?: { r: bigint; s: bigint }): Uint8Array {
  const x = mockPublicInput(publicValues);
  const r = blinding ? Fr.create(blinding.r) : randomScalar();
  const s = blinding ? Fr.create(blinding.s) : randomScalar();
  return (curve ?? nobleMockCurve).prove(x, r, s);
}

/**
 * The quotient H = (A(X)·B(X) − C(X)) / (X⁴ − 1) over the domain {1, ω, ω², ω³}, in closed form:
 * its 3 coefficients for public input x.
 */
export function mockQuotient(x: bigint): bigint[] {
  const inv16 = Fr.inv(16n);
  const twoXm1 = Fr.sub(Fr.mul(2n, x), 1n);
  return [Fr.mul(twoXm1, inv16), Fr.mul(Fr.add(twoXm1, OMEGA4), inv16), Fr.mul(OMEGA4, inv16)];
}

function nobleProve(x: bigint, r: bigint, s: bigint): Uint8Array {
  const pk = mockPk();
  const z = [1n, x, x]; // assignment: one, c = x (public), a = x (witness)
  const A = pk.vk.alpha.add(sumG1(pk.aQuery, z)).add(mul(pk.deltaG1, r));
  const B = pk.vk.beta.add(sumG2(pk.bG2Query, z)).add(mul(pk.vk.delta, s));
  const B1 = pk.betaG1.add(sumG1(pk.bG1Query, z)).add(mul(pk.deltaG1, s));
  const h = mockQuotient(x);
  const C = mul(pk.lQuery[0]!, x)
    .add(sumG1(pk.hQuery, h))
    .add(mul(A, s))
    .add(mul(B1, r))
    .subtract(mul(pk.deltaG1, Fr.mul(r, s)));
  const out = new Uint8Array(MOCK_PROOF_BYTES);
  out.set(A.toBytes(true), 0);
  out.set(B.toBytes(true), 48);
  out.set(C.toBytes(true), 144);
  return out;
}

const nobleMockCurve: MockCurve = { name: 'noble', verify: nobleVerify, prove: nobleProve };

/** Parses the mock keys now (so the first mock verification or proof is not slower). */
export function prepareMockKeys(): void {
  mockVk();
  mockPk();
}
