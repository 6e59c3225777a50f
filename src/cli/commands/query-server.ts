import type { Run } from '../define.js';
import type { queryServerOptions } from '../options.js';
import { serve } from '../serve.js';
import { loadSettings } from '../../settings/settings.js';
import { startQueryServer } from '../../query/service.js';
import { sourceFromConfig } from '../../sources/tx-sources.js';

/**
 * Starts the spell-query service and runs until SIGINT/SIGTERM. Transactions come from
 * `--esplora-url`/ESPLORA_URL or `--rpc-url`/BITCOIN_RPC_URL (+ cookie or user/password).
 */
const run: Run<typeof queryServerOptions> = async ({ opts }, ctx) => {
  const settings = loadSettings(ctx.env, {
    mock: opts.mock,
    mockFromEnv: false, // mock spells are accepted with --mock only
    esploraUrl: opts['esplora-url'],
    rpcUrl: opts['rpc-url'],
    rpcCookie: opts['rpc-cookie'],
  });
  const source = sourceFromConfig(settings.querySource);
  await serve(opts, settings, async ({ host, port, log, cache, metrics }) => {
    const server = await startQueryServer({ host, port, source, cache, mock: settings.mock, log, limits: settings.limits, metrics });
    return {
      server,
      banner: `Spell-query service running on ${host}:${server.port}`,
      fields: { source: source?.name ?? 'none (PUT only)', mock: settings.mock },
    };
  });
};
export default run;
