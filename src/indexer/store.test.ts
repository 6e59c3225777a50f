import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { betterSqliteModule } from './sqlite-driver.js';
import { ENGINES, sqlOn, TestEngines, type TestEngine } from '../testing/index-stores.js';
import { dumpIndex, unspentOfApp } from '../testing/index-dump.js';
import { SqlStore, type BlockWrite, type IndexWriter } from './store.js';
import { MIGRATIONS, prepareSchema, SCHEMA_VERSION } from './schema.js';
import { SqliteDriver } from './sqlite-driver.js';
import type { Driver } from './driver.js';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scriptToAddress } from '../bitcoin/address.js';
import { indexApiHandler } from './api.js';
import { skipOrFail } from '../testing/require.js';
import { explorerApiHandler } from './explorer-api.js';
import { handlerAnswer as answer, handlerReq as req } from '../testing/http.js';
import { startTcpProxy } from '../testing/tcp-proxy.js';
import { waitFor } from '../testing/wait.js';
import { createLogger } from '../infra/log.js';
import { redactUrl } from '../util/redact.js';
import { BITCOIN_NETWORKS } from '../model/network.js';

const SCRIPT = Uint8Array.from([0x51, 0x20, ...new Array(32).fill(7)]);
const engines = new TestEngines();
after(() => engines.close());

const h = (n: number) => n.toString(16).padStart(64, '0');
const APP_T = `t/${'aa'.repeat(32)}/${'bb'.repeat(32)}`;
const APP_N = `n/${'cc'.repeat(32)}/${'dd'.repeat(32)}`;
const ALICE = Uint8Array.from([0x51, 0x20, ...new Array(32).fill(1)]);
const BOB = Uint8Array.from([0x51, 0x20, ...new Array(32).fill(2)]);
const U64_MAX = 18446744073709551615n;

/** Block 1: tx A makes two outputs for Alice (u64 max tokens; an NFT). */
const block1: BlockWrite = {
  height: 1,
  hash: h(0x101),
  prevHash: h(0x100),
  time: 1000,
  spellTxs: [{ txid: h(0xa), txIndex: 1, version: 15, spell: Uint8Array.of(0xa0) }],
  outputs: [
    { txid: h(0xa), txIndex: 1, vout: 0, app: APP_T, amount: U64_MAX, data: null, script: ALICE, sats: 1000n },
    { txid: h(0xa), txIndex: 1, vout: 1, app: APP_N, amount: null, data: Uint8Array.of(0xa1, 0x61, 0x6e, 0x01), script: ALICE, sats: 546n },
    { txid: h(0xa), txIndex: 1, vout: 2, app: APP_T, amount: U64_MAX, data: null, script: ALICE, sats: 1000n },
  ],
  inputs: [{ txid: h(0xa), txIndex: 1, vin: 0, prevTxid: h(0x99), prevVout: 0 }],
};
/** Block 2: tx B (no spell) spends A:0 — a burn; tx C moves the NFT to Bob. */
const block2: BlockWrite = {
  height: 2,
  hash: h(0x102),
  prevHash: h(0x101),
  time: 1001,
  spellTxs: [{ txid: h(0xc), txIndex: 2, version: 15, spell: Uint8Array.of(0xa0) }],
  outputs: [{ txid: h(0xc), txIndex: 2, vout: 0, app: APP_N, amount: null, data: Uint8Array.of(0x01), script: BOB, sats: 600n }],
  inputs: [
    { txid: h(0xb), txIndex: 1, vin: 0, prevTxid: h(0xa), prevVout: 0 },
    { txid: h(0xc), txIndex: 2, vin: 0, prevTxid: h(0xa), prevVout: 1 },
  ],
};

const key = (x: { txid: string; vout: number; app: string }) => `${x.txid}:${x.vout}:${x.app}`;
const sorted = <T extends { txid: string; vout: number; app: string }>(xs: T[]): T[] => [...xs].sort((x, y) => (key(x) < key(y) ? -1 : 1));
/** The balances' read without outpoints: the same apps and amounts, in the same multiset. */
const appAmounts = (xs: { app: string; amount: bigint | null }[]) => xs.map((x) => `${x.app} ${x.amount}`).sort();

