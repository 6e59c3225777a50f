/**
 * Proof verification and mock proving: warm median verification time of the real vectors on each
 * BN254 backend (keys prepared), mock verification, the first verification in a fresh process,
 * and mock proof generation.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { initPairingBackend, prepareProofKeys, verifySpellProof, type PairingBackendName } from '../groth16/verify.js';
import { loadavg } from 'node:os';
import { proveMock, useMockCurve } from '../groth16/mock.js';
import { loadMclMockCurve } from '../groth16/mock-mcl.js';
import { fromHex } from '../util/bytes.js';
import { hasShared, readSharedJson } from '../testing/shared.js';
import { median, timeMedian } from './measure.js';

const timeIt = (n: number, f: () => void): number => timeMedian(n, f, 5);

type Args = Parameters<typeof verifySpellProof>[0];

/** Spawns `node` to import the verifier and verify one proof; returns the milliseconds it reports. */
function firstCall(args: Args, backend: PairingBackendName): number {
  const mod = fileURLToPath(new URL('../groth16/verify.js', import.meta.url));
  const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
  const script = `
    const t0 = performance.now();
    const m = await import(${JSON.stringify(mod)});
    ${backend === 'mcl-wasm' ? 'await m.initPairingBackend("mcl-wasm");' : ''}
    const b = (h) => Uint8Array.from(Buffer.from(h, 'hex'));
    m.verifySpellProof({ version: ${args.version}, publicValues: b('${hex(args.publicValues)}'), proof: b('${hex(args.proof)}'), mock: false });
    console.log(performance.now() - t0);`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`fresh-process verification failed: ${r.stderr}`);
  return Number(r.stdout.trim());
}

export async function run(): Promise<void> {
  const pv = new Uint8Array(700).fill(7);
  const mockProof = proveMock(pv);
  const mclCurve = await loadMclMockCurve();
  const mock: Record<string, [number, number]> = {};
  const n = 21;
  for (
    let round = 0;
    round < 2;
    round++ // interleaved rounds: both curves see the same load
  )
    for (const [name, c] of [
      ['noble', undefined],
      ['mcl-wasm', mclCurve],
    ] as const) {
      useMockCurve(c);
      const prove = timeIt(n, () => proveMock(pv));
      const verify = timeIt(n, () => verifySpellProof({ version: 15, publicValues: pv, proof: mockProof, mock: true }));
      const prev = mock[name];
      mock[name] = prev ? [Math.min(prev[0], prove), Math.min(prev[1], verify)] : [prove, verify];
    }
  useMockCurve(undefined);
  const [np, nv] = mock.noble!;
  const [mp, mv] = mock['mcl-wasm']!;
  console.log(
    `mock proof generation (BLS12-381): mcl-wasm median ${mp.toFixed(1)} ms vs noble (baseline) ${np.toFixed(1)} ms — ${(np / mp).toFixed(1)}× (n=${n}, better of 2 interleaved rounds; load avg ${loadavg()[0]!.toFixed(1)}; target ≤ 8 ms)`,
  );
  console.log(
    `mock proof verification (strict pairing): mcl-wasm median ${mv.toFixed(1)} ms vs noble (baseline) ${nv.toFixed(1)} ms — ${(nv / mv).toFixed(1)}× (n=${n}; target ≤ 8 ms)`,
  );
  if (!hasShared) return console.log('skipped real-proof figures: test vectors not found (CHARMS_SHARED_DIR)');
  const vectors: Args[] = readSharedJson<{ version: number; public_values_hex: string; proof_hex: string }[]>('vectors', 'groth16-real-btc.json').map((v) => ({
    version: Number(v.version),
    publicValues: fromHex(v.public_values_hex),
    proof: fromHex(v.proof_hex),
    mock: false,
  }));
  const warm: Record<string, number> = {};
  for (const backend of ['noble', 'mcl-wasm'] as const) {
    const t0 = performance.now();
    await initPairingBackend(backend);
    prepareProofKeys();
    const init = performance.now() - t0;
    const figures = vectors.map((a) => {
      const ms = timeIt(backend === 'noble' ? 15 : 41, () => verifySpellProof(a));
      warm[`${backend}:${a.version}`] = ms;
      return `v${a.version} ${ms.toFixed(2)} ms`;
    });
    console.log(`real proof verification, ${backend} (warm, keys prepared; init+prepare ${init.toFixed(0)} ms): median ${figures.join(', ')}`);
  }
  const ratios = vectors.map((a) => `v${a.version} ${(warm[`noble:${a.version}`]! / warm[`mcl-wasm:${a.version}`]!).toFixed(1)}×`);
  console.log(`speed-up of mcl-wasm over noble: ${ratios.join(', ')}`);
  await initPairingBackend('noble'); // leave the process default as it was
  const v12 = vectors.find((a) => a.version === 12) ?? vectors[0]!;
  for (const backend of ['noble', 'mcl-wasm'] as const) {
    const runs = [0, 1, 2].map(() => firstCall(v12, backend));
    console.log(
      `first verification in a fresh process, ${backend} (import + init + parse keys + verify v${v12.version}): median ${median(runs).toFixed(0)} ms`,
    );
  }
}
