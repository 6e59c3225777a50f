/**
 * Differential fuzzing of the runner's cycles against the wasmi oracle (tools/wasmi-oracle), for
 * a machine where it is built: fresh modules from the seeded generator (seeds past the committed
 * corpus' 1–2000), each run by both; prints every difference and exits 1 if there is one.
 *   WASMI_ORACLE=/path/to/wasmi-oracle npm run fuzz:fuel -- [--from N] [--count N] [--extended]
 * (`--extended`: with floats and multi-value blocks).
 */
import { runApp, shutdownRunner } from '../../runner/index.js';
import { runOracle } from './corpus.js';
import { randomModuleWat } from './random-module.js';
import { watToWasm } from './wat.js';

async function main(): Promise<void> {
  const oracle = process.env.WASMI_ORACLE;
  if (!oracle) throw new Error('set WASMI_ORACLE to the wasmi-oracle binary (tools/wasmi-oracle/README.md)');
  const arg = (name: string, d: number): number => {
    const i = process.argv.indexOf(name);
    return i > 0 ? Number(process.argv[i + 1]) : d;
  };
  const from = arg('--from', 100_000);
  const count = arg('--count', 5000);
  const extended = process.argv.includes('--extended');
  let differ = 0;
  let compared = 0;
  for (let start = from; start < from + count; start += 500) {
    const batch: { seed: number; wasm: Uint8Array }[] = [];
    for (let seed = start; seed < Math.min(start + 500, from + count); seed++)
      batch.push({ seed, wasm: await watToWasm(`random-${seed}.wat`, randomModuleWat(seed, { extended })) });
    const expected = runOracle(
      oracle,
      batch.map((b) => ({ wasm: b.wasm })),
    );
    for (const [i, b] of batch.entries()) {
      const r = await runApp({ wasm: b.wasm, stdin: new Uint8Array(0), inThread: true });
      const e = expected[i]!;
      compared++;
      if (r.cycles !== BigInt(e.fuel) || r.ok !== (e.verdict === 'ok')) {
        differ++;
        console.log(`seed ${b.seed}: ours ${r.ok ? 'ok' : 'fail'} ${r.cycles}, wasmi ${e.verdict} ${e.fuel}`);
      }
    }
  }
  console.log(`${compared} modules (seeds ${from}..${from + count - 1}), ${differ} differ`);
  await shutdownRunner();
  process.exitCode = differ ? 1 : 0;
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : String(e));
  process.exitCode = 2;
});