for (const name of ENGINES) {
  test(`${name}: blocks apply, spends and burns are recorded, a rollback undoes them exactly`, async (t) => {
    const e = await engines.engine(name, t);
    if (!e) return;
    const s = await e.open(await e.newDb());
    try {
      await s.applyBlock(block1);
      const afterOne = await dumpIndex(s);
      assert.deepEqual((await s.tip())?.hash, h(0x101));
      const alice = await s.unspentByScript(ALICE);
      assert.equal(alice.length, 3);
      assert.equal(alice[0]!.amount, U64_MAX, 'u64 amounts are exact');
      assert.deepEqual(alice[1]!.data, Uint8Array.of(0xa1, 0x61, 0x6e, 0x01));
      assert.deepEqual(
        sorted(await s.unspentAmounts(ALICE)),
        alice.map((r) => ({ txid: r.txid, vout: r.vout, app: r.app, amount: r.amount })),
        'the balances read: the same outputs and amounts',
      );

      await s.applyBlock(block2);
      assert.equal((await s.unspentByScript(ALICE)).length, 1);
      const burned = await s.output(h(0xa), 0);
      assert.deepEqual(burned[0]!.spent, { txid: h(0xb), vin: 0, height: 2 }, 'spent by a tx without a spell: burned, still spent');
      assert.equal((await s.spentBy(h(0xc))).length, 1);
      assert.equal((await s.unspentByScript(BOB))[0]!.app, APP_N);
      const hist = await s.history(ALICE, 10);
      assert.deepEqual(
        hist.map((x) => [x.height, x.txIndex, x.changes.map((c) => [c.app, c.received, c.sent])]),
        [
          [2, 2, [[APP_N, 0n, 1n]]],
          [2, 1, [[APP_T, 0n, U64_MAX]]],
          [
            1,
            1,
            [
              [APP_N, 1n, 0n],
              [APP_T, 2n * U64_MAX, 0n],
            ],
          ],
        ],
        'history sums exceed u64 exactly',
      );
      assert.deepEqual(
        (await s.history(ALICE, 1, { height: 2, txIndex: 2 })).map((x) => x.txIndex),
        [1],
      );
      // the tip must extend
      await assert.rejects(s.applyBlock({ ...block2, height: 3, hash: h(0x103), prevHash: h(0x999) }), /does not extend/);

      await s.rollbackTo(1, { at: 5, depth: 1, oldTip: h(0x102), newTip: h(0x202) });
      assert.equal(await dumpIndex(s), afterOne, 'rollback restores the state after block 1 exactly');
      assert.deepEqual(await s.lastReorg(), { at: 5, forkHeight: 1, depth: 1, oldTip: h(0x102), newTip: h(0x202) });
      // and the block can be applied again
      await s.applyBlock(block2);
      assert.equal((await s.output(h(0xa), 0))[0]!.spent?.height, 2);
      assert.equal((await s.meta()).schemaVersion, SCHEMA_VERSION);
    } finally {
      await s.close();
    }
  });

  test(`${name}: a failed block writes nothing`, async (t) => {
    const e = await engines.engine(name, t);
    if (!e) return;
    const s = await e.open(await e.newDb());
    try {
      await s.applyBlock(block1);
      const before = await dumpIndex(s);
      // the same output twice violates the primary key half-way through the block
      const broken: BlockWrite = { ...block2, outputs: [...block2.outputs, block2.outputs[0]!] };
      await assert.rejects(s.applyBlock(broken));
      assert.equal(await dumpIndex(s), before);
      await s.applyBlock(block2);
      assert.equal((await s.tip())?.height, 2);
    } finally {
      await s.close();
    }
  });

  test(`${name}: one writer per database; meta and schema checks refuse clearly`, async (t) => {
    const e = await engines.engine(name, t);
    if (!e) return;
    const db = await e.newDb();
    const s = await e.open(db, { mock: true });
    try {
      await assert.rejects(e.open(db, { mock: true }), /another indexer is writing this index/);
      const reader = await e.open(db, { mode: 'reader', mock: true });
      await s.applyBlock(block1);
      assert.equal((await reader.tip())?.height, 1, 'a reader sees committed blocks');
      await reader.close();
    } finally {
      await s.close();
    }
    await assert.rejects(e.open(db, { mock: false }), /built with --mock/);
    await assert.rejects(e.open(db, { mock: true, network: 'testnet4' }), /network regtest, not testnet4/);
    const again = await e.open(db, { mock: true });
    await again.close();
  });

  // a SQLite writer has no connection to lose
  if (name === 'postgres')
    test(`${name}: a writer whose connection dies connects and locks again; not when another indexer took the lock`, async (t) => {
      const e = await engines.engine(name, t);
      if (!e) return;
      const db = await e.newDb();
      const s = await e.open(db, { mock: true });
      // ends the backend holding the index's advisory lock (PostgreSQL restarted, an admin's kill)
      const kill = async () =>
        assert.equal((await sqlOn(e, db, "SELECT pg_terminate_backend(pid) AS t FROM pg_locks WHERE locktype = 'advisory' AND granted")).length, 1);
      // the first write after the kill may fail (the connection's end not seen yet); the next one connects again
      const write = (b: BlockWrite) => s.applyBlock(b).catch(() => s.applyBlock(b));
      try {
        await s.applyBlock(block1);
        const before = await s.dataVersion();
        await kill();
        await write(block2);
        assert.equal((await s.tip())?.height, 2, 'written on a new connection');
        assert.ok((await s.dataVersion())! > before! + 1, "the kept answers' state moved with the new connection too");
        assert.equal((await sqlOn(e, db, "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted")).length, 1, 'the lock is held again');
        // killed again, and another indexer takes the free lock: this one writes nothing
        await kill();
        const other = await e.open(db, { mock: true });
        const block3: BlockWrite = { height: 3, hash: h(0x103), prevHash: h(0x102), time: 1002, spellTxs: [], outputs: [], inputs: [] };
        await assert.rejects(write(block3), /another indexer is writing this index .*took it: stop this one/);
        assert.equal((await other.tip())?.height, 2);
        await other.close();
        await s.applyBlock(block3); // the lock is free again
        assert.equal((await s.tip())?.height, 3);
      } finally {
        await s.close();
      }
    });

  test(`${name}: an index from a newer schema is refused, an older one migrated`, async (t) => {
    const e = await engines.engine(name, t);
    if (!e) return;
    const db = await e.newDb();
    await (await e.open(db)).close();
    const sql = (text: string, params: string[] = []) => sqlOn(e, db, text, params);
    const setVersion = (v: string) => sql("UPDATE meta SET value = $1 WHERE key = 'schema_version'", [v]);
    // a schema-1 index (before meta.data_version) is migrated by the writer, refused by a reader until then
    await sql("DELETE FROM meta WHERE key = 'data_version'");
    await sql('DROP TABLE recent_txs'); // (schema 4)
    await setVersion('1');
    await assert.rejects(e.open(db, { mode: 'reader' }), /has schema 1/);
    const migrated = await e.open(db);
    assert.equal((await migrated.meta()).schemaVersion, SCHEMA_VERSION);
    if (name === 'postgres') {
      await migrated.applyBlock({ height: 1, hash: 'aa'.repeat(32), prevHash: '00'.repeat(32), time: 1, spellTxs: [], outputs: [], inputs: [] });
      const reader = await e.open(db, { mode: 'reader' });
      assert.equal(await reader.dataVersion(), 1, 'the migrated row moves with the first block');
      await reader.close();
    }
    await migrated.close();
    await setVersion(String(SCHEMA_VERSION + 1));
    await assert.rejects(e.open(db), /built by a newer charms-ts/);
    await assert.rejects(e.open(db, { mode: 'reader' }), /built by a newer charms-ts/);
    // an empty database (version 0) is brought to the current version by the writer only
    const fresh = await e.newDb();
    if (name === 'postgres') await assert.rejects(e.open(fresh, { mode: 'reader' }), /the index is empty; start the indexer first/);
    const s = await e.open(fresh);
    assert.equal((await s.meta()).schemaVersion, SCHEMA_VERSION);
    await s.close();
  });
}

