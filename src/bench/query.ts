/**
 * Spell-query service on loopback, transactions from an Esplora fixture (20 ms per answer):
 * - 500 concurrent GETs of one uncached txid: how many upstream calls (expected 1);
 * - the cold path: one GET each for distinct real spell transactions (fetch + verify);
 * - cached GET /spells/<txid> at concurrency 64 (HTTP/1.1 keep-alive): requests/s, p50, p99;
 * - the same with If-None-Match (304).
 */
import http from 'node:http';
import { readdirSync } from 'node:fs';
import { startQueryServer } from '../query/service.js';
import { EsploraSource } from '../sources/tx-sources.js';
import { hasShared, readSharedText, sharedPath } from '../testing/shared.js';
import { Worker } from 'node:worker_threads';
import { load } from './load.js';

type LoadOptions = Parameters<typeof load>[0];
type LoadResult = Awaited<ReturnType<typeof load>>;

/** The load loop in a worker thread, so the client does not share the server's event loop. */
export function loadInWorker(o: LoadOptions): Promise<LoadResult> {
  const code = `const { parentPort, workerData } = require('node:worker_threads');
import(workerData.url).then((m) => m.load(workerData.o)).then((r) => parentPort.postMessage(r));`;
  const w = new Worker(code, { eval: true, workerData: { url: new URL('./load.js', import.meta.url).href, o } });
  return new Promise((resolve, reject) => {
    w.once('message', (r: LoadResult) => void w.terminate().then(() => resolve(r)));
    w.once('error', reject);
  });
}

const V12 = '283559062cb6b651eb4a5f557ba4f67efa9aae55ba2278d4f10f35cbefaa84a5';

function get(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; etag: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, etag: String(res.headers.etag) }));
      })
      .on('error', reject);
  });
}

export async function run(): Promise<void> {
  if (!hasShared) return console.log('skipped: the shared vectors directory was not found (CHARMS_SHARED_DIR)');
  const txs = new Map<string, string>();
  for (const f of readdirSync(sharedPath('vectors', 'chain')).filter((f) => f.endsWith('.bitcoin.hex') && !f.startsWith('neg')))
    txs.set(f.slice(0, 64), readSharedText('vectors', 'chain', f).trim());
  const calls = new Map<string, number>();
  const upstream = http.createServer((q, s) => {
    const id = /\/tx\/([0-9a-f]{64})\/hex$/.exec(q.url ?? '')?.[1] ?? '';
    calls.set(id, (calls.get(id) ?? 0) + 1);
    setTimeout(() => (txs.has(id) ? s.end(txs.get(id)) : s.writeHead(404).end()), 20);
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const server = await startQueryServer({
    host: '127.0.0.1',
    port: 0,
    source: new EsploraSource(`http://127.0.0.1:${(upstream.address() as { port: number }).port}`),
  });
  try {
    const path = `/spells/${V12}`;
    const burst = await load({ port: server.port, method: 'GET', path, concurrency: 500, requests: 500 });
    console.log(`500 concurrent GETs of one uncached txid: ${calls.get(V12) ?? 0} upstream call(s), ${burst.errors} errors, p99 ${burst.p99.toFixed(1)} ms`);

    const cold: number[] = [];
    for (const id of txs.keys()) {
      if (id === V12) continue;
      const t0 = performance.now();
      await get(server.port, `/spells/${id}`);
      cold.push(performance.now() - t0);
    }
    cold.sort((a, b) => a - b);
    console.log(
      `uncached GET (20 ms source + parse + verify), ${cold.length} real txs: median ${cold[cold.length >> 1]!.toFixed(1)} ms, max ${cold.at(-1)!.toFixed(1)} ms`,
    );

    await loadInWorker({ port: server.port, method: 'GET', path, concurrency: 64, requests: 5000 }); // warm-up
    const r = await loadInWorker({ port: server.port, method: 'GET', path, concurrency: 64, requests: 50_000 });
    console.log(
      `cached GET /spells/<txid>, c=64, HTTP/1.1 keep-alive, client in a worker thread: ${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, errors ${r.errors}`,
    );
    const { etag } = await get(server.port, path);
    const n = await loadInWorker({ port: server.port, method: 'GET', path, headers: { 'if-none-match': etag }, concurrency: 64, requests: 50_000 });
    console.log(`conditional GET (304), c=64: ${n.rps.toFixed(0)} req/s, p50 ${n.p50.toFixed(2)} ms, p99 ${n.p99.toFixed(2)} ms, errors ${n.errors}`);
    console.log(`upstream calls in total: ${[...calls.values()].reduce((a, b) => a + b, 0)} for ${calls.size} distinct txids`);
  } finally {
    await server.close();
    await new Promise<void>((r) => upstream.close(() => r()));
  }
}
