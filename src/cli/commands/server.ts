import type { Run } from '../define.js';
import type { serverOptions } from '../options.js';
import { serve } from '../serve.js';
import { describeConfig, loadSettings, runnerSettingsOf } from '../../settings/settings.js';
import { startProveServer } from '../../prove-server/server.js';

/** Starts the proving server (the library's `startProveServer`) and runs until SIGINT/SIGTERM. */
const run: Run<typeof serverOptions> = async ({ opts }, ctx) => {
  const settings = loadSettings(ctx.env, { mock: opts.mock });
  const runner = runnerSettingsOf(ctx.env);
  await serve(opts, settings, async ({ host, port, log, cache, stopping, metrics }) => {
    const server = await startProveServer({ host, port, settings, prover: ctx.prover, runner, cache, log, stopping, metrics });
    if (settings.mock)
      log.warnAlways(
        `MOCK MODE (${opts.mock ? '--mock' : 'MOCK is set in the environment'}): this server returns MOCK proofs, valid only in mock mode and never on chain`,
      );
    return { server, banner: `Server running on ${host}:${server.port}`, fields: { prover: server.description, ...describeConfig(settings.prover) } };
  });
};
export default run;
