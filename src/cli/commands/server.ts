import type { CommandDef } from '../define.js';
import { optFlag } from '../io.js';
import { serve } from '../serve.js';
import { describeConfig, loadSettings } from '../../settings/settings.js';
import { proveServiceFor } from '../../prover/setup.js';
import { ProofWorkers } from '../../prover/proof-workers.js';
import { bodyHandler } from '../../prover/service.js';
import { startProveServer } from '../../services/prove-server.js';
import { configureRunner, runnerLimits, runnerLimitsFromEnv } from '../../runner/index.js';

/** Starts the proving server and runs until SIGINT/SIGTERM. */
const run: NonNullable<CommandDef['run']> = async (a, ctx) => {
  const settings = loadSettings(ctx.env, { mock: optFlag(a, 'mock') });
  // a server always runs contracts in its worker threads (wall-clock guard, event loop free)
  await configureRunner({ ...runnerLimitsFromEnv(ctx.env), isolation: 'worker' });
  await serve(a, settings, async ({ host, port, log, cache }) => {
    const runner = runnerLimits();
    log.info('app runner limits', { memoryMiB: runner.memoryPages / 16, concurrency: runner.concurrency, workerHeapMb: runner.workerHeapMb, isolation: runner.isolation });
    // proof threads for a local prover (a relay proves nothing here)
    const local = settings.prover.mock || ctx.prover;
    const threads = local ? settings.prover.proofThreads : 0;
    const workers = threads > 0 ? new ProofWorkers(threads) : undefined;
    workers?.warm();
    log.info('proof threads', { threads });
    const service = await proveServiceFor(settings.prover, ctx.prover, (m) => log.info(m), workers);
    const server = await startProveServer({
      host,
      port,
      prove: bodyHandler(service),
      ...(service.relayId ? { relayId: service.relayId } : {}),
      ready: async () => (await service.ready()) && (await cache.ready()),
      cache,
      log,
      limits: settings.limits,
    });
    // what the threads loaded, once they have (a fallback to pure JS proves several times slower);
    // reported only once listening, so a failed start (EADDRINUSE) ends with its error
    workers?.backend().then(
      (backend) => (backend === 'mcl-wasm' ? log.info('proof thread backends', { backend }) : log.warn('proof thread backends: pure JS in part, slower', { backend })),
      (e: Error) => log.warn('proof thread backends unknown', { error: e.message }),
    );
    if (settings.mock)
      log.warn(`MOCK MODE (${optFlag(a, 'mock') ? '--mock' : 'MOCK is set in the environment'}): this server returns MOCK proofs, valid only in mock mode and never on chain`);
    return { server, banner: `Server running on ${host}:${server.port}`, fields: { prover: service.description, ...describeConfig(settings.prover) } };
  });
};
export default run;
