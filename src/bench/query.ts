/** Spell-query service: cached GET requests/s and p99 at concurrency 64; one upstream call for 500 concurrent GETs. */
import http from 'node:http';
import { startQueryServer } from '../query/service.js';
import { EsploraSource } from '../query/sources.js';
import { hasShared, readSharedJson } from '../testing/shared.js';
import { load } from './load.js';

export async function run(): Promise<void> {
  if (!hasShared) return console.log('skipped: ../shared not found');
  const v = readSharedJson('vectors', 'bitcoin-v12-spell-tx-decoded.json');
  let calls = 0;
  const upstream = http.createServer((_q, s) => {
    calls++;
    setTimeout(() => s.end(v.tx_hex), 20);
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const server = await startQueryServer({ host: '127.0.0.1', port: 0, source: new EsploraSource(`http://127.0.0.1:${(upstream.address() as { port: number }).port}`) });
  const path = `/spells/${v.txid}`;
  const burst = await load({ port: server.port, method: 'GET', path, concurrency: 500, requests: 500 });
  console.log(`500 concurrent GETs of one uncached txid: ${calls} upstream call(s), errors ${burst.errors}`);
  const r = await load({ port: server.port, method: 'GET', path, concurrency: 64, requests: 20000 });
  console.log(`cached GET /spells/<txid>, c=64: ${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, errors ${r.errors}`);
  await server.close();
  upstream.close();
}
