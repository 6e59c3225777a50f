import type { CommandDef } from '../define.js';
import { CharmsError } from '../../errors.js';
import { optFlag, optString, serveUntilSignal } from '../io.js';
import { describeConfig, proverConfig } from '../../prover/config.js';
import { serverProveService } from '../../prover/setup.js';
import { bodyHandler } from '../../prover/service.js';
import { startProveServer } from '../../services/prove-server.js';
import { createCache } from '../../services/cache.js';
import { createLogger } from '../../services/log.js';
import { useFastProofBackend } from '../../proof/init.js';
import { configureRunner, runnerLimits, runnerLimitsFromEnv } from '../../runner/index.js';

/** Starts the proving server and runs until SIGINT/SIGTERM. */
const run: NonNullable<CommandDef['run']> = async (a, ctx) => {
  const port = Number(optString(a, 'port'));
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CharmsError('INVALID_INPUT', '--port: expected 0..65535');
  const host = optString(a, 'ip')!;
  const log = createLogger(ctx.env);
  await configureRunner(runnerLimitsFromEnv(ctx.env));
  const limits = runnerLimits();
  log.info('app runner limits', { memoryMiB: limits.memoryPages / 16, concurrency: limits.concurrency, workerHeapMb: limits.workerHeapMb });
  const proofBackend = await useFastProofBackend((m) => log.warn(m));
  log.debug('proof backend', { backend: proofBackend });
  const config = proverConfig(ctx.env, { mock: optFlag(a, 'mock') });
  const service = serverProveService(config, ctx.prover, (m) => log.info(m));
  const cache = createCache(ctx.env, log);
  const server = await startProveServer({
    host,
    port,
    prove: bodyHandler(service),
    ready: async () => (await service.ready()) && (await cache.ready()),
    cache,
    log,
  });
  if (config.mock)
    log.warn(`MOCK MODE (${optFlag(a, 'mock') ? '--mock' : 'MOCK is set in the environment'}): this server returns MOCK proofs, valid only in mock mode and never on chain`);
  log.info(`Server running on ${host}:${server.port}`, { prover: service.description, ...describeConfig(config) });
  await serveUntilSignal(log, () => server.close(), () => cache.close());
};
export default run;
