import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { extractSpellOn } from '../chains/tagged.js';
import { CharmsError } from '../errors.js';
import { encodeSpellCbor, type NormalizedSpell } from '../model/spell.js';
import { useFastProofBackend } from '../groth16/init.js';
import { FAULT } from '../testing/faulty-verify-worker.js';
import { bitcoinVectors, replayDump, vectorChain } from '../testing/index-vectors.js';
import { TestEngines } from '../testing/index-stores.js';
import { dumpIndex } from '../testing/index-dump.js';
import { indexSettings } from '../settings/settings.js';
import { Follower } from './follower.js';
import type { IndexWriter } from './store.js';
import { sharedOrSkip } from '../testing/shared.js';
import { inThreadSpellCheck } from './block-write.js';
import { revivedSpell, SpellVerifyPool } from './verify-pool.js';
import { Tagged, ValueMap } from '../codec/value.js';
import { identifyTx } from '../chains/detect.js';
import type { Req, Res } from '../infra/http.js';
import { queryHandler } from '../query/service.js';
import { startIndexService } from './service.js';
import { TEST_INDEX_SERVICE } from '../testing/index-fake-node.js';
import { h1 } from '../testing/http.js';

const faulty = new URL('../testing/faulty-verify-worker.js', import.meta.url);
const marker = (b: number) => Uint8Array.of(b);

/**
 * Every Bitcoin vector (valid and invalid spells, real and mock, spell-less), plus invalid copies:
 * where the proof lies in one piece, swapped with another of the same length (well-formed points,
 * the pairing fails) and with its last byte changed; and every vector with one byte changed.
 */
function corpus(): Uint8Array[] {
  const raws = [...bitcoinVectors().values()].map((v) => v.raw);
  const withProof: { raw: Uint8Array; at: number; proof: Uint8Array }[] = [];
  for (const raw of raws) {
    try {
      const { proof } = extractSpellOn('bitcoin', raw, true);
      const at = Buffer.from(raw).indexOf(Buffer.from(proof));
      if (proof.length > 0 && at >= 0) withProof.push({ raw, at, proof });
    } catch {
      // no spell to tamper with
    }
  }
  const bad: Uint8Array[] = [];
  for (const a of withProof) {
    const other = withProof.find((b) => b !== a && b.proof.length === a.proof.length && !Buffer.from(b.proof).equals(Buffer.from(a.proof)));
    if (other) {
      const swapped = Uint8Array.from(a.raw);
      swapped.set(other.proof, a.at);
      bad.push(swapped);
    }
    const flipped = Uint8Array.from(a.raw);
    flipped[a.at + a.proof.length - 1]! ^= 0x01;
    bad.push(flipped);
  }
  assert.ok(bad.length >= 4, `proofs tampered with: ${bad.length}`);
  // one byte changed at a few places of every transaction (spell, proof, signatures, framing)
  const changed = raws.flatMap((raw) =>
    [0.3, 0.6, 0.9].map((f) => {
      const c = Uint8Array.from(raw);
      c[Math.floor(c.length * f)]! ^= 0x20;
      return c;
    }),
  );
  return [...raws, ...bad, ...changed];
}

function assertSameVerdicts(got: (NormalizedSpell | undefined)[], want: (NormalizedSpell | undefined)[]): void {
  assert.equal(got.length, want.length);
  want.forEach((w, i) => {
    const g = got[i];
    assert.equal(g === undefined, w === undefined, `verdict ${i}`);
    if (g && w) {
      assert.deepEqual(encodeSpellCbor(g), encodeSpellCbor(w), `spell ${i} (CBOR)`);
      assert.deepEqual(g, w, `spell ${i}`);
    }
  });
}

test('the pool gives the in-thread verdicts for every vector, valid and invalid, mock and real', async (t) => {
  if (!sharedOrSkip(t)) return;
  await useFastProofBackend(() => {}, { mockProofs: true });
  const all = corpus();
  for (const mock of [false, true]) {
    const want = inThreadSpellCheck(all, mock);
    assert.ok(want.filter(Boolean).length >= (mock ? 12 : 10), 'the corpus holds valid spells');
    assert.ok(want.filter((w) => !w).length >= 20, 'the corpus holds invalid ones');
    const pool = new SpellVerifyPool({ size: 2, mock, minChunk: 8 });
    try {
      assertSameVerdicts(await pool.check(all), want);
      // one transaction per check, eight checks at a time (within the queue's bound)
      const singles: (NormalizedSpell | undefined)[] = [];
      for (let i = 0; i < all.length; i += 8) singles.push(...(await Promise.all(all.slice(i, i + 8).map((r) => pool.check([r])))).flat());
      assertSameVerdicts(singles, want);
      const reversed = [...all].reverse();
      assertSameVerdicts(await pool.check(reversed), inThreadSpellCheck(reversed, mock));
    } finally {
      await pool.close();
    }
  }
});

