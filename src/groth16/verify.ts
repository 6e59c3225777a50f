/**
 * Verifies a spell proof against its serialized public values. Real spells: SP1 Groth16 over
 * BN254, with the verifying key and proof layout chosen by protocol version (SP1 v5 shape up to
 * protocol 11, v6 shape with exit code / vk root / nonce from 12). Mock spells: the arkworks
 * BLS12-381 mock verifier. Browser-safe.
 *
 * Verification is synchronous. It runs on the pure-JS backend until `await initPairingBackend()`
 * has loaded the WebAssembly one (mcl-wasm, about 3× faster); the result is the same either way.
 */
import { sha256 } from '../util/sha256.js';
import { CharmsError } from '../errors.js';
import { bigEndianToBigInt, equalBytes, fromHex, toHex } from '../util/bytes.js';
import { GROTH16_VKS_HEX, groth16KeyFor, spellVkFor, vkRootFor, type Groth16KeyName } from './constants.js';
import { nobleBackend, type Bn254Backend, type PreparedKey, type PreparedProof } from './bn254.js';
import { loadMclBackend } from './bn254-mcl.js';
import { BN254_R, parseGnarkProof, parseGnarkVerifyingKey, type GnarkVerifyingKey } from './gnark.js';
import { MOCK_PROOF_BYTES, mockPublicValuesVariants, prepareMockKeys, verifyMockProof } from './mock.js';

export type PairingBackendName = Bn254Backend['name'];

/** v5 shape: prefix(4) ‖ gnark proof(256). v6 shape adds exit code, vk root and nonce (32 each). */
const V5_PROOF_BYTES = 260;
const V6_PROOF_BYTES = 356;

let backend: Bn254Backend = nobleBackend;

/**
 * Selects the BN254 pairing backend: 'mcl-wasm' (default; loads and initialises the WebAssembly
 * module once) or 'noble' (pure JS). Resolves to the backend now in use. If mcl-wasm cannot be
 * loaded it rejects with CharmsError INTERNAL and verification stays on the pure-JS backend.
 */
export async function initPairingBackend(kind: PairingBackendName = 'mcl-wasm'): Promise<PairingBackendName> {
  if (kind === 'noble') backend = nobleBackend;
  else {
    try {
      backend = await loadMclBackend();
    } catch (e) {
      throw new CharmsError('INTERNAL', 'could not load the mcl-wasm pairing backend; verification stays on the pure-JS backend', { cause: e });
    }
  }
  return backend.name;
}

/** The BN254 backend verifySpellProof currently uses. */
export const proofBackend = (): PairingBackendName => backend.name;

const parsedKeys = new Map<Groth16KeyName, { vk: GnarkVerifyingKey; prefix: Uint8Array }>();
const preparedKeys = new Map<string, PreparedKey>();

function groth16Key(name: Groth16KeyName): { prefix: Uint8Array; prepared: PreparedKey } {
  let parsed = parsedKeys.get(name);
  if (!parsed) {
    const bytes = fromHex(GROTH16_VKS_HEX[name]);
    parsed = { vk: parseGnarkVerifyingKey(bytes), prefix: sha256(bytes).subarray(0, 4) };
    parsedKeys.set(name, parsed);
  }
  const cacheKey = `${backend.name}:${name}`;
  let prepared = preparedKeys.get(cacheKey);
  if (!prepared) {
    prepared = backend.prepareKey(parsed.vk);
    preparedKeys.set(cacheKey, prepared);
  }
  return { prefix: parsed.prefix, prepared };
}

/** Parses and prepares every verifying key now, for the current backend (first call not slower). */
export function prepareProofKeys(): void {
  for (const name of Object.keys(GROTH16_VKS_HEX) as Groth16KeyName[]) groth16Key(name);
  prepareMockKeys();
}

/** SHA-256 of the public values with the top 3 bits cleared: SP1's committed-values digest in Fr. */
export function committedValuesDigest(publicValues: Uint8Array): Uint8Array {
  const h = Uint8Array.from(sha256(publicValues));
  h[0]! &= 0x1f;
  return h;
}

function failure(version: number, detail: string, cause?: unknown): CharmsError {
  return new CharmsError('PROOF_INVALID', `could not verify spell proof (protocol ${version}): ${detail}`, cause === undefined ? undefined : { cause });
}

/** Runs `f`, turning any CharmsError it throws into a PROOF_INVALID failure naming the version. */
function guarded<T>(version: number, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof CharmsError) throw failure(version, e.message, e);
    throw e;
  }
}

/** One proof to verify: what verifySpellProof takes. */
export interface SpellProofCheck {
  version: number;
  publicValues: Uint8Array;
  proof: Uint8Array;
  mock: boolean;
}

interface ReadyProof {
  version: number;
  keyName: Groth16KeyName;
  key: PreparedKey;
  proof: PreparedProof;
  backend: Bn254Backend;
}

