/**
 * Issue 22 audit: requirements that had no test, and the defects the audit found (each test here
 * failed before its fix).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { betterSqliteModule } from './sqlite-driver.js';
import { ENGINES, TestEngines, type TestEngine } from '../testing/index-stores.js';

const engines = new TestEngines();
after(() => engines.close());

/** Runs SQL on a database outside the store (another program's tables, a damaged meta). */
async function rawSql(e: TestEngine, db: string, sql: string[]): Promise<void> {
  if (e.name === 'sqlite') {
    const Database = createRequire(import.meta.url)(betterSqliteModule()) as typeof import('better-sqlite3');
    const d = new Database(db);
    for (const s of sql) d.exec(s);
    d.close();
    return;
  }
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: db });
  await c.connect();
  try {
    for (const s of sql) await c.query(s);
  } finally {
    await c.end();
  }
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