test('the spell-query routes verify on the pool (as in charms index) and answer what the event loop does', async (t) => {
  if (!sharedOrSkip(t)) return;
  await useFastProofBackend(() => {}, { mockProofs: true });
  const all = corpus();
  const put = (raw: Uint8Array): Req => {
    let txid = 'ee'.repeat(32);
    try {
      txid = identifyTx(raw).txid;
    } catch {
      // unreadable: both answer the same error
    }
    return {
      method: 'PUT',
      path: `/spells/${txid}`,
      query: new URLSearchParams(),
      headers: {},
      body: async () => new TextEncoder().encode(JSON.stringify({ tx_hex: Buffer.from(raw).toString('hex') })),
    };
  };
  const answer = (r: Res) => ({ status: r.status, headers: r.headers, body: Buffer.from(r.body ?? '').toString() });
  for (const mock of [false, true]) {
    const pool = new SpellVerifyPool({ size: 1, mock });
    const onPool = new Set<string>();
    const pooled = queryHandler({
      mock,
      verifyOffThread: (raws) => {
        for (const r of raws) onPool.add(Buffer.from(r).toString('hex'));
        return pool.check(raws);
      },
    });
    const here = queryHandler({ mock });
    try {
      // concurrent requests: batched onto the pool together, as the event loop's batcher does
      const got = (await Promise.all(all.map((raw) => pooled(put(raw))))).map(answer);
      const want = (await Promise.all(all.map((raw) => here(put(raw))))).map(answer);
      assert.deepEqual(got, want);
      const spells = all.filter((_, i) => want[i]!.status === 200);
      assert.ok(spells.length >= (mock ? 12 : 10), `valid spells: ${spells.length}`);
      assert.ok(want.filter((w) => w.status === 204).length >= 20, 'and transactions without a valid spell');
      for (const raw of spells) assert.ok(onPool.has(Buffer.from(raw).toString('hex')), 'every spell answered was verified on the pool');
    } finally {
      await pool.close();
    }
  }
  // threads too busy to take the batch (SERVER_BUSY): verified on the event loop, the same answers
  const busy = new SpellVerifyPool({ size: 1, mock: false, maxQueued: 0 });
  try {
    const some = all.slice(0, 12);
    const pooled = queryHandler({ verifyOffThread: busy.check });
    const got = (await Promise.all(some.map((raw) => pooled(put(raw))))).map(answer);
    const want = (await Promise.all(some.map((raw) => queryHandler()(put(raw))))).map(answer);
    assert.deepEqual(got, want);
    assert.ok(got.some((g) => g.status === 200));
  } finally {
    await busy.close();
  }
});

test('a thread that crashes or exits is replaced; a batch that fails twice fails with a clear error', async (t) => {
  if (!sharedOrSkip(t)) return;
  const raws = [...bitcoinVectors().values()].map((v) => v.raw);
  const want = inThreadSpellCheck(raws, false);
  const pool = new SpellVerifyPool({ size: 1, mock: false, workerUrl: faulty });
  try {
    for (const fault of [FAULT.crash, FAULT.exit]) {
      const err = await pool.check([marker(fault), ...raws]).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof CharmsError && err.code === 'INTERNAL', String(err));
      assert.match(err.message, /failed twice on a worker thread/);
      // the replacement thread answers the next batch
      assertSameVerdicts(await pool.check(raws), want);
    }
    // crashes once: retried on a fresh thread, same verdicts
    const dir = mkdtempSync(join(tmpdir(), 'verify-fault-'));
    const once = join(dir, 'once');
    writeFileSync(once, '');
    process.env.VERIFY_FAULT_ONCE = once;
    try {
      const batch = [marker(FAULT.crashOnce), ...raws];
      assertSameVerdicts(await pool.check(batch), inThreadSpellCheck(batch, false));
    } finally {
      delete process.env.VERIFY_FAULT_ONCE;
      rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    await pool.close();
  }
});

test('a hanging thread is terminated at the timeout; the queue is bounded; close ends waiting checks', async () => {
  const pool = new SpellVerifyPool({ size: 1, mock: false, workerUrl: faulty, timeoutMs: 1_000, maxQueued: 1 });
  try {
    const err = await pool.check([marker(FAULT.hang)]).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof CharmsError && err.code === 'INTERNAL', String(err));
    assert.match(err.message, /timed out after 1000 ms/);
  } finally {
    await pool.close();
  }
  const busy = new SpellVerifyPool({ size: 1, mock: false, workerUrl: faulty, timeoutMs: 600_000, maxQueued: 1 });
  const hanging = busy.check([marker(FAULT.hang)]).then(
    () => undefined,
    (e: unknown) => e,
  );
  try {
    await assert.rejects(busy.check([marker(FAULT.crash)]), (e: unknown) => e instanceof CharmsError && e.code === 'SERVER_BUSY');
  } finally {
    await busy.close();
  }
  const err = await hanging;
  assert.ok(err instanceof CharmsError && err.code === 'INTERNAL', String(err));
  await assert.rejects(busy.check([marker(FAULT.crash)]), /shut down/);
});