/** Every check of a real proof short of the pairing: shape, prefix, vk root, exit code, points. */
function prepareReal(args: SpellProofCheck): ReadyProof {
  const { version, publicValues, proof } = args;
  const spellVk = guarded(version, () => spellVkFor(version, false));
  const vkRoot = vkRootFor(version);
  const expected = vkRoot ? V6_PROOF_BYTES : V5_PROOF_BYTES;
  if (proof.length !== expected) throw failure(version, `proof must be ${expected} bytes, got ${proof.length}`);
  const keyName = groth16KeyFor(version);
  const key = guarded(version, () => groth16Key(keyName));
  if (!equalBytes(proof.subarray(0, 4), key.prefix))
    throw failure(version, `proof prefix ${toHex(proof.subarray(0, 4))} does not match groth16 vk ${keyName} (${toHex(key.prefix)})`);
  const inputs = [spellVk, committedValuesDigest(publicValues)];
  const repeating = vkRoot ? [0, 3] : [0]; // the spell vk and the vk root are fixed per version
  let gnarkProof = proof.subarray(4);
  if (vkRoot) {
    const exitCode = proof.subarray(4, 36);
    const root = proof.subarray(36, 68);
    const nonce = proof.subarray(68, 100);
    if (!equalBytes(root, vkRoot)) throw failure(version, `vk root ${toHex(root)} is not ${toHex(vkRoot)}`);
    if (exitCode.some((b) => b !== 0)) throw failure(version, 'exit code is not zero');
    inputs.push(exitCode, root, nonce);
    gnarkProof = proof.subarray(100);
  }
  // public inputs are read big-endian and reduced mod r (substrate-bn's Fr::from_slice)
  const scalars = inputs.map((b) => bigEndianToBigInt(b) % BN254_R);
  const used = backend;
  const prepared = guarded(version, () => {
    if (key.prepared.inputCount !== scalars.length)
      throw new CharmsError('PROOF_INVALID', `groth16 vk ${keyName} takes ${key.prepared.inputCount} public inputs, not ${scalars.length}`);
    return used.prepareProof(key.prepared, parseGnarkProof(gnarkProof), scalars, repeating);
  });
  return { version, keyName, key: key.prepared, proof: prepared, backend: used };
}

const pairingFailure = (version: number) => failure(version, 'the Groth16 pairing check failed (proof does not match these public values)');

/**
 * Throws CharmsError PROOF_INVALID unless `proof` proves `publicValues` (serialized as the spell's
 * protocol version requires; see publicValuesFor) for a spell of `version`. `mock` = the spell's
 * mock flag: mock spells are checked by the mock verifier only, real ones by SP1's only.
 */
export function verifySpellProof(args: SpellProofCheck): void {
  if (args.mock) return verifyMock(args.version, args.publicValues, args.proof);
  const ready = prepareReal(args);
  if (!ready.backend.check(ready.key, ready.proof)) throw pairingFailure(args.version);
}

/**
 * Verifies many proofs at once: the same verdict per proof as verifySpellProof (undefined = valid,
 * or the CharmsError it would throw), but the real proofs of each verifying key are checked
 * together with one random linear combination (N + 2 Miller loops and one final exponentiation
 * instead of 3N and N). If a batch fails, its proofs are checked one by one to find the bad ones.
 */
export function verifySpellProofs(checks: readonly SpellProofCheck[]): (CharmsError | undefined)[] {
  const verdicts: (CharmsError | undefined)[] = new Array<CharmsError | undefined>(checks.length).fill(undefined);
  const groups = new Map<string, { ready: ReadyProof; index: number }[]>();
  checks.forEach((c, index) => {
    try {
      if (c.mock) return verifyMock(c.version, c.publicValues, c.proof);
      const ready = prepareReal(c);
      const id = `${ready.backend.name}:${ready.keyName}`;
      let g = groups.get(id);
      if (!g) groups.set(id, (g = []));
      g.push({ ready, index });
    } catch (e) {
      if (!(e instanceof CharmsError)) throw e;
      verdicts[index] = e;
    }
  });
  for (const group of groups.values()) {
    const { backend: b, key } = group[0]!.ready;
    if (
      group.length > 1 &&
      b.checkBatch(
        key,
        group.map((g) => g.ready.proof),
      )
    )
      continue;
    for (const { ready, index } of group) if (!b.check(key, ready.proof)) verdicts[index] = pairingFailure(ready.version);
  }
  return verdicts;
}

function verifyMock(version: number, publicValues: Uint8Array, proof: Uint8Array): void {
  guarded(version, () => spellVkFor(version, true));
  if (proof.length !== MOCK_PROOF_BYTES) throw failure(version, `mock proof must be ${MOCK_PROOF_BYTES} bytes, got ${proof.length}`);
  // earlier mock provers framed the vk without "0x"; any encoding they used is accepted
  const ok = guarded(version, () => mockPublicValuesVariants(publicValues).some((pv) => verifyMockProof(proof, pv)));
  if (!ok) throw failure(version, 'the mock Groth16 pairing check failed (proof does not match these public values)');
}
