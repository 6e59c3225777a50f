/**
 * The long fuzz run: `npm run fuzz -- --iterations N [--seed S] [--target NAME] [--wasm FILE]…`.
 * Runs N mutants per target (default 125 000, i.e. 1.125 M in total over the nine targets), prints
 * per-target counts and every failure (a non-CharmsError), exits 1 if any failure was found.
 */
import { readFileSync } from 'node:fs';
import { describeFailures, fuzz } from './harness.js';
import { fuzzTargets } from './targets.js';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  let iterations = 125_000;
  let seed = 1;
  const only: string[] = [];
  const wasm: Uint8Array[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const next = (): string => {
      const v = args[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--iterations') iterations = Number(next());
    else if (a === '--seed') seed = Number(next());
    else if (a === '--target') only.push(next());
    else if (a === '--wasm') wasm.push(new Uint8Array(readFileSync(next())));
    else throw new Error(`unknown argument ${a} (use --iterations N, --seed S, --target NAME, --wasm FILE)`);
  }
  if (!Number.isSafeInteger(iterations) || iterations <= 0) throw new Error('--iterations must be a positive integer');
  let total = 0;
  let failures = 0;
  const t0 = performance.now();
  for (const target of fuzzTargets({ wasm })) {
    if (only.length && !only.includes(target.name)) continue;
    const s = await fuzz(target, { iterations, seed, maxFailures: 20 });
    total += s.iterations;
    failures += s.failures.length;
    const refused = Object.entries(s.refused)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    console.log(
      `${s.target}: ${s.iterations} inputs in ${(s.ms / 1000).toFixed(1)} s, accepted ${s.accepted}, refused ${refused || '0'}, failures ${s.failures.length}`,
    );
    if (s.failures.length) console.log(describeFailures(s));
  }
  console.log(`total: ${total} inputs, ${failures} failures, ${((performance.now() - t0) / 1000).toFixed(1)} s (seed ${seed})`);
  const { shutdownRunner } = await import('../../runner/index.js');
  await shutdownRunner();
  process.exitCode = failures ? 1 : 0;
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : String(e));
  process.exitCode = 2;
});
