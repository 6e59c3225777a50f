/**
 * The charms index following a node (issue 22 targets), over the fake Bitcoin Core on loopback
 * (JSON-RPC, REST blocks, ZMQ): the initial sync of blocks without spells one block at a time and
 * pipelined (`--fetch-ahead`, `--commit-blocks`); the latency from the node's ZMQ `hashblock` to
 * the block committed (target ≤ 50 ms); and the SQLite index's size per million charm outputs.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SpellCheck } from '../indexer/block-write.js';
import { Follower } from '../indexer/follower.js';
import { openIndexStore } from '../indexer/open.js';
import { betterSqliteModule } from '../indexer/sqlite-driver.js';
import { startIndexService } from '../indexer/service.js';
import type { BlockWrite, CharmOutputWrite, IndexWriter, InputWrite } from '../indexer/store.js';
import { blockSourceFromConfig } from '../sources/chain-sources.js';
import { FakeBitcoind } from '../testing/fake-bitcoind.js';
import { plainTx } from '../testing/memory-chain.js';
import { median } from './measure.js';
import { BITCOIN_NETWORKS } from '../model/network.js';

const P2TR = (i: number) => Uint8Array.from([0x51, 0x20, ...new Array(28).fill(7), i >>> 24, (i >>> 16) & 0xff, (i >>> 8) & 0xff, i & 0xff]);

let salt = 0;
/** `n` plain transactions (two inputs, two outputs), none of which carries a spell. */
const plainTxs = (n: number): Uint8Array[] =>
  Array.from({ length: n }, () => {
    const i = ++salt;
    return plainTx(
      [
        { txid: i.toString(16).padStart(64, '0'), vout: 0 },
        { txid: i.toString(16).padStart(64, 'f'), vout: 1 },
      ],
      [
        { script: P2TR(i), sats: 1000n },
        { script: P2TR(i + 1), sats: BigInt(i) },
      ],
    );
  });

const noSpells: SpellCheck = () => {
  throw new Error('no transaction here may carry a spell');
};

const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;

/** Wraps the store so that `onCommit(height)` runs when a block's transaction has committed. */
function onCommit(store: IndexWriter, f: (height: number) => void): void {
  const apply = store.applyBlocks.bind(store);
  store.applyBlocks = async (bs: BlockWrite[]) => {
    await apply(bs);
    for (const b of bs) f(b.height);
  };
}

async function initialSync(dir: string): Promise<void> {
  const fake = await FakeBitcoind.start();
  try {
    const blocks = 40;
    const perBlock = 1500;
    for (let h = 0; h < blocks; h++) fake.mine(plainTxs(perBlock));
    for (const [name, fetchAhead, commitBlocks] of [
      ['one block at a time', 1, 1],
      ['pipelined (--fetch-ahead 4 --commit-blocks 8)', 4, 8],
    ] as const) {
      const store = await openIndexStore(join(dir, `sync-${fetchAhead}.sqlite`), { mode: 'writer', network: 'regtest', mock: false, startHeight: 1 });
      const source = blockSourceFromConfig({ rpcUrl: fake.rpcUrl, rpcCookie: fake.cookieFile }, { network: BITCOIN_NETWORKS.regtest })!;
      const f = new Follower(store, source, { startHeight: 1, check: noSpells, fetchAhead, commitBlocks });
      const t0 = performance.now();
      await f.syncOnce();
      const s = (performance.now() - t0) / 1000;
      if (f.status.error) throw new Error(f.status.error.message);
      await store.close();
      console.log(
        `index: initial sync over JSON-RPC/REST, ${blocks} blocks of ${perBlock + 1} transactions without spells, ${name}: ${s.toFixed(2)} s, ${Math.round((blocks * (perBlock + 1)) / s)} tx/s (target >= 50 000 tx/s)`,
      );
    }
  } finally {
    await fake.stop();
  }
}

async function zmqLatency(dir: string): Promise<void> {
  const fake = await FakeBitcoind.start({ zmq: true });
  const store = await openIndexStore(join(dir, 'zmq.sqlite'), { mode: 'writer', network: 'regtest', mock: false, startHeight: 1 });
  const waiting = new Map<number, (t: number) => void>();
  onCommit(store, (h) => waiting.get(h)?.(performance.now()));
  const svc = await startIndexService({
    store,
    source: blockSourceFromConfig({ rpcUrl: fake.rpcUrl, rpcCookie: fake.cookieFile }, { network: BITCOIN_NETWORKS.regtest }),
    apiOnly: false,
    mock: false,
    network: 'regtest',
    startHeight: 1,
    pollMs: 600_000, // only the ZMQ notification wakes the follower
    version: 'bench',
    host: '127.0.0.1',
    port: 0,
    zmqUrl: fake.zmqUrl,
  });
  try {
    await fake.zmqSubscribed('hashblock');
    const rounds = 40;
    const perBlock = 300;
    const ms: number[] = [];
    for (let r = 0; r < rounds + 3; r++) {
      const txs = plainTxs(perBlock);
      const committed = new Promise<number>((resolve, reject) => {
        const guard = setTimeout(() => reject(new Error('no commit within 10 s of the announcement')), 10_000);
        waiting.set(fake.height + 1, (t) => (clearTimeout(guard), resolve(t)));
      });
      const mined = fake.mine(txs); // builds the block, then publishes hashblock
      const announced = performance.now();
      const at = await committed;
      waiting.delete(mined.height);
      if (r >= 3) ms.push(at - announced); // the first rounds warm up the JIT
    }
    console.log(
      `index: ZMQ hashblock -> block committed (blocks of ${perBlock + 1} transactions, SQLite): median ${median(ms).toFixed(1)} ms, p99 ${pct(ms, 99).toFixed(1)} ms over ${rounds} blocks (target <= 50 ms)`,
    );
  } finally {
    await svc.close();
    await fake.stop();
  }
}

