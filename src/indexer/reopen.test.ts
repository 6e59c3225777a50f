/**
 * An `--api-only` SQLite reader follows its path (reopen.ts): real index files in a temporary
 * directory, written by an indexer service (the follower over the vector chain) and served by an
 * `--api-only` service whose store checks its path when the test says so (`check()`), or on its
 * timer (the last test, by a bounded poll).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, existsSync, linkSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scriptToAddress } from '../bitcoin/address.js';
import { parseTx } from '../bitcoin/tx.js';
import { h1 } from '../testing/http.js';
import { TEST_INDEX_SERVICE } from '../testing/index-fake-node.js';
import { sqlOn, TestEngines } from '../testing/index-stores.js';
import { bitcoinVectors, burnTx, vectorChain } from '../testing/index-vectors.js';
import type { MemoryChain } from '../testing/memory-chain.js';
import { repoRoot, sharedOrSkip } from '../testing/shared.js';
import { waitFor } from '../testing/wait.js';
import { charmsBin } from '../testing/cli.js';
import { openIndexStore } from './open.js';
import { fileIdAt, ReopeningStore, sameFile, walHeaderAt } from './reopen.js';
import { startIndexService, type IndexService } from './service.js';
import type { IndexWriter } from './store.js';
import { BITCOIN_NETWORKS } from '../model/network.js';

const engines = new TestEngines();
const dirs: string[] = [];
after(async () => {
  await engines.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'charms-reopen-'));
  dirs.push(d);
  return d;
};

test('a file is told by its device and inode: a hard link is the same file, a file renamed over it or re-created is another', () => {
  const d = tempDir();
  const p = join(d, 'index.sqlite');
  assert.equal(fileIdAt(p), undefined, 'no file');
  writeFileSync(p, 'a');
  const first = fileIdAt(p)!;
  assert.ok(sameFile(first, fileIdAt(p)!));
  linkSync(p, join(d, 'link'));
  assert.ok(sameFile(first, fileIdAt(join(d, 'link'))!), 'a hard link names the same file');
  writeFileSync(join(d, 'new'), 'b');
  renameSync(join(d, 'new'), p);
  assert.ok(!sameFile(first, fileIdAt(p)!), 'mv of another file over the path');
  const moved = fileIdAt(p)!;
  // held open (as a reader's connection holds its file): its inode number cannot be reused
  const held = openSync(p, 'r');
  try {
    rmSync(p);
    assert.equal(fileIdAt(p), undefined, 'deleted');
    writeFileSync(p, 'c');
    assert.ok(!sameFile(first, fileIdAt(p)!) && !sameFile(moved, fileIdAt(p)!), 'deleted and created anew');
  } finally {
    closeSync(held);
  }
});

test('walHeaderAt: the salts of a write-ahead log, new when the log starts anew; none without a whole header', () => {
  const d = tempDir();
  const wal = join(d, 'index.sqlite-wal');
  assert.equal(walHeaderAt(wal), undefined, 'no log');
  writeFileSync(wal, '');
  assert.equal(walHeaderAt(wal), undefined, 'an empty log');
  const header = Buffer.alloc(32, 7);
  writeFileSync(wal, header);
  assert.equal(walHeaderAt(wal), header.toString('hex', 12));
  header[16] = 8; // salt-1
  writeFileSync(wal, header);
  assert.equal(walHeaderAt(wal), header.toString('hex', 12));
});

/** A store answering `tip()` with its name, and data versions from `versions` (restarting at 1 like a new connection's). */
function fakeStore(name: string, log: string[]) {
  let version = 1;
  let pending: (() => void) | undefined;
  const store = {
    engine: 'sqlite',
    tip: async () => ({ height: 0, hash: name, prevHash: '', time: 0 }),
    /** A call that stays in flight until `release()`. */
    blockAt: () =>
      new Promise((resolve) => {
        pending = () => resolve({ height: 1, hash: name, prevHash: '', time: 0 });
      }),
    dataVersion: () => version,
    close: async () => void log.push(`close ${name}`),
  } as unknown as IndexWriter;
  return { store, commit: () => version++, release: () => pending?.() };
}

