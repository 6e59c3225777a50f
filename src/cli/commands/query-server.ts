import type { CommandDef } from '../define.js';
import { optFlag, optString } from '../io.js';
import { serve } from '../serve.js';
import { loadSettings } from '../../settings/settings.js';
import { startQueryServer } from '../../query/service.js';
import { sourceFromConfig } from '../../sources/tx-sources.js';

/**
 * Starts the spell-query service and runs until SIGINT/SIGTERM. Transactions come from
 * `--esplora-url`/ESPLORA_URL or `--rpc-url`/BITCOIN_RPC_URL (+ cookie or user/password).
 */
const run: NonNullable<CommandDef['run']> = async (a, ctx) => {
  const settings = loadSettings(ctx.env, {
    mock: optFlag(a, 'mock'),
    mockFromEnv: false, // mock spells are accepted with --mock only
    esploraUrl: optString(a, 'esplora-url'),
    rpcUrl: optString(a, 'rpc-url'),
    rpcCookie: optString(a, 'rpc-cookie'),
  });
  const source = sourceFromConfig(settings.querySource);
  await serve(a, settings, async ({ host, port, log, cache, metrics }) => {
    const server = await startQueryServer({ host, port, source, cache, mock: settings.mock, log, limits: settings.limits, metrics });
    return {
      server,
      banner: `Spell-query service running on ${host}:${server.port}`,
      fields: { source: source?.name ?? 'none (PUT only)', mock: settings.mock },
    };
  });
};
export default run;
