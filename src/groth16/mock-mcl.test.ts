/**
 * Differential test of the mcl-wasm mock curve against the pure-JS (noble) one: the same proof
 * bytes for the same blinding, and the same verdict (true / false / PROOF_INVALID) for real,
 * historical and malformed proofs. Both mcl instances (BN254 and BLS12-381) work side by side.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { mockCurveName, mockPublicInput, proveMock, readMockPk, readMockVk, useMockCurve, verifyMockProof } from './mock.js';
import { loadMclMockCurve } from './mock-mcl.js';
import { initPairingBackend, verifySpellProof } from './verify.js';
import { CharmsError } from '../errors.js';
import { fromHex } from '../util/bytes.js';
import { readSharedJson, sharedOrSkip } from '../testing/shared.js';

const verdict = (proof: Uint8Array, pv: Uint8Array): string => {
  try {
    return String(verifyMockProof(proof, pv));
  } catch (e) {
    assert.ok(e instanceof CharmsError, String(e));
    return e.code;
  }
};

/** Runs f with each curve selected; returns [noble result, mcl result]. */
async function both<T>(f: () => T): Promise<[T, T]> {
  const mcl = await loadMclMockCurve();
  useMockCurve(undefined);
  const a = f();
  useMockCurve(mcl);
  try {
    return [a, f()];
  } finally {
    useMockCurve(undefined);
  }
}

test('mcl mock curve: proofs are byte-identical to noble for the same blinding, and verify on both', async () => {
  const cases = [
    { pv: new Uint8Array(0), r: 0n, s: 0n },
    { pv: new Uint8Array(700).fill(7), r: 1n, s: 2n },
    { pv: Uint8Array.from({ length: 300 }, (_, i) => i * 13), r: 2n ** 200n + 12345n, s: bls12_381.fields.Fr.ORDER - 1n },
  ];
  for (const c of cases) {
    const [a, b] = await both(() => proveMock(c.pv, { r: c.r, s: c.s }));
    assert.deepEqual(b, a, `proof for r=${c.r}`);
    assert.deepEqual(await both(() => verdict(a, c.pv)), ['true', 'true']);
  }
  // random blinding: each curve's proofs pass the other's check
  const pv = new Uint8Array(64).fill(1);
  const [pa, pb] = await both(() => proveMock(pv));
  assert.deepEqual(await both(() => [verdict(pa, pv), verdict(pb, pv)]), [
    ['true', 'true'],
    ['true', 'true'],
  ]);
  assert.notDeepEqual(pa, pb);
  assert.equal(mockCurveName(), 'noble');
});

test('mcl mock curve: the same verdicts as noble for historical, wrong-input and malformed proofs', async (t) => {
  if (!sharedOrSkip(t)) return;
  const d = readSharedJson('vectors', 'groth16-mock.json').historical_rust_mock_spell;
  const pvOld = fromHex(d.pv_with_unprefixed_vk_string_hex);
  const pv0x = fromHex(d.pv_with_0x_vk_string_hex);
  const proofs = [fromHex(d.rust_made_proof_hex), fromHex(d.ts_no_zk_proof_for_unprefixed_pv_hex), fromHex(d.ts_no_zk_proof_for_0x_pv_hex)];
  assert.equal(mockPublicInput(pvOld), BigInt(`0x${d.public_input_fr_unprefixed_hex.replace(/^0x/, '')}`));
  const malformed: Uint8Array[] = [];
  const base = proofs[0]!;
  for (const at of [0, 48, 144]) {
    for (const flags of [0x00, 0x20, 0x40, 0x60, 0xc0, 0xe0, 0xa0]) {
      const p = Uint8Array.from(base);
      p[at] = (p[at]! & 0x1f) | flags;
      malformed.push(p);
    }
    const inf = Uint8Array.from(base); // the point at infinity, canonically encoded
    inf.fill(0, at, at + (at === 48 ? 96 : 48));
    inf[at] = 0xc0;
    malformed.push(inf);
    const big = Uint8Array.from(base); // x ≥ q
    big.fill(0xff, at + 1, at + 48);
    big[at] = 0x9f;
    malformed.push(big);
  }
  for (let i = 0; i < 192; i += 5) {
    const p = Uint8Array.from(base);
    p[i]! ^= 1 << (i % 8);
    malformed.push(p);
  }
  let compared = 0;
  const seen = new Set<string>();
  for (const proof of [...proofs, ...malformed]) {
    for (const pv of [pvOld, pv0x]) {
      const [a, b] = await both(() => verdict(proof, pv));
      assert.equal(b, a, `proof ${Buffer.from(proof).toString('hex').slice(0, 16)}…`);
      seen.add(a);
      compared++;
    }
  }
  assert.deepEqual([...seen].sort(), ['PROOF_INVALID', 'false', 'true'], 'all three verdicts occur');
  assert.ok(compared > 100);
});