test('ReopeningStore: a replaced file is served at the next check; the old store closes when its calls finish; versions never repeat', async () => {
  const d = tempDir();
  const p = join(d, 'index.sqlite');
  writeFileSync(p, 'one');
  const log: string[] = [];
  const one = fakeStore('one', log);
  const two = fakeStore('two', log);
  const opens = [one.store, two.store];
  const notices: string[] = [];
  const s = await ReopeningStore.open(p, { open: async () => opens.shift()!, checkMs: 3_600_000, notice: (l) => notices.push(l) });
  try {
    assert.equal((await s.tip())?.hash, 'one');
    one.commit();
    one.commit();
    const seen = [s.dataVersion(), s.dataVersion()];
    assert.deepEqual(seen, [3, 3]);
    await s.check();
    assert.equal((await s.tip())?.hash, 'one', 'the same file: nothing changes');
    const inFlight = s.blockAt(1);
    writeFileSync(join(d, 'new'), 'two');
    renameSync(join(d, 'new'), p);
    await s.check();
    assert.equal((await s.tip())?.hash, 'two', 'new calls go to the new file');
    assert.deepEqual(log, [], 'the old store is still answering a call');
    one.release();
    assert.equal((await inFlight)?.hash, 'one');
    assert.deepEqual(log, ['close one'], 'closed once its call finished');
    // the new file's connection counts from 1 again: its versions come after every one reported
    const v = s.dataVersion() as number;
    assert.ok(v > 3, `new version ${v} above the old ones`);
    two.commit();
    assert.equal(s.dataVersion(), v + 1);
    assert.deepEqual(notices, [`${p}: a new index file is at the path; serving it`]);
  } finally {
    await s.close();
  }
  assert.deepEqual(log, ['close one', 'close two']);
});

test('ReopeningStore: a missing file is a 503 until one is back; a file that fails the checks is a 503 with the reason, tried again', async () => {
  const d = tempDir();
  const p = join(d, 'index.sqlite');
  writeFileSync(p, 'one');
  const log: string[] = [];
  const opens: (() => IndexWriter)[] = [
    () => fakeStore('one', log).store,
    () => {
      throw new Error('the index is of network testnet4, not regtest');
    },
    () => fakeStore('three', log).store,
  ];
  const notices: string[] = [];
  const s = await ReopeningStore.open(p, { open: async () => opens.shift()!(), checkMs: 3_600_000, notice: (l) => notices.push(l) });
  try {
    assert.equal(s.dataVersion(), 1);
    rmSync(p);
    for (let i = 0; i < 3; i++) {
      await s.check();
      await assert.rejects(s.tip(), (e: Error & { code?: string }) => e.code === 'UPSTREAM_UNAVAILABLE' && /the index file is gone/.test(e.message));
      assert.equal(s.dataVersion(), undefined, 'nothing is cached while nothing is served');
    }
    assert.equal(notices.length, 1, 'told once');
    writeFileSync(p, 'two');
    await s.check();
    await assert.rejects(s.tip(), /replaced by another one, which cannot be served: the index is of network testnet4/);
    await s.check();
    assert.equal((await s.tip())?.hash, 'three', 'tried again at the next check');
    assert.ok((s.dataVersion() as number) > 1);
  } finally {
    await s.close();
  }
});

// ------------------------------------------------------------------------- real index files

const READER = { mode: 'reader' as const, network: 'regtest', mock: false, startHeight: 1 };

/** An indexer service over `chain` writing `db`, synced. */
async function indexer(db: string, chain: MemoryChain, o: { network?: string; mock?: boolean } = {}): Promise<IndexService> {
  const store = await engines.sqlite().open(db, { network: o.network ?? 'regtest', mock: o.mock ?? false });
  const svc = await startIndexService({ ...TEST_INDEX_SERVICE, store, source: chain, network: o.network ?? 'regtest', mock: o.mock ?? false });
  await svc.follower?.syncOnce();
  await svc.follower?.syncOnce();
  return svc;
}

