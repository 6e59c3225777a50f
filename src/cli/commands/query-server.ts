import type { CommandDef } from '../define.js';
import { CharmsError } from '../../errors.js';
import { optFlag, optString, serveUntilSignal } from '../io.js';
import { startQueryServer } from '../../query/service.js';
import { sourceFromConfig } from '../../query/sources.js';
import { createCache } from '../../services/cache.js';
import { createLogger } from '../../services/log.js';
import { useFastProofBackend } from '../../proof/init.js';

/**
 * Starts the spell-query service and runs until SIGINT/SIGTERM. Transactions come from
 * `--esplora-url`/ESPLORA_URL or `--rpc-url`/BITCOIN_RPC_URL (+ cookie or user/password).
 */
const run: NonNullable<CommandDef['run']> = async (a, ctx) => {
  const port = Number(optString(a, 'port'));
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CharmsError('INVALID_INPUT', '--port: expected 0..65535');
  const host = optString(a, 'ip')!;
  const mock = optFlag(a, 'mock');
  const log = createLogger(ctx.env);
  const proofBackend = await useFastProofBackend((m) => log.warn(m), { mockProofs: mock });
  log.debug('proof backend', { backend: proofBackend });
  const source = sourceFromConfig({
    esploraUrl: optString(a, 'esplora-url') ?? ctx.env.ESPLORA_URL,
    rpcUrl: optString(a, 'rpc-url') ?? ctx.env.BITCOIN_RPC_URL,
    rpcCookie: optString(a, 'rpc-cookie') ?? ctx.env.BITCOIN_RPC_COOKIE,
    rpcUser: ctx.env.BITCOIN_RPC_USER,
    rpcPassword: ctx.env.BITCOIN_RPC_PASSWORD,
  });
  const cache = createCache(ctx.env, log);
  const server = await startQueryServer({ host, port, source, cache, mock, log });
  log.info(`Spell-query service running on ${host}:${server.port}`, { source: source?.name ?? 'none (PUT only)', mock });
  await serveUntilSignal(log, () => server.close(), () => cache.close());
};
export default run;
