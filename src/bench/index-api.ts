/**
 * The charms index's API from SQLite (issue 22 target: address balances >= 10 000 req/s at
 * concurrency 64, p99 <= 10 ms): a synthetic index of 100 000 charm outputs over 20 000 scripts
 * and 50 apps, served by `startIndexService` (API only) on loopback; the load loop runs in a
 * worker thread (HTTP/1.1 keep-alive). Measures our `GET /v1/addresses/{a}/balances` and the
 * explorer-compatible `GET /v1/wallet/charms/{a}` and `POST /v1/wallet/balance/batch` (one address).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scriptToAddress } from '../bitcoin/address.js';
import { openIndexStore } from '../indexer/open.js';
import { startIndexService } from '../indexer/service.js';
import type { CharmOutputWrite } from '../indexer/store.js';
import { loadInWorker } from './query.js';

const BLOCKS = 100;
const PER_BLOCK = 1000;
const SCRIPTS = 20_000;
const APPS = 50;

const hex32 = (n: number, salt: string) => (salt + n.toString(16)).padStart(64, '0');
const p2tr = (i: number) => {
  const s = new Uint8Array(34);
  s[0] = 0x51;
  s[1] = 0x20;
  new DataView(s.buffer).setUint32(2, i + 1);
  return s;
};

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'charms-bench-index-api-'));
  const db = join(dir, 'index.sqlite');
  const store = await openIndexStore(db, { mode: 'writer', network: 'regtest', mock: false, startHeight: 1 });
  let prev = '00'.repeat(32);
  const t0 = performance.now();
  for (let h = 1; h <= BLOCKS; h++) {
    const outputs: CharmOutputWrite[] = [];
    for (let k = 0; k < PER_BLOCK; k++) {
      const n = h * PER_BLOCK + k;
      const app = `t/${hex32(n % APPS, 'a')}/${hex32(n % APPS, 'b')}`;
      outputs.push({
        txid: hex32(n, 'c'),
        txIndex: k + 1,
        vout: 0,
        app,
        amount: BigInt(n) * 1_000_000_007n,
        data: null,
        script: p2tr((n * 7919) % SCRIPTS),
        sats: 546n + BigInt(k),
      });
    }
    const hash = hex32(h, 'd');
    await store.applyBlock({ height: h, hash, prevHash: prev, time: 1_700_000_000 + h, spellTxs: [], outputs, inputs: [] });
    prev = hash;
  }
  console.log(`index-api: ${BLOCKS * PER_BLOCK} charm outputs over ${SCRIPTS} scripts written in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const svc = await startIndexService({ store, apiOnly: true, mock: false, network: 'regtest', startHeight: 1, version: 'bench', host: '127.0.0.1', port: 0 });
  try {
    const addr = scriptToAddress(p2tr(4242), 'regtest')!;
    const cases: { name: string; method: string; path: string; body?: string }[] = [
      { name: 'GET /v1/addresses/{a}/balances', method: 'GET', path: `/v1/addresses/${addr}/balances` },
      { name: 'GET /v1/wallet/charms/{a}', method: 'GET', path: `/v1/wallet/charms/${addr}` },
      { name: 'POST /v1/wallet/balance/batch (1 address)', method: 'POST', path: '/v1/wallet/balance/batch', body: JSON.stringify({ addresses: [addr] }) },
    ];
    for (const c of cases) {
      const req = {
        port: svc.server.port,
        method: c.method,
        path: c.path,
        ...(c.body ? { body: c.body, headers: { 'content-type': 'application/json' } } : {}),
        concurrency: 64,
      };
      await loadInWorker({ ...req, requests: 2000 }); // warm-up
      const r = await loadInWorker({ ...req, requests: 20_000 });
      console.log(
        `index-api: ${c.name} at c=64: ${Math.round(r.rps)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, ${r.errors} errors (target >= 10 000 req/s, p99 <= 10 ms)`,
      );
    }
  } finally {
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
