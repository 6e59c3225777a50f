/** `spell prove --mock` wall time for a 2-app spell (NFT supply update + token mint), and mock proof time. */
import { nftFixture } from './nft-fixture.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, nodeWall, timeMedian } from './measure.js';
import { hasShared } from '../testing/shared.js';
import { proveMock } from '../groth16/mock.js';
import { prepareApp } from '../runner/index.js';
import { templateApp } from '../testing/fixtures.js';
import { bigTemplateApp } from './big-app.js';

export async function run(): Promise<void> {
  const pv = new Uint8Array(700).fill(7);
  console.log(`mock Groth16 proof (BLS12-381): median ${timeMedian(10, () => proveMock(pv), 1).toFixed(1)} ms`);
  if (!hasShared) return console.log('skipped the rest: test vectors not found (CHARMS_SHARED_DIR)');
  const bin = fileURLToPath(new URL('../cli/charms.js', import.meta.url));
  // where the time goes, measured in this run: Node's start, the CLI's start
  const nodeStart = median([0, 1, 2, 3, 4].map(() => nodeWall(['-e', ''])));
  const cliStart = median([0, 1, 2, 3, 4].map(() => nodeWall([bin, '--version'])));
  console.log(`node start ${nodeStart.toFixed(0)} ms, CLI start (charms --version) +${(cliStart - nodeStart).toFixed(0)} ms (medians of 5)`);
  await proveWall(bin, 'the template app', templateApp);
  await proveWall(bin, 'the template app padded to toad-token size', () => bigTemplateApp());
}

/** `spell prove --mock` of the 2-app spend of an NFT of this app, in this build's ways and the baseline's. */
async function proveWall(bin: string, what: string, appOf: typeof templateApp): Promise<void> {
  const { app, f, mint, spendYaml } = await nftFixture(appOf);
  const [tx1] = await mint(1);
  const dir = mkdtempSync(join(tmpdir(), 'bench-prove-'));
  writeFileSync(join(dir, 'spell.yaml'), spendYaml(tx1!));
  let budget = 10_000_000_000n;
  const prepare = timeMedian(5, () => prepareApp(app.wasm, budget++), 1); // a new budget each time: no cache hit
  const args = [
    bin,
    'spell',
    'prove',
    '--mock',
    '--spell',
    join(dir, 'spell.yaml'),
    '--app-bins',
    app.path,
    '--prev-txs',
    tx1!,
    '--prev-txs',
    f.hex,
    '--change-address',
    f.changeAddress,
  ];
  const cacheDir = mkdtempSync(join(tmpdir(), 'bench-app-cache-'));
  const timed = (env: NodeJS.ProcessEnv): number => nodeWall(args, env);
  // interleaved, so that machine load hits all alike
  const variants: [string, NodeJS.ProcessEnv][] = [
    ['this build (bundle + V8 code cache, contracts on the main thread, prepared modules on disk)', { SVC_APP_CACHE_DIR: cacheDir }],
    ['  the same without the prepared-module cache', { SVC_APP_CACHE_DIR: 'off' }],
    ['  the same with the contracts in worker threads', { SVC_APP_CACHE_DIR: cacheDir, APP_RUN_ISOLATION: 'worker' }],
    [
      'baseline: ES modules + worker threads (the code path before the bundle)',
      { SVC_APP_CACHE_DIR: cacheDir, APP_RUN_ISOLATION: 'worker', CHARMS_NO_BUNDLE: '1' },
    ],
  ];
  const times = variants.map(() => [] as number[]);
  for (const [, env] of variants) timed(env); // fills the caches (prepared modules, code cache)
  const n = 15;
  for (let i = 0; i < n; i++) variants.forEach(([, env], j) => times[j]!.push(timed(env)));
  const base = median(times[variants.length - 1]!);
  console.log(
    `charms spell prove --mock, 2-app spell of ${what} (${(app.wasm.length / 1024).toFixed(0)} KiB; preparing it in process: ${prepare.toFixed(1)} ms), ` +
      `2 contract runs + prerequisite mock-spell check + mock proof + tx build, wall incl. Node start (timed by bash), medians of ${n} ` +
      `(target ≤ 200 ms; recorded for the template app: 520 ms before session 4, 354 ms after it):`,
  );
  variants.forEach(([name], j) => {
    const m = median(times[j]!);
    console.log(`  ${m.toFixed(0).padStart(4)} ms  ${(base / m).toFixed(2)}×  ${name}`);
  });
  console.log(`  (load avg ${loadavg()[0]!.toFixed(1)})`);
}
