/**
 * Test helper process: a prove server sharing a Redis cache, whose prove function counts its
 * invocations in Redis (INCR) and takes a while, so concurrent requests overlap.
 * argv: <redisUrl> <counterKey> <delayMs> <lockTtlMs>; prints the port on stdout.
 */
import { RedisCache } from './cache.js';
import { RedisClient } from './redis.js';
import { startProveServer } from './prove-server.js';

const [url, counter, delay, lockTtl] = process.argv.slice(2) as [string, string, string, string];
const client = new RedisClient(url);
const cache = new RedisCache(url, { lockTtlMs: Number(lockTtl) });
const server = await startProveServer({
  host: '127.0.0.1',
  port: 0,
  cache,
  ready: () => cache.ready(),
  prove: async ({ body }) => {
    await client.command('INCR', counter).catch(() => {});
    await new Promise((r) => setTimeout(r, Number(delay)));
    return new TextEncoder().encode(`[{"bitcoin":"${Buffer.from(body).toString('hex').slice(0, 16)}"}]`);
  },
});
process.stdout.write(`${server.port}\n`);
process.on('SIGTERM', () => process.exit(0));
