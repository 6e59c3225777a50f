/**
 * The charms index's API from SQLite (issue 22 target: address balances >= 10 000 req/s at
 * concurrency 64, p99 <= 10 ms): a synthetic index of 100 000 charm outputs over 20 000 scripts
 * and 50 apps, served by `startIndexService` on loopback as `charms index` serves it (the writer's
 * process: its commits move the answer cache's state) and as `--api-only` (a read-only connection:
 * SQLite's data version moves it). The load runs in a child process (http-load.ts: raw keep-alive
 * HTTP/1.1, 64 connections), so the server's figures are its own; both share the machine's cores.
 * Our `GET /v1/addresses/{a}/balances` and the explorer-compatible `GET /v1/wallet/charms/{a}`, for
 * one address (an answer-cache hit after the first request) and for a random one of the 20 000 per
 * request (also once the cache holds every address's answer), with the answer cache on and off,
 * `GET /v1/wallet/balance/{a}` for a random address, `POST /v1/wallet/balance/batch` (its entries
 * are the kept GET answers) for one and for a random address, and the one-address case through node's own
 * HTTP/1.1 server (infra/http.ts without its fast path) for a ratio within the same run.
 * "Random of 20 000" with the cache on but not warm (and with it off) is the computed path: every
 * block starts a new index state, so each address's first ask after it is read from SQLite (one
 * range of the covering index co_unspent_by_script, schema 3). The server has no mempool overlay
 * here (no node), so the balances read no outpoints, as when no pending transaction spends a
 * confirmed charm output (mempool.ts `spendsConfirmedCharms`).
 * Each line gives the server's CPU time per request (the figure the machine's load moves least)
 * and the load generator's, which shares the machine's cores.
 *
 * A last line calls the API's handler directly (no HTTP, no load generator) for random addresses
 * with the answer cache off: the computed balances answer's own CPU cost.
 *
 * `INDEX_API_BENCH_LINES=<regex>` (case-insensitive) runs only the lines whose "<serving>: <case>"
 * text matches, e.g. `INDEX_API_BENCH_LINES='cache off.*balances' npm run bench -- index-api`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { scriptToAddress } from '../bitcoin/address.js';
import { indexApiHandler } from '../indexer/api.js';
import { openIndexStore } from '../indexer/open.js';
import { startIndexService } from '../indexer/service.js';
import type { CharmOutputWrite } from '../indexer/store.js';
import { httpLoadInChild, type LoadRequest } from './http-load.js';
import { BITCOIN_NETWORKS } from '../model/network.js';

const BLOCKS = 100;
const PER_BLOCK = 1000;
const SCRIPTS = 20_000;
const APPS = 50;
/** Measured requests per case, after 2 000 to warm the server up and `WARMUP` more in the measuring process. */
const REQUESTS = 20_000;
const WARMUP = 2_000;

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
  await store.close();
  const addr = (i: number) => scriptToAddress(p2tr(i), BITCOIN_NETWORKS.regtest)!;
  const hot = addr(4242);
  const all = Array.from({ length: SCRIPTS }, (_, i) => addr(i));
  const get = (path: (a: string) => string, addrs: string[]): LoadRequest[] => addrs.map((a) => ({ method: 'GET', path: path(a) }));
  const balances = (a: string) => `/v1/addresses/${a}/balances`;
  const charms = (a: string) => `/v1/wallet/charms/${a}`;
  const balance = (a: string) => `/v1/wallet/balance/${a}`;
  const batchOf = (a: string): LoadRequest => ({
    method: 'POST',
    path: '/v1/wallet/balance/batch',
    body: JSON.stringify({ addresses: [a] }),
    headers: { 'content-type': 'application/json' },
  });
  const batch = batchOf(hot);
  /** `warmAll`: the warm-up asks every request once (in order), so a big enough cache holds all. */
  type Case = { name: string; requests: LoadRequest[]; warmAll?: boolean };
  const runs: { serving: string; mode: 'writer' | 'reader'; cacheBytes?: number; http1?: 'node'; cases: Case[] }[] = [
    {
      serving: "as `charms index`, answer cache on, through node's HTTP/1.1 server (no fast path)",
      mode: 'writer',
      http1: 'node',
      cases: [{ name: 'GET /v1/addresses/{a}/balances, one address', requests: get(balances, [hot]) }],
    },
    {
      serving: 'as `charms index` (the writer process), answer cache on',
      mode: 'writer',
      cases: [
        { name: 'GET /v1/addresses/{a}/balances, one address', requests: get(balances, [hot]) },
        { name: 'GET /v1/addresses/{a}/balances, random of 20 000', requests: get(balances, all) },
        { name: 'GET /v1/addresses/{a}/balances, random of 20 000, cache warm', requests: get(balances, all), warmAll: true },
        { name: 'GET /v1/wallet/charms/{a}, one address', requests: get(charms, [hot]) },
        { name: 'GET /v1/wallet/charms/{a}, random of 20 000', requests: get(charms, all) },
        { name: 'POST /v1/wallet/balance/batch (1 address, entries kept)', requests: [batch] },
        { name: 'GET /v1/wallet/balance/{a}, random of 20 000', requests: get(balance, all) },
        { name: 'POST /v1/wallet/balance/batch (1 address), random of 20 000', requests: all.map(batchOf) },
      ],
    },
    {
      serving: 'as `charms index`, answer cache off',
      mode: 'writer',
      cacheBytes: 0,
      cases: [
        { name: 'GET /v1/addresses/{a}/balances, one address', requests: get(balances, [hot]) },
        { name: 'GET /v1/addresses/{a}/balances, random of 20 000', requests: get(balances, all) },
        { name: 'GET /v1/wallet/charms/{a}, random of 20 000', requests: get(charms, all) },
        { name: 'GET /v1/wallet/balance/{a}, random of 20 000', requests: get(balance, all) },
      ],
    },
    {
      serving: 'as `charms index --api-only` (a read-only connection), answer cache on',
      mode: 'reader',
      cases: [
        { name: 'GET /v1/addresses/{a}/balances, one address', requests: get(balances, [hot]) },
        { name: 'GET /v1/addresses/{a}/balances, random of 20 000', requests: get(balances, all) },
      ],
    },
  ];
  const only = process.env.INDEX_API_BENCH_LINES ? new RegExp(process.env.INDEX_API_BENCH_LINES, 'i') : undefined;
  for (const run of runs) run.cases = run.cases.filter((c) => !only || only.test(`${run.serving}: ${c.name}`));
  try {
    for (const run of runs) {
      if (run.cases.length === 0) continue;
      const served = await openIndexStore(db, { mode: run.mode, network: 'regtest', mock: false, startHeight: 1 });
      const svc = await startIndexService({
        store: served,
        apiOnly: true,
        mock: false,
        network: 'regtest',
        startHeight: 1,
        version: 'bench',
        host: '127.0.0.1',
        port: 0,
        answerCacheBytes: run.cacheBytes,
        http1: run.http1,
      });
      console.log(`index-api: served ${run.serving}`);
      try {
        for (const c of run.cases) {
          const o = { port: svc.server.port, requests: c.requests, concurrency: 64 };
          if (c.warmAll) await httpLoadInChild({ ...o, count: c.requests.length, inOrder: true });
          else await httpLoadInChild({ ...o, count: 2000, seed: 7 }); // warm-up
          const cpu = process.cpuUsage();
          const r = await httpLoadInChild({ ...o, count: REQUESTS, seed: 11, warmup: WARMUP });
          const used = process.cpuUsage(cpu);
          console.log(
            `index-api:   ${c.name}, c=64: ${Math.round(r.rps)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, ${r.errors} errors; server CPU ${Math.round((used.user + used.system) / (REQUESTS + WARMUP))} µs/request, load generator CPU ${Math.round(r.loadCpuUsPerRequest)} µs/request (load avg ${loadavg()[0]!.toFixed(2)})`,
          );
        }
      } finally {
        await svc.close();
      }
    }
    // the computed answer's own cost, without HTTP or the load generator (the figure the machine's
    // load moves least): the index API's handler called directly, one random address after another
    const alone = 'handler alone (no HTTP, no load generator), answer cache off: GET /v1/addresses/{a}/balances, random of 20 000';
    if (!only || only.test(alone)) {
      const served = await openIndexStore(db, { mode: 'reader', network: 'regtest', mock: false, startHeight: 1 });
      try {
        const handler = indexApiHandler({ store: served, network: 'regtest', version: 'bench' });
        const reqs = all.map((_, i) => ({
          method: 'GET',
          path: balances(all[(i * 7919 + 13) % SCRIPTS]!),
          query: new URLSearchParams(),
          headers: {},
          body: async () => new Uint8Array(),
        }));
        const rounds: number[] = [];
        for (let r = 0; r < 6; r++) {
          const cpu = process.cpuUsage();
          for (const q of reqs) if ((await handler(q)).status !== 200) throw new Error(`index-api: ${q.path} failed`);
          const used = process.cpuUsage(cpu);
          rounds.push((used.user + used.system) / reqs.length);
        }
        rounds.sort((a, b) => a - b);
        console.log(
          `index-api: ${alone}: CPU ${rounds[0]!.toFixed(1)} µs/request (best of 6 rounds), median ${rounds[3]!.toFixed(1)} µs (load avg ${loadavg()[0]!.toFixed(2)})`,
        );
      } finally {
        await served.close();
      }
    }
    console.log(
      'index-api: target (issue 22) address balances >= 10 000 req/s at c=64, p99 <= 10 ms; the load runs in a child process (raw keep-alive HTTP/1.1) on the same machine',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
