/**
 * Regenerates vectors/runner-fuel/corpus.json from the hand-written cases, the seeded random
 * modules and the AssemblyScript template app, with expected fuel from the wasmi oracle:
 *   WASMI_ORACLE=/path/to/wasmi-oracle node dist/testing/fuel-corpus/make-vectors.js [--random N] [--extended N]
 */
import { writeFileSync } from 'node:fs';
import { toHex, fromHex } from '../../util/bytes.js';
import { templateApp } from '../fixtures.js';
import { caseWat, handCases } from './cases.js';
import { corpusPath, runOracle, type CorpusCase } from './corpus.js';
import { randomModuleWat } from './random-module.js';
import { watToWasm } from './wat.js';
import { TOAD_NFT_MINT_STDIN } from './stdin-vectors.js';
import { appScenarios, APP_BINARIES } from './app-scenarios.js';
import { appsDir, appsVectorsPath, readAppBinary, type AppFuelFact } from './apps-dir.js';
import { existsSync } from 'node:fs';

async function main(): Promise<void> {
  const oracle = process.env.WASMI_ORACLE;
  if (!oracle) throw new Error('set WASMI_ORACLE to the wasmi-oracle binary (tools/wasmi-oracle/README.md)');
  const ri = process.argv.indexOf('--random');
  const nRandom = ri > 0 ? Number(process.argv[ri + 1]) : 2000;
  const items: { name: string; wasm: Uint8Array; stdin?: Uint8Array; budget?: number }[] = [];
  for (const c of handCases()) items.push({ name: c.name, wasm: await watToWasm(`${c.name}.wat`, caseWat(c)), ...(c.fuel ? { budget: c.fuel } : {}) });
  let skipped = 0;
  for (let seed = 1; seed <= nRandom; seed++) {
    try {
      items.push({ name: `random-${seed}`, wasm: await watToWasm(`random-${seed}.wat`, randomModuleWat(seed)) });
    } catch {
      skipped++;
    }
  }
  const ei = process.argv.indexOf('--extended');
  const nExtended = ei > 0 ? Number(process.argv[ei + 1]) : 500;
  for (let seed = 1; seed <= nExtended; seed++) {
    try {
      items.push({ name: `random-ext-${seed}`, wasm: await watToWasm(`random-ext-${seed}.wat`, randomModuleWat(seed, { extended: true })) });
    } catch {
      skipped++;
    }
  }
  const app = await templateApp();
  for (const [name, stdin] of [
    ['template-as-empty-stdin', new Uint8Array(0)],
    ['template-as-toad-nft-mint-payload', fromHex(TOAD_NFT_MINT_STDIN)],
  ] as const)
    items.push({ name, wasm: app.wasm, stdin });
  const results = runOracle(oracle, items);
  const cases: CorpusCase[] = items.map((it, i) => ({
    name: it.name,
    wasm: toHex(it.wasm),
    ...(it.stdin?.length ? { stdin: toHex(it.stdin) } : {}),
    ...(it.budget ? { budget: it.budget } : {}),
    expect: results[i]!,
  }));
  const corpus = {
    oracle:
      'wasmi 1.1.0 (wasmi-labs/wasmi v1.1.0, wasmparser 0.239.0) in tools/wasmi-oracle, Config::default + consume_fuel + CompilationMode::Lazy, features std + prefer-btree-collections',
    generated: `node dist/testing/fuel-corpus/make-vectors.js --random ${nRandom} --extended ${nExtended} (${skipped} random seeds skipped: invalid WAT)`,
    cases,
  };
  writeFileSync(corpusPath(), `${JSON.stringify(corpus, null, 0).replaceAll('},{"name"', '},\n{"name"')}\n`);
  const by = new Map<string, number>();
  for (const r of results) by.set(r.verdict, (by.get(r.verdict) ?? 0) + 1);
  if (existsSync(appsDir())) {
    const scenarios = appScenarios();
    const res = runOracle(
      oracle,
      scenarios.map((sc) => ({ wasm: readAppBinary(sc.binary), stdin: sc.stdin })),
    );
    const facts: AppFuelFact[] = scenarios.map((sc, i) => ({
      name: sc.name,
      binary: sc.binary,
      sha256: APP_BINARIES[sc.binary],
      fuel: res[i]!.fuel,
      verdict: res[i]!.verdict,
    }));
    writeFileSync(appsVectorsPath(), `${JSON.stringify({ oracle: corpus.oracle, scenarios: facts }, null, 1)}\n`);
    console.log(`${facts.length} published-app scenarios recorded from ${appsDir()}`);
  }
  console.log(`${cases.length} cases (${skipped} random seeds skipped): ${[...by].map(([k, v]) => `${k} ${v}`).join(', ')}`);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
  process.exitCode = 1;
});