/** An `--api-only` service of `db` whose store checks its path on `check()` only (or every `checkMs`). */
async function reader(db: string, checkMs = 3_600_000) {
  const notices: string[] = [];
  const store = (await openIndexStore(db, READER, { checkMs, notice: (l) => notices.push(l) })) as ReopeningStore;
  assert.ok(store instanceof ReopeningStore);
  const svc = await startIndexService({ ...TEST_INDEX_SERVICE, store, apiOnly: true });
  return { svc, store, notices, get: async (path: string) => h1(svc.server.port, 'GET', path) };
}

function fixture() {
  const v = bitcoinVectors();
  const tokenTx = v.get('2efcde0d')!;
  const addr = scriptToAddress(parseTx(tokenTx.raw).outputs[0]!.script, BITCOIN_NETWORKS.regtest)!;
  /** Paths whose answers the answer cache keeps, and whose answers differ once the token output is burned. */
  const paths = [`/v1/addresses/${addr}/balances`, `/v1/wallet/charms/${addr}`, `/v1/outputs/${tokenTx.txid}:0`];
  const burned = (): MemoryChain => {
    const c = vectorChain(v);
    c.mine([burnTx(tokenTx.txid, 0, 9)]);
    return c;
  };
  return { v, paths, chain: () => vectorChain(v), burned };
}

async function answers(get: (p: string) => Promise<{ status: number; body: Buffer }>, paths: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) {
    const r = await get(p);
    assert.equal(r.status, 200, `${p}: ${r.body.toString()}`);
    out.push(r.body.toString());
  }
  return out;
}

const direct = (svc: IndexService) => (p: string) => h1(svc.server.port, 'GET', p);

/** Moves `file` over `db` as the docs say: the old index's side files removed first. */
function moveIn(file: string, db: string): void {
  rmSync(`${db}-wal`, { force: true });
  rmSync(`${db}-shm`, { force: true });
  renameSync(file, db);
}

async function assert503(get: (p: string) => Promise<{ status: number; body: Buffer }>, paths: string[], why: RegExp): Promise<void> {
  for (const p of ['/v1/status', ...paths]) {
    const r = await get(p);
    assert.equal(r.status, 503, `${p}: ${r.body.toString()}`);
    const body = JSON.parse(r.body.toString()) as { error: string; code: string };
    assert.equal(body.code, 'UPSTREAM_UNAVAILABLE');
    assert.match(body.error, why, p);
  }
}