test('BN254 (real proofs) and BLS12-381 (mock proofs) on two mcl instances side by side', async (t) => {
  if (!sharedOrSkip(t)) return;
  await initPairingBackend('mcl-wasm');
  useMockCurve(await loadMclMockCurve());
  try {
    const v = readSharedJson<{ version: string; public_values_hex: string; proof_hex: string }[]>('vectors', 'groth16-real-btc.json')[0]!;
    const real = { version: Number(v.version), publicValues: fromHex(v.public_values_hex), proof: fromHex(v.proof_hex), mock: false };
    const pv = new Uint8Array(40).fill(9);
    for (let i = 0; i < 3; i++) {
      verifySpellProof(real);
      verifySpellProof({ version: 15, publicValues: pv, proof: proveMock(pv), mock: true });
    }
    assert.throws(() => verifySpellProof({ ...real, publicValues: pv }), { code: 'PROOF_INVALID' });
  } finally {
    useMockCurve(undefined);
    await initPairingBackend('noble');
  }
});

test('a one-shot process may give the shared mcl instance to the mock curve; BN254 on mcl is then refused, pure JS verifies', () => {
  const url = (f: string) => JSON.stringify(new URL(f, import.meta.url).href);
  const script = `
    const { loadMclMockCurve } = await import(${url('./mock-mcl.js')});
    const { proveMock, verifyMockProof, useMockCurve } = await import(${url('./mock.js')});
    const { initPairingBackend } = await import(${url('./verify.js')});
    useMockCurve(await loadMclMockCurve({ shareInstance: true }));
    const pv = new Uint8Array(50).fill(9);
    if (!verifyMockProof(proveMock(pv), pv)) throw new Error('mock proof does not verify');
    let refused = '';
    try { await initPairingBackend('mcl-wasm'); } catch (e) { refused = e.cause?.code; }
    if (refused !== 'UNSUPPORTED') throw new Error('BN254 on mcl was not refused: ' + refused);
    if ((await initPairingBackend('noble')) !== 'noble') throw new Error('pure JS unavailable');`;
  const file = join(mkdtempSync(join(tmpdir(), 'mcl-owner-')), 'share.mjs');
  writeFileSync(file, script);
  const r = spawnSync(process.execPath, [file], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
});

test('the embedded mock keys (decoded by the mcl curve without subgroup checks, its vk taken from the pk) pass the strict decoder, and the pk holds the vk', () => {
  const strict = {
    g1(b: Uint8Array) {
      const p = bls12_381.G1.Point.fromBytes(b);
      p.assertValidity();
      assert.ok(p.isTorsionFree());
      return p;
    },
    g2(b: Uint8Array) {
      const p = bls12_381.G2.Point.fromBytes(b);
      p.assertValidity();
      assert.ok(p.isTorsionFree());
      return p;
    },
  };
  const pk = readMockPk(strict);
  const vk = readMockVk(strict);
  assert.equal(pk.hQuery.length + pk.aQuery.length + pk.bG2Query.length, 9);
  for (const k of ['alpha', 'beta', 'gamma', 'delta'] as const) assert.ok(vk[k].equals(pk.vk[k] as never), k);
  assert.ok(vk.gammaAbc.length === 2 && vk.gammaAbc.every((p, i) => p.equals(pk.vk.gammaAbc[i]!)));
});