const engines = new TestEngines();
after(() => engines.close());

test('the follower verifying on the pool reaches the index the in-thread check reaches (real and mock)', async (t) => {
  if (!sharedOrSkip(t)) return;
  const e = await engines.engine('sqlite', t);
  if (!e) return;
  const chain = vectorChain();
  for (const mock of [false, true]) {
    const pool = new SpellVerifyPool({ size: 2, mock, minChunk: 2 });
    const store: IndexWriter = await e.open(await e.newDb(), { mock });
    try {
      const f: Follower = new Follower(store, chain, { startHeight: 1, check: pool.check });
      await f.syncOnce();
      assert.equal(f.status.error, undefined, f.status.error?.message);
      assert.equal(await dumpIndex(store), await replayDump(e, chain, { mock }), `mock ${mock}`);
    } finally {
      await store.close();
      await pool.close();
    }
  }
});

test('--verify-workers / INDEX_VERIFY_WORKERS: default the cores, 0 allowed, bad values refused', () => {
  assert.ok(indexSettings({}).verifyWorkers >= 1);
  assert.equal(indexSettings({ INDEX_VERIFY_WORKERS: '0' }).verifyWorkers, 0);
  assert.equal(indexSettings({ INDEX_VERIFY_WORKERS: '0' }, { verifyWorkers: '3' }).verifyWorkers, 3);
  for (const bad of [' ', '-1', '1.5', 'x', '65'])
    assert.throws(
      () => indexSettings({ INDEX_VERIFY_WORKERS: bad }),
      (err: unknown) => err instanceof CharmsError && err.code === 'CONFIG',
      bad,
    );
});

test('a spell cloned across threads gets its ValueMap and Tagged data back', () => {
  const nested = () => new Tagged(42n, [ValueMap.of({ a: 1n, b: [new ValueMap([[2n, Uint8Array.of(1)]]), null, 1.5] }), 'x', true]);
  const m = ValueMap.of({ k: nested() });
  m.indefiniteKeys = new Set([0]);
  const app = { tag: 't', identity: new Uint8Array(32), vk: new Uint8Array(32) };
  const spell: NormalizedSpell = {
    version: 9,
    tx: { outs: [new Map([[0, m]]), new Map([[0, 5n]])], coins: [{ amount: 1n, dest: Uint8Array.of(9), content: nested() }] },
    app_public_inputs: [[app, nested()]],
    versioned_apps: [],
    mock: false,
  };
  const back = revivedSpell(structuredClone(spell));
  assert.deepEqual(back, spell);
  assert.ok(back.app_public_inputs[0]![1] instanceof Tagged);
  assert.throws(() => revivedSpell(structuredClone({ ...spell, app_public_inputs: [[app, { odd: 1 } as never]] })), /no known kind/);
});

test('an --api-only instance verifies its spell-query routes on its own pool: the answers of the event loop', async (t) => {
  if (!sharedOrSkip(t)) return;
  const e = await engines.engine('sqlite', t);
  if (!e) return;
  await useFastProofBackend(() => {}, { mockProofs: true });
  const db = await e.newDb();
  await (await e.open(db)).close(); // the indexer made the index; the reader serves it
  const svc = await startIndexService({ ...TEST_INDEX_SERVICE, store: await e.open(db, { mode: 'reader' }), apiOnly: true, verifyWorkers: 1 });
  try {
    assert.equal(svc.follower, undefined);
    assert.equal(svc.verifyPool?.size, 1);
    assert.equal(svc.verifyPool.verified, 0);
    const all = corpus();
    const txidOf = (raw: Uint8Array) => {
      try {
        return identifyTx(raw).txid;
      } catch {
        return 'ee'.repeat(32); // unreadable: both answer the same error
      }
    };
    const body = (raw: Uint8Array) => JSON.stringify({ tx_hex: Buffer.from(raw).toString('hex') });
    const here = queryHandler({});
    // concurrent requests over HTTP, batched onto the pool as the indexer's are
    const got = await Promise.all(
      all.map(async (raw) => {
        const r = await h1(svc.server.port, 'PUT', `/spells/${txidOf(raw)}`, body(raw), { 'content-type': 'application/json' });
        return { status: r.status, body: r.body.toString() };
      }),
    );
    const want = await Promise.all(
      all.map(async (raw) => {
        const r = await here({
          method: 'PUT',
          path: `/spells/${txidOf(raw)}`,
          query: new URLSearchParams(),
          headers: {},
          body: async () => new TextEncoder().encode(body(raw)),
        });
        return { status: r.status, body: Buffer.from(r.body ?? '').toString() };
      }),
    );
    assert.deepEqual(got, want);
    const spells = want.filter((w) => w.status === 200).length;
    assert.ok(spells >= 10, `valid spells: ${spells}`);
    assert.ok(svc.verifyPool.verified >= spells, `verified on the pool: ${svc.verifyPool.verified} of ${spells} spells answered`);
  } finally {
    await svc.close();
  }
});