test('sqlite --api-only: the index deleted and built anew (side files left) is served, never an answer of the old one', async (t) => {
  if (!sharedOrSkip(t)) return;
  const f = fixture();
  const db = join(tempDir(), 'index.sqlite');
  const w1 = await indexer(db, f.chain());
  const r = await reader(db);
  let w2: IndexService | undefined;
  try {
    const old = await answers(r.get, f.paths);
    assert.deepEqual(old, await answers(direct(w1), f.paths));
    const held = r.store.unspentAmountsNow(parseTx(f.v.get('2efcde0d')!.raw).outputs[0]!.script);
    assert.ok(held && held.length > 0, 'read at once from the old file');
    await answers(r.get, f.paths); // kept by the answer cache
    await w1.close();
    // the operator deletes the file only: the reader's connection keeps the -wal and -shm alive
    rmSync(db);
    assert.ok(existsSync(`${db}-wal`) && existsSync(`${db}-shm`));
    // a new indexer builds another chain state at the path, before the reader's next check
    w2 = await indexer(db, f.burned());
    const want = await answers(direct(w2), f.paths);
    assert.notDeepEqual(want, old, 'the new index answers otherwise');
    // the new database, writing through the side files, moved the old connection's data version
    // (its reads are no longer the old state): the path is checked at once, the first request
    // answered 503, and the ones after it by the new file (opened by that check) or 503
    const status = await r.get('/v1/status');
    assert.equal(status.status, 503, `status before the check: ${status.body.toString()}`);
    for (const [i, p] of f.paths.entries()) {
      const res = await r.get(p);
      if (res.status !== 200) assert.equal(res.status, 503, `${p} before the check: ${res.body.toString()}`);
      else assert.equal(res.body.toString(), want[i], `${p} before the check`);
    }
    await r.store.check();
    assert.deepEqual(await answers(r.get, f.paths), want);
    assert.deepEqual(await answers(r.get, f.paths), want, 'kept answers are the new ones');
    // the balances' read at once (no promise) goes to the file served, as the awaited one does
    const script = parseTx(f.v.get('2efcde0d')!.raw).outputs[0]!.script;
    assert.deepEqual(r.store.unspentAmountsNow(script), await r.store.unspentAmounts(script));
    assert.deepEqual(r.store.unspentAmountsNow(script), [], 'the token output is burned in the new file');
    assert.equal(JSON.parse((await r.get('/v1/status')).body.toString()).index.hash, JSON.parse((await direct(w2)('/v1/status')).body.toString()).index.hash);
    assert.deepEqual(await sqlOn(engines.sqlite(), db, 'PRAGMA integrity_check'), [{ integrity_check: 'ok' }], 'the new index is whole');
    assert.ok(
      r.notices.some((l) => /serving it/.test(l)),
      r.notices.join('\n'),
    );
  } finally {
    await r.svc.close();
    await w2?.close();
    await w1.close().catch(() => {});
  }
});