for (const name of ENGINES) {
  test(`${name}: an index of schema 2 is migrated to the covering unspent-by-script index and answers identically`, async (t) => {
    const e = await engines.engine(name, t);
    if (!e) return;
    const db = await e.newDb();
    const s = await e.open(db);
    await s.applyBlock(block1);
    await s.applyBlock(block2);
    const reads = async (x: Awaited<ReturnType<typeof e.open>>) => ({
      dump: await dumpIndex(x),
      unspent: await Promise.all([ALICE, BOB].map((sc) => x.unspentByScript(sc))),
      amounts: await Promise.all([ALICE, BOB].map(async (sc) => sorted(await x.unspentAmounts(sc)))),
      bare: await Promise.all([ALICE, BOB].map(async (sc) => appAmounts(await x.unspentAmounts(sc, false)))),
    });
    const before = await reads(s);
    await s.close();
    // back to what version 2 wrote: the index V3 replaces, and the version
    const at = MIGRATIONS.findIndex((m) => m.includes('co_unspent_by_script'));
    assert.ok(at >= 2);
    await sqlOn(e, db, 'DROP INDEX co_unspent_by_script; CREATE INDEX co_unspent_script ON charm_outputs(script_id, app_id) WHERE spent_height IS NULL;');
    await sqlOn(e, db, "UPDATE meta SET value = $1 WHERE key = 'schema_version'", [String(at)]);
    await assert.rejects(e.open(db, { mode: 'reader' }), new RegExp(`has schema ${at}`));
    const migrated = await e.open(db);
    try {
      assert.equal((await migrated.meta()).schemaVersion, SCHEMA_VERSION);
      assert.deepEqual(await reads(migrated), before, 'the same answers after the migration');
      const indexes = (
        await sqlOn(
          e,
          db,
          name === 'sqlite'
            ? "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'co_unspent%'"
            : "SELECT indexname AS name FROM pg_indexes WHERE indexname LIKE 'co_unspent%'",
        )
      )
        .map((r) => String(r.name))
        .sort();
      assert.deepEqual(indexes, ['co_unspent_app', 'co_unspent_by_script']);
      if (name === 'sqlite') {
        const plan = await sqlOn(
          e,
          db,
          'EXPLAIN QUERY PLAN SELECT co.app_id, co.amount, lower(hex(co.txid)), co.vout FROM charm_outputs co WHERE co.script_id = 1 AND co.spent_height IS NULL',
        );
        assert.ok(
          plan.some((r) => String(r.detail).includes('COVERING INDEX co_unspent_by_script')),
          `the balances read is answered from the index alone: ${JSON.stringify(plan)}`,
        );
      }
      // and the migrated index goes on: a rollback and a block write
      await migrated.rollbackTo(1, { at: 1, depth: 1, oldTip: h(0x102), newTip: h(0x202) });
      await migrated.applyBlock(block2);
      assert.deepEqual((await reads(migrated)).amounts, before.amounts);
    } finally {
      await migrated.close();
    }
  });

  test(`${name}: the balances read names apps added after its app map was filled, for the writer and a reader`, async (t) => {
    const e = await engines.engine(name, t);
    if (!e) return;
    const db = await e.newDb();
    const s = await e.open(db);
    await s.applyBlock(block1);
    const reader = await e.open(db, { mode: 'reader' });
    try {
      for (const x of [s, reader])
        assert.deepEqual(appAmounts(await x.unspentAmounts(ALICE, false)), [`${APP_N} null`, `${APP_T} ${U64_MAX}`, `${APP_T} ${U64_MAX}`]);
      const APP_X = `t/${'ee'.repeat(32)}/${'ff'.repeat(32)}`;
      await s.applyBlock({
        height: 2,
        hash: h(0x102),
        prevHash: h(0x101),
        time: 1001,
        spellTxs: [],
        outputs: [{ txid: h(0xd), txIndex: 1, vout: 0, app: APP_X, amount: 5n, data: null, script: ALICE, sats: 546n }],
        inputs: [],
      });
      for (const x of [s, reader]) {
        const full = await x.unspentAmounts(ALICE);
        assert.deepEqual(sorted(full), sorted((await x.unspentByScript(ALICE)).map((r) => ({ txid: r.txid, vout: r.vout, app: r.app, amount: r.amount }))));
        assert.ok(full.some((r) => r.app === APP_X && r.amount === 5n && r.txid === h(0xd) && r.vout === 0));
        assert.deepEqual(appAmounts(await x.unspentAmounts(ALICE, false)), appAmounts(full), 'without outpoints: the same apps and amounts');
        assert.ok((await x.unspentAmounts(ALICE, false)).every((r) => r.txid === '' && r.vout === -1));
      }
    } finally {
      await reader.close();
      await s.close();
    }
  });
}

