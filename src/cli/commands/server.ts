import type { CommandDef } from '../define.js';
import { optFlag } from '../io.js';
import { serve } from '../serve.js';
import { describeConfig, loadSettings, runnerSettingsOf } from '../../settings/settings.js';
import { startProveServer } from '../../prove-server/server.js';

/** Starts the proving server (the library's `startProveServer`) and runs until SIGINT/SIGTERM. */
const run: NonNullable<CommandDef['run']> = async (a, ctx) => {
  const settings = loadSettings(ctx.env, { mock: optFlag(a, 'mock') });
  const runner = runnerSettingsOf(ctx.env);
  await serve(a, settings, async ({ host, port, log, cache, stopping, metrics }) => {
    const server = await startProveServer({ host, port, settings, prover: ctx.prover, runner, cache, log, stopping, metrics });
    if (settings.mock)
      log.warn(
        `MOCK MODE (${optFlag(a, 'mock') ? '--mock' : 'MOCK is set in the environment'}): this server returns MOCK proofs, valid only in mock mode and never on chain`,
      );
    return { server, banner: `Server running on ${host}:${server.port}`, fields: { prover: server.description, ...describeConfig(settings.prover) } };
  });
};
export default run;
