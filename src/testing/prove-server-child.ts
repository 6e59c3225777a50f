/**
 * Test helper process: a prove server sharing a Redis cache, whose prove function counts its
 * invocations in Redis (INCR) and takes a while, so concurrent requests overlap.
 * argv: <redisUrl> <counterKey> <delayMs> <leaseMs | "default">; prints the port on stdout.
 */
import { Redis } from 'ioredis';
import { RedisCache } from '../infra/cache.js';
import { startProveServer } from '../prove-server/server.js';

const [url, counter, delay, lease] = process.argv.slice(2) as [string, string, string, string];
const client = new Redis(url, { commandTimeout: 1000 });
client.on('error', () => {});
// one secret for every child: they share each other's results (CACHE_SECRET in a deployment)
const secret = process.env.CACHE_SECRET ?? 'server-child test secret';
const cache = new RedisCache(url, lease === 'default' ? { secret } : { leaseMs: Number(lease), secret });
const server = await startProveServer({
  host: '127.0.0.1',
  port: 0,
  cache,
  ready: () => cache.ready(),
  prove: async ({ body }) => {
    await client.incr(counter).catch(() => {});
    await new Promise((r) => setTimeout(r, Number(delay)));
    return new TextEncoder().encode(`[{"bitcoin":"${Buffer.from(body).toString('hex').slice(0, 16)}"}]`);
  },
});
// connected (or known down) before the first request
await cache.ready();
await client.ping().catch(() => {});
process.stdout.write(`${server.port}\n`);
process.on('SIGTERM', () => process.exit(0));