test('a writer whose lock was lost keeps nothing from memory, and reloads it from the database once the lock is retaken', async () => {
  const e = engines.sqlite();
  const db = await e.newDb();
  // writer A over a driver whose lock (Driver.writerLock, PostgreSQL's advisory lock) the test moves
  const d = SqliteDriver.open(db, 'writer');
  let lock = { epoch: 1, held: true };
  const driver = new Proxy(d, {
    get: (target, prop) => {
      if (prop === 'writerLock') return () => lock;
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  }) as Driver;
  const meta = await prepareSchema(driver, { mode: 'writer', network: 'regtest', mock: false, startHeight: 1, label: db });
  const a = new SqlStore(driver, meta);
  try {
    await a.applyBlock(block1);
    const kept = (await a.charmOutpoints())!;
    assert.ok(kept.has(h(0xa), 0) && kept.current(), 'the unspent set kept under the lock');
    // the lock lost: the kept set (the mempool overlay's link to the confirmed state) is stale at once
    lock = { epoch: 1, held: false };
    assert.equal(kept.current(), false, 'a kept set is no longer current');
    assert.equal(await a.charmOutpoints(), undefined, 'no unspent set while the lock is not held');
    // another writer spends A:0 and A:1 meanwhile (straight in the database: A holds the file's lock)
    await sqlOn(e, db, 'UPDATE charm_outputs SET spent_height = 1 WHERE vout < 2');
    assert.deepEqual(
      (await a.unspentByScript(ALICE)).map((o) => o.vout),
      [2],
      'answers from the database',
    );
    // retaken (a new epoch): what A kept is dropped and read again
    lock = { epoch: 2, held: true };
    const reloaded = (await a.charmOutpoints())!;
    assert.ok(reloaded.current());
    assert.equal(reloaded.has(h(0xa), 0), false, 'the other writer burned A:0');
    assert.equal(reloaded.has(h(0xa), 1), false, 'and moved A:1');
    assert.equal(reloaded.has(h(0xa), 2), true);
    assert.equal(kept.current(), false, 'the old set stays stale');
  } finally {
    await a.close();
  }
});

test('the SQLite engine loads better-sqlite3 13 (Node-API) from Node 22 on and 12 on Node 20', () => {
  assert.equal(betterSqliteModule('20.19.0'), 'better-sqlite3');
  assert.equal(betterSqliteModule('22.13.0'), 'better-sqlite3-napi');
  assert.equal(betterSqliteModule('24.21.0'), 'better-sqlite3-napi');
  const version = (m: string) => (createRequire(import.meta.url)(`${m}/package.json`) as { version: string }).version;
  assert.match(version('better-sqlite3'), /^12\./);
  assert.match(version('better-sqlite3-napi'), /^13\./);
});

/** The holders of an app as the API once computed them from every unspent row (the oracle). */
function holdersFromRows(rows: { script: Uint8Array; amount: bigint | null }[]) {
  const m = new Map<string, { amount: bigint; utxos: number }>();
  let supply = 0n;
  for (const r of rows) {
    const k = Buffer.from(r.script).toString('hex');
    const x = m.get(k) ?? { amount: 0n, utxos: 0 };
    x.amount += r.amount ?? 1n;
    x.utxos++;
    m.set(k, x);
    supply += r.amount ?? 1n;
  }
  return { supply, holders: [...m.entries()].sort(([a], [b]) => (a < b ? -1 : 1)) };
}

for (const name of ENGINES) {
  test(`${name}: an app's supply and holder pages are summed by the engine, exactly, as from every row`, async (t) => {
    const e = await engines.engine(name, t);
    if (!e) return;
    const s = await e.open(await e.newDb());
    try {
      // scripts of different lengths and leading bytes (byte order is the page order), amounts up
      // to u64::MAX (sums pass u64), some outputs spent; an NFT app counts outputs
      let seed = 7;
      const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % n;
      const scripts = Array.from({ length: 23 }, (_, i) => Uint8Array.from([i % 3 === 0 ? 0x00 : 0x51, ...new Array(rnd(4) + 1).fill(i)]));
      for (let b = 1; b <= 4; b++) {
        const outputs = Array.from({ length: 30 }, (_, v) => ({
          txid: h(0x1000 + b),
          txIndex: 1,
          vout: v,
          app: v % 5 === 0 ? APP_N : APP_T,
          amount: v % 5 === 0 ? null : rnd(3) === 0 ? U64_MAX : BigInt(rnd(1_000_000)),
          data: null,
          script: scripts[rnd(scripts.length)]!,
          sats: 546n,
        }));
        const inputs =
          b > 1 ? Array.from({ length: 8 }, (_, i) => ({ txid: h(0x1000 + b), txIndex: 1, vin: i, prevTxid: h(0x1000 + b - 1), prevVout: i * 3 })) : [];
        await s.applyBlock({
          height: b,
          hash: h(0x200 + b),
          prevHash: h(0x200 + b - 1),
          time: b,
          spellTxs: [{ txid: h(0x1000 + b), txIndex: 1, version: 15, spell: Uint8Array.of(0xa0) }],
          outputs,
          inputs,
        });
      }
      for (const app of [APP_T, APP_N, `t/${'ee'.repeat(32)}/${'ff'.repeat(32)}`]) {
        const want = holdersFromRows(await unspentOfApp(s, app));
        for (const limit of [1, 4, 50]) {
          const pages: [string, bigint, number][] = [];
          let after: Uint8Array | undefined;
          for (let n = 0; n < 100; n++) {
            const got = await s.appHolders(app, after, limit + 1);
            assert.equal(got.supply, want.supply, `${app} supply`);
            assert.equal(got.holders, want.holders.length, `${app} holder count`);
            const page = got.page.slice(0, limit);
            pages.push(...page.map((x): [string, bigint, number] => [Buffer.from(x.script).toString('hex'), x.amount, x.utxos]));
            if (got.page.length <= limit) break;
            after = page[page.length - 1]!.script;
          }
          assert.deepEqual(
            pages,
            want.holders.map(([k, x]) => [k, x.amount, x.utxos]),
            `${app}, pages of ${limit}`,
          );
        }
      }
      assert.ok(holdersFromRows(await unspentOfApp(s, APP_T)).supply > U64_MAX, 'the supply passes u64');
    } finally {
      await s.close();
    }
  });
}

/** Runs SQL on a database outside the store (another program's tables, a damaged meta). */
async function rawSql(e: TestEngine, db: string, sql: string[]): Promise<void> {
  for (const q of sql) await sqlOn(e, db, q);
}

for (const name of ENGINES) {
  test(`${name}: a database that is not a charms index is refused with a clear message, and left as it was`, async (t) => {
    const e = await engines.engine(name, t);
    if (!e) return;
    // another program's database (the explorer's own PostgreSQL has a `blocks` table too)
    const foreign = await e.newDb();
    await rawSql(e, foreign, ['CREATE TABLE blocks (height INTEGER PRIMARY KEY, hash TEXT)', 'CREATE TABLE transactions (txid TEXT PRIMARY KEY)']);
    await assert.rejects(e.open(foreign), /holds tables that are not a charms index \(blocks, transactions\).*another --db/);
    await assert.rejects(e.open(foreign, { mode: 'reader' }), /holds tables that are not a charms index/);
    await rawSql(e, foreign, ["INSERT INTO transactions VALUES ('kept')"]); // untouched: no meta table was added
    // a meta table whose version is not a number
    const damaged = await e.newDb();
    await (await e.open(damaged)).close();
    await rawSql(e, damaged, ["UPDATE meta SET value = 'two' WHERE key = 'schema_version'"]);
    await assert.rejects(e.open(damaged), /meta\.schema_version is "two", not a charms index's/);
    // an empty database is still made an index
    const fresh = await e.open(await e.newDb());
    await fresh.close();
  });
}

test('sqlite: a --db path that is no SQLite database (a text file, a directory) is refused naming the path', async () => {
  const e = engines.sqlite();
  const dir = mkdtempSync(join(tmpdir(), 'charms-audit-'));
  const text = join(dir, 'notes.txt');
  writeFileSync(text, 'hello, this is not a database at all, but it is long enough to be read as one '.repeat(20));
  await assert.rejects(e.open(text), (err: Error) => err.message.startsWith(`${text}: cannot be used as the index's SQLite file`) && /--db/.test(err.message));
  // the lock was released: a second attempt says the same, not "another indexer is writing"
  await assert.rejects(e.open(text), /cannot be used as the index's SQLite file/);
  await assert.rejects(e.open(dir), /cannot be used as the index's SQLite file/);
});

test('the apps of one output come in the same order from SQLite and from a PostgreSQL whose collation is not bytewise', async (t) => {
  const e = await engines.engine('postgres', t);
  if (!e) return;
  // a database as a Debian cluster initialised under LANG=en_US.UTF-8 has: case and punctuation weigh less
  const base = await e.newDb();
  const name = `icu_${process.pid}`;
  try {
    await rawSql(e, base, [`CREATE DATABASE ${name} LOCALE_PROVIDER icu ICU_LOCALE 'en-US' TEMPLATE template0`]);
  } catch (err) {
    skipOrFail(t, `this PostgreSQL cannot create an ICU en-US database (${(err as Error).message})`);
    return;
  }
  const icuDb = base.replace(/\/[^/]+$/, `/${name}`);
  const tx = (n: number) => n.toString(16).padStart(64, '0');
  // one output holding apps whose tags sort differently by bytes (B T a t) and by en-US rules (a B t T)
  const apps = ['a', 'B', 't', 'T'].map((tag) => `${tag}/${'31'.repeat(32)}/${'32'.repeat(32)}`);
  const block = {
    height: 1,
    hash: tx(0x101),
    prevHash: tx(0x100),
    time: 1,
    spellTxs: [],
    outputs: apps.map((app) => ({ txid: tx(1), txIndex: 1, vout: 0, app, amount: 5n, data: null, script: SCRIPT, sats: 1000n })),
    inputs: [],
  };
  const address = scriptToAddress(SCRIPT, BITCOIN_NETWORKS.regtest)!;
  const paths = [`/v1/outputs/${tx(1)}:0`, `/v1/addresses/${address}/utxos`, `/v1/addresses/${address}/history`, `/v1/wallet/charms/${address}`];
  const answers = async (store: IndexWriter): Promise<string[]> => {
    const wallet = explorerApiHandler({ store, network: 'regtest' });
    const index = indexApiHandler({ store, network: 'regtest', version: 'test' });
    const out: string[] = [];
    for (const p of paths) out.push(String((await (p.startsWith('/v1/wallet/') ? wallet : index)(req(p))).body));
    return out;
  };
  const sq = engines.sqlite();
  const a = await sq.open(await sq.newDb());
  const b = await e.open(icuDb);
  try {
    await a.applyBlock(block);
    await b.applyBlock(block);
    const want = await answers(a);
    assert.deepEqual(
      JSON.parse(want[0]!).charms.map((c: { app: string }) => c.app[0]),
      ['B', 'T', 'a', 't'],
      'bytewise',
    );
    assert.deepEqual(await answers(b), want);
  } finally {
    await a.close();
    await b.close();
  }
});

// ------------------------------------------------------------------ PostgreSQL roles and grants

/** docs/index.md's GRANT lines for an `--api-only` role (between its `api-only grants` markers). */
function documentedGrants(): string[] {
  const doc = readFileSync(new URL('../../docs/index.md', import.meta.url), 'utf8');
  const block = /<!-- api-only grants -->\s*```sql\n([\s\S]*?)```/.exec(doc);
  assert.ok(block, 'docs/index.md lists the grants of an --api-only role');
  return block[1]!.split('\n').filter((l) => /^(GRANT|ALTER DEFAULT PRIVILEGES)\b/.test(l));
}

test('postgres: a role without grants is told which role and which grants; with the documented grants it serves as --api-only', async (t) => {
  const e = await engines.engine('postgres', t);
  if (!e) return;
  const db = await e.newDb();
  const writer = await e.open(db);
  await writer.applyBlock(block1);
  const database = new URL(db).pathname.slice(1);
  const role = `api_${process.pid}`;
  await sqlOn(e, db, `CREATE ROLE ${role} LOGIN`);
  const url = new URL(db);
  url.username = role;
  try {
    const refused = await e.open(url.href, { mode: 'reader' }).then(
      () => undefined,
      (x: unknown) => x as Error,
    );
    assert.ok(refused, 'a role without grants is refused');
    assert.match(refused.message, new RegExp(`PostgreSQL role ${role} may not read the index \\(permission denied for table meta\\)`));
    assert.doesNotMatch(refused.message, /not a charms index/);
    // the grants the message names are the documented ones
    const lines = documentedGrants().map((l) => l.replaceAll('charms_api', role).replaceAll('charms_indexer', 'postgres').replaceAll('charms_index', database));
    assert.deepEqual(lines.length, 4);
    for (const l of lines) assert.ok(refused.message.includes(l), `the message names ${l}`);
    // run exactly those (as the index's owner), then the role serves the index
    for (const l of lines) await sqlOn(e, db, l);
    const reader = await e.open(url.href, { mode: 'reader' });
    try {
      const h = indexApiHandler({ store: reader, network: 'regtest', version: 'test' });
      const st = await answer(h, '/v1/status');
      assert.equal(st.json.index.height, 1);
      const app = await answer(h, `/v1/apps/${encodeURIComponent(APP_T)}`);
      assert.equal(app.status, 200);
      assert.equal(app.json.supply, String(2n * U64_MAX));
      // a table a later migration creates is readable too (the default privileges)
      await sqlOn(e, db, 'CREATE TABLE later_table (x INTEGER)');
      assert.deepEqual(await reader.read((tx) => tx.all('SELECT COUNT(*)::int AS n FROM later_table')), [{ n: 0 }]);
      // and the role still cannot write
      await assert.rejects(sqlOn(e, url.href, 'DELETE FROM blocks'), /permission denied for table blocks/);
      // a grant revoked while the reader runs: answered 503 saying so, not a 500
      await sqlOn(e, db, `REVOKE SELECT ON charm_outputs FROM ${role}`);
      const revoked = await answer(h, `/v1/apps/${encodeURIComponent(APP_T)}?limit=7`);
      assert.equal(revoked.status, 503, JSON.stringify(revoked.json));
      assert.equal(revoked.json.code, 'UPSTREAM_UNAVAILABLE');
      assert.match(
        revoked.json.error,
        /permission denied for table charm_outputs: this role lacks a grant the index needs \(docs\/index.md "PostgreSQL roles"\)/,
      );
    } finally {
      await reader.close();
    }
  } finally {
    await writer.close();
  }
});

test('postgres: a writer role without CREATE, and a role without CONNECT, are told the role and the grants, not "not a charms index"', async (t) => {
  const e = await engines.engine('postgres', t);
  if (!e) return;
  const db = await e.newDb();
  const database = new URL(db).pathname.slice(1);
  const role = `w_${process.pid}`;
  await sqlOn(e, db, `CREATE ROLE ${role} LOGIN`);
  const url = new URL(db);
  url.username = role;
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => assert.fail('refused'),
      (x: unknown) => x as Error & { code?: string },
    );
  // PostgreSQL 15 on: no CREATE on schema public for a role that does not own it
  const noCreate = await refusal(e.open(url.href));
  assert.equal(noCreate.code, 'CONFIG');
  assert.match(noCreate.message, new RegExp(`PostgreSQL role ${role} may not build the index \\(permission denied for schema public\\)`));
  assert.ok(noCreate.message.includes(`GRANT CREATE, USAGE ON SCHEMA public TO ${role};`), noCreate.message);
  assert.doesNotMatch(noCreate.message, /not a charms index/);
  // no CONNECT: the writer and a reader both say so, with the grant
  await sqlOn(e, db, `REVOKE CONNECT ON DATABASE ${database} FROM PUBLIC`);
  for (const mode of ['writer', 'reader'] as const) {
    const noConnect = await refusal(e.open(url.href, { mode }));
    assert.equal(noConnect.code, 'CONFIG', `${mode}: ${noConnect.message}`);
    assert.match(noConnect.message, new RegExp(`role ${role} may not connect`), mode);
    assert.ok(noConnect.message.includes(`GRANT CONNECT ON DATABASE ${database} TO ${role}`), `${mode}: ${noConnect.message}`);
  }
  await sqlOn(e, db, `GRANT CONNECT ON DATABASE ${database} TO ${role}`);
  await sqlOn(e, db, `GRANT CREATE, USAGE ON SCHEMA public TO ${role}`);
  const writer = await e.open(url.href);
  try {
    await writer.applyBlock(block1);
    assert.equal((await writer.tip())?.height, 1, 'with the named grants the role builds the index');
  } finally {
    await writer.close();
  }
});

test('postgres: a writer and a reader connection lost and back are logged once each way, with fields', async (t) => {
  const e = await engines.engine('postgres', t);
  if (!e) return;
  const db = await e.newDb();
  const proxy = await startTcpProxy(Number(new URL(db).port));
  const url = new URL(db);
  url.port = String(proxy.port);
  const lines: Record<string, unknown>[] = [];
  const log = createLogger('info', (l) => void lines.push(JSON.parse(l) as Record<string, unknown>));
  const writer = await e.open(url.href, { log });
  const reader = await e.open(url.href, { mode: 'reader', log });
  const said = (re: RegExp) => lines.filter((l) => re.test(String(l.msg)));
  try {
    await writer.applyBlock(block1);
    assert.equal((await reader.tip())?.height, 1);
    assert.deepEqual(lines, [], 'nothing logged while connected');
    proxy.cut();
    await waitFor(() => said(/writer connection lost/).length === 1, 'the writer connection lost, logged');
    await assert.rejects(reader.tip(), /PostgreSQL at/);
    await assert.rejects(
      reader.read((tx) => tx.all('SELECT 1')),
      /PostgreSQL at/,
    );
    proxy.restore();
    await writer.applyBlock(block2);
    assert.equal((await reader.tip())?.height, 2);
    assert.equal((await reader.read((tx) => tx.all('SELECT 1 AS x')))[0]?.x, 1);
    const [wLost, wBack, rLost, rBack] = [/writer connection lost/, /writer connection back/, /reader connection lost/, /reader connection back/].map(said);
    for (const [what, got] of Object.entries({ wLost, wBack, rLost, rBack })) assert.equal(got!.length, 1, `${what}: one line`);
    assert.equal(wLost![0]!.level, 'warn');
    assert.equal(rLost![0]!.level, 'warn');
    assert.equal(wBack![0]!.level, 'info');
    assert.equal(rBack![0]!.level, 'info');
    for (const l of [...wLost!, ...wBack!, ...rLost!, ...rBack!]) assert.equal(l.db, redactUrl(url.href), 'the database named (credentials redacted)');
    assert.equal(typeof wBack![0]!.down_ms, 'number');
    assert.equal(typeof rBack![0]!.down_ms, 'number');
    assert.equal(typeof rLost![0]!.error, 'string');
    assert.deepEqual(
      [wLost, wBack, rLost, rBack].map((l) => l![0]!.event),
      ['lock_lost', 'lock_retaken', 'pg_reader_lost', 'pg_reader_back'],
      'machine-parsable: an event name each',
    );
  } finally {
    await reader.close();
    await writer.close();
    await proxy.close();
  }
});
