import type { CommandDef } from '../define.js';
import { CharmsError } from '../../errors.js';
import { optFlag, optString } from '../io.js';
import { startQueryServer } from '../../query/service.js';
import { sourceFromEnv } from '../../query/sources.js';
import { createCache } from '../../services/cache.js';
import { createLogger } from '../../services/log.js';

/** Starts the spell-query service; transactions come from ESPLORA_URL or BITCOIN_RPC_URL. */
const run: NonNullable<CommandDef['run']> = async (a, ctx) => {
  const port = Number(optString(a, 'port'));
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CharmsError('INVALID_INPUT', '--port: expected 0..65535');
  const host = optString(a, 'ip')!;
  const log = createLogger(ctx.env);
  const source = sourceFromEnv(ctx.env);
  const cache = createCache(ctx.env, log);
  const server = await startQueryServer({ host, port, ...(source ? { source } : {}), cache, mock: optFlag(a, 'mock'), log });
  log.info(`Spell-query service running on ${host}:${server.port}`, { source: source?.name ?? 'none (PUT only)', mock: optFlag(a, 'mock') });
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await server.close();
  await cache.close();
};
export default run;