test('sqlite --api-only: a new file moved over the old one is served; with the old -wal still beside it, a 503 until it is removed', async (t) => {
  if (!sharedOrSkip(t)) return;
  const f = fixture();
  const d = tempDir();
  const db = join(d, 'index.sqlite');
  const built = join(d, 'built.sqlite');
  const w1 = await indexer(db, f.chain());
  const r = await reader(db);
  try {
    const old = await answers(r.get, f.paths);
    // a new index built elsewhere by an indexer that has stopped (its side files went with it)
    const w2 = await indexer(built, f.burned());
    const want = await answers(direct(w2), f.paths);
    await w2.close();
    assert.ok(!existsSync(`${built}-wal`) && !existsSync(`${built}-shm`));
    // what docs/index.md says it leaves: the database and its (unlocked) `.lock` file
    assert.deepEqual(
      readdirSync(d)
        .filter((n) => n.startsWith('built.'))
        .sort(),
      ['built.sqlite', 'built.sqlite.lock'],
    );
    assert.match(readFileSync(join(repoRoot, 'docs', 'index.md'), 'utf8'), /it leaves `new\.sqlite\.lock`/);
    await w1.close();
    // the old index's -wal is still at the path (the reader holds it): SQLite would pair it with the new file
    renameSync(built, db);
    await r.store.check();
    await assert503(r.get, f.paths, /old index's write-ahead log/);
    await r.store.check();
    await assert503(r.get, f.paths, /old index's write-ahead log/);
    rmSync(`${db}-wal`);
    rmSync(`${db}-shm`);
    await r.store.check();
    const now = await answers(r.get, f.paths);
    assert.deepEqual(now, want);
    assert.notDeepEqual(now, old);
    // and again: the procedure the docs give (side files removed, then mv) is served at once
    const w3 = await indexer(built, f.chain());
    await w3.close();
    moveIn(built, db);
    await r.store.check();
    assert.deepEqual(await answers(r.get, f.paths), old);
  } finally {
    await r.svc.close();
    await w1.close().catch(() => {});
  }
});

test('sqlite --api-only: a replacement of another network, or built with --mock, or empty, is refused (503 with why), then a good one is served', async (t) => {
  if (!sharedOrSkip(t)) return;
  const f = fixture();
  const d = tempDir();
  const db = join(d, 'index.sqlite');
  const w1 = await indexer(db, f.chain());
  const want = await answers(direct(w1), f.paths);
  await w1.close();
  const r = await reader(db);
  try {
    assert.deepEqual(await answers(r.get, f.paths), want);
    // gone for a while: 503, whatever was kept
    rmSync(db);
    for (let i = 0; i < 2; i++) {
      await r.store.check();
      await assert503(r.get, f.paths, /the index file is gone \(deleted or moved away\)/);
    }
    const testnet = join(d, 'testnet.sqlite');
    await (await engines.sqlite().open(testnet, { network: 'testnet4' })).close();
    moveIn(testnet, db);
    await r.store.check();
    await assert503(r.get, f.paths, /cannot be served: .*network testnet4, not regtest/);
    const mock = join(d, 'mock.sqlite');
    const wm = await indexer(mock, f.chain(), { mock: true });
    await wm.close();
    moveIn(mock, db);
    await r.store.check();
    await assert503(r.get, f.paths, /cannot be served: .*built with --mock/);
    const empty = join(d, 'empty.sqlite');
    writeFileSync(empty, '');
    moveIn(empty, db);
    await r.store.check();
    await assert503(r.get, f.paths, /cannot be served: .*the index is empty; start the indexer first/);
    // the indexer initialises the empty file in place and syncs: served at the next check
    const w2 = await indexer(db, f.burned());
    try {
      const now = await answers(direct(w2), f.paths);
      await r.store.check();
      assert.deepEqual(await answers(r.get, f.paths), now);
    } finally {
      await w2.close();
    }
  } finally {
    await r.svc.close();
  }
});

test('sqlite --api-only: the timer finds a replaced file by itself (bounded poll)', async (t) => {
  if (!sharedOrSkip(t)) return;
  const f = fixture();
  const d = tempDir();
  const db = join(d, 'index.sqlite');
  const w1 = await indexer(db, f.chain());
  await w1.close();
  const r = await reader(db, 20);
  try {
    const old = await answers(r.get, f.paths);
    const built = join(d, 'built.sqlite');
    const w2 = await indexer(built, f.burned());
    const want = await answers(direct(w2), f.paths);
    await w2.close();
    moveIn(built, db);
    await waitFor(
      async () => {
        const res = await r.get(f.paths[0]!);
        return res.status === 200 && res.body.toString() !== old[0];
      },
      'the reader to serve the new file',
      { timeoutMs: 20_000 },
    );
    assert.deepEqual(await answers(r.get, f.paths), want);
  } finally {
    await r.svc.close();
  }
});

test('charms index --api-only (a process): serves a file moved to its path, says so on stderr', async (t) => {
  if (!sharedOrSkip(t)) return;
  const f = fixture();
  const d = tempDir();
  const db = join(d, 'index.sqlite');
  const w1 = await indexer(db, f.chain());
  const old = await answers(direct(w1), f.paths);
  await w1.close();
  const child = spawn(process.execPath, [charmsBin, 'index', '--ip', '127.0.0.1', '--port', '0', '--db', db, '--api-only', '--network', 'regtest'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  try {
    const port = Number(await waitFor(() => /Charms index running on 127\.0\.0\.1:(\d+)/.exec(stderr)?.[1], 'the reader to listen', { timeoutMs: 30_000 }));
    const get = (p: string) => h1(port, 'GET', p);
    assert.deepEqual(await answers(get, f.paths), old);
    const built = join(d, 'built.sqlite');
    const w2 = await indexer(built, f.burned());
    const want = await answers(direct(w2), f.paths);
    const hash = JSON.parse((await direct(w2)('/v1/status')).body.toString()).index.hash as string;
    await w2.close();
    moveIn(built, db);
    // its own timer (once a second) finds the new file
    await waitFor(async () => JSON.parse((await get('/v1/status')).body.toString()).index?.hash === hash, 'the new index in /v1/status', {
      timeoutMs: 20_000,
    });
    assert.deepEqual(await answers(get, f.paths), want);
    assert.match(stderr, /a new index file is at the path; serving it/);
  } finally {
    await new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  }
});
