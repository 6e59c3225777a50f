/** Proving server: requests/s and p50/p99 at concurrency 16 (trivial prove function, and cached real mock proofs). */
import { startProveServer } from '../prove-server/server.js';
import { MemoryCache } from '../infra/cache.js';
import { load } from './load.js';

export async function run(): Promise<void> {
  const server = await startProveServer({ host: '127.0.0.1', port: 0, ready: async () => true, prove: async ({ body }) => body });
  await load({ port: server.port, method: 'POST', path: '/spells/prove', body: '{"x":1}', concurrency: 16, requests: 500 });
  const r = await load({ port: server.port, method: 'POST', path: '/spells/prove', body: '{"x":1}', concurrency: 16, requests: 5000 });
  console.log(`POST /spells/prove (echo prover), c=16: ${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, errors ${r.errors}`);
  await server.close();
  const cached = await startProveServer({ host: '127.0.0.1', port: 0, cache: new MemoryCache(), ready: async () => true, prove: async ({ body }) => body });
  const c = await load({ port: cached.port, method: 'POST', path: '/spells/prove', body: '{"x":1}', concurrency: 16, requests: 5000 });
  console.log(`POST /spells/prove (cache hits), c=16: ${c.rps.toFixed(0)} req/s, p50 ${c.p50.toFixed(2)} ms, p99 ${c.p99.toFixed(2)} ms`);
  await cached.close();
}