async function sizePerMillion(dir: string): Promise<void> {
  const file = join(dir, 'size.sqlite');
  const store = await openIndexStore(file, { mode: 'writer', network: 'regtest', mock: false, startHeight: 1 });
  const blocks = 100;
  const txsPerBlock = 250;
  const apps = Array.from({ length: 20 }, (_, i) => `t/${i.toString(16).padStart(64, 'a')}/${i.toString(16).padStart(64, 'b')}`);
  const spell = Uint8Array.from({ length: 400 }, (_, i) => (i * 31) & 0xff); // a normalized spell's CBOR is a few hundred bytes
  let outputs = 0;
  let prev = '00'.repeat(32);
  const txid = (h: number, i: number) => `${h.toString(16).padStart(8, '0')}${i.toString(16).padStart(8, '0')}${'5a'.repeat(24)}`;
  for (let h = 1; h <= blocks; h++) {
    const hash = h.toString(16).padStart(64, '0');
    const inputs: InputWrite[] = [];
    const w: BlockWrite = { height: h, hash, prevHash: prev, time: h, spellTxs: [], outputs: [], inputs };
    for (let i = 0; i < txsPerBlock; i++) {
      const id = txid(h, i);
      w.spellTxs.push({ txid: id, txIndex: i + 1, version: 12, spell });
      // two outputs of one token each (a transfer and its change), to 50 000 different addresses
      for (let vout = 0; vout < 2; vout++) {
        const o: CharmOutputWrite = {
          txid: id,
          txIndex: i + 1,
          vout,
          app: apps[(h * 7 + i) % apps.length]!,
          amount: BigInt(1 + h * i + vout) * 1_000_000n,
          data: null,
          script: P2TR((h * txsPerBlock + i * 2 + vout) % 50_000),
          sats: 546n,
        };
        w.outputs.push(o);
        outputs++;
      }
      // and it spends an output of the block before (half the outputs end up spent)
      if (h > 1) inputs.push({ txid: id, txIndex: i + 1, vin: 0, prevTxid: txid(h - 1, i), prevVout: 0 });
    }
    await store.applyBlock(w);
    prev = hash;
  }
  await store.close(); // checkpoints the WAL into the file
  const bytes = statSync(file).size;
  const parts = tableSizes(file);
  console.log(
    `index: SQLite size ${(bytes / 1e6).toFixed(1)} MB for ${outputs} charm outputs (${blocks * txsPerBlock} spell txs, 20 apps, 50 000 addresses, half spent): ${(bytes / outputs).toFixed(0)} MB per million charm outputs (the research measured ~117)`,
  );
  if (parts)
    console.log(
      `index: of which per million charm outputs, by table with its indexes: ${parts.map(([t, b]) => `${t} ${(b / outputs).toFixed(0)} MB`).join(', ')}`,
    );
}

/** Bytes per table, its indexes included (SQLite's dbstat; undefined where it is not compiled in). */
export function tableSizes(file: string): [string, number][] | undefined {
  const Database = createRequire(import.meta.url)(betterSqliteModule()) as typeof BetterSqlite3;
  const db = new Database(file, { readonly: true });
  try {
    const rows = db
      .prepare('SELECT s.name AS name, m.tbl_name AS tbl, SUM(s.pgsize) AS bytes FROM dbstat s JOIN sqlite_master m ON m.name = s.name GROUP BY s.name')
      .all() as {
      tbl: string;
      bytes: number;
    }[];
    const by = new Map<string, number>();
    for (const r of rows) by.set(r.tbl, (by.get(r.tbl) ?? 0) + r.bytes);
    return [...by.entries()].filter(([, b]) => b > 100_000).sort((a, b) => b[1] - a[1]);
  } catch {
    return undefined;
  } finally {
    db.close();
  }
}

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'charms-bench-index-sync-'));
  try {
    await initialSync(dir);
    await zmqLatency(dir);
    await sizePerMillion(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
