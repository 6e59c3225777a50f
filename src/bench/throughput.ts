/**
 * Proving throughput (#15 target 3): a `charms server --mock` child proving distinct requests of a
 * 2-app spell (two contract runs, one mock proof, the tx build each) from 16 concurrent clients;
 * req/s, p50/p99, and `GET /ready` latency measured while it is busy. `npm run bench -- throughput`.
 */
import { nftFixture } from './nft-fixture.js';
import http from 'node:http';
import { loadavg } from 'node:os';
import { hasShared } from '../testing/shared.js';
import { bitcoinProveRequest } from '../testing/fixtures.js';
import { startCliServer } from '../testing/cli.js';
import { proveRequestToValue } from '../model/request.js';
import { toJsonCompact } from '../codec/json.js';
import { median } from './measure.js';

function post(agent: http.Agent, port: number, path: string, body?: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request(
      { host: '127.0.0.1', port, method: body === undefined ? 'GET' : 'POST', path, agent, headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

export async function run(): Promise<void> {
  if (!hasShared) return console.log('skipped: test vectors not found (CHARMS_SHARED_DIR)');
  const { f, bins, mint, spendYaml } = await nftFixture();
  const N = 400;
  // scenario B spends K mints, each its own prev tx (a verification the server has not done)
  const K = 200;
  const mints = await mint(K);
  const spendOf = (k: number, feeRate: number): string =>
    toJsonCompact(proveRequestToValue({ ...bitcoinProveRequest(f, spendYaml(mints[k]!, k), [mints[k]!, f.hex], { binaries: bins }), fee_rate: feeRate }, true));
  // A: distinct requests (a different fee rate each, so no answer comes from the cache) spending
  // the same prev tx; B: each request spends its own prev tx (its spell verified afresh)
  const scenarios: [string, string[]][] = [
    ['same prev tx', Array.from({ length: N }, (_, i) => spendOf(0, 2 + (i + 1) / 1000))],
    ['each its own prev tx', Array.from({ length: K }, (_, k) => spendOf(k, 3))],
  ];
  const warmup = Array.from({ length: 32 }, (_, i) => spendOf(0, 1 + (i + 1) / 1000));
  // BENCH_SERVER_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) profiles the server;
  // BENCH_BASELINE_CHARMS=<path of another build's dist/cli/charms.js> runs the same load against
  // it first, in the same run (the baseline of the ratio)
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const baseline = process.env.BENCH_BASELINE_CHARMS;
  const rates: Record<string, number[]> = {};
  for (const [label, bin] of baseline
    ? [
        ['baseline', baseline],
        ['this build', undefined],
      ]
    : [['this build', undefined]]) {
    const { child, port } = await startCliServer(['server', '--mock', '--ip', '127.0.0.1', '--port', '0'], process.env, nodeArgs, ...(bin ? [bin] : []));
    try {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 17 });
      for (const body of warmup) await post(agent, port, '/spells/prove', body);
      for (const [name, bodies] of scenarios) {
        const lat: number[] = [];
        const ready: number[] = [];
        let next = 0;
        let errors = 0;
        let busy = true;
        const t0 = performance.now();
        const client = async () => {
          while (next < bodies.length) {
            const body = bodies[next++]!;
            const s = performance.now();
            if ((await post(agent, port, '/spells/prove', body)) !== 200) errors++;
            lat.push(performance.now() - s);
          }
        };
        const readyProbe = async () => {
          const a = new http.Agent({ keepAlive: true, maxSockets: 1 });
          while (busy) {
            const s = performance.now();
            await post(a, port, '/ready');
            ready.push(performance.now() - s);
            await new Promise((r) => setTimeout(r, 20));
          }
          a.destroy();
        };
        const probe = readyProbe();
        await Promise.all(Array.from({ length: 16 }, client));
        const secs = (performance.now() - t0) / 1000;
        busy = false;
        await probe;
        lat.sort((a, b) => a - b);
        ready.sort((a, b) => a - b);
        const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
        (rates[name] ??= []).push(bodies.length / secs);
        console.log(
          `[${label}] charms server --mock, ${bodies.length} distinct 2-app prove requests (${name}) at c=16: ${(bodies.length / secs).toFixed(1)} proofs/s (target ≥ 100), p50 ${median(lat).toFixed(0)} ms, p99 ${pct(lat, 0.99).toFixed(0)} ms, errors ${errors}; ` +
            `GET /ready while busy: p50 ${median(ready).toFixed(1)} ms, p99 ${pct(ready, 0.99).toFixed(1)} ms (n=${ready.length}); load avg ${loadavg()[0]!.toFixed(1)}`,
        );
      }
      agent.destroy();
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  }
  if (baseline) for (const [name, [b, t]] of Object.entries(rates)) console.log(`${name}: ${(t! / b!).toFixed(2)}× the baseline's proofs/s`);
}
