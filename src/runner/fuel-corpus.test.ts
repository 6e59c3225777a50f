/**
 * Cycles equal real wasmi 1.1.0's fuel on the committed corpus (vectors/runner-fuel/, from
 * tools/wasmi-oracle): hand-written cases per translator rule, 2000 seeded random modules and
 * the AssemblyScript template app. Cases listed in known-gaps.json are the known differences:
 * they are asserted to still differ (with the count we had), so a fix must shrink the list.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fromHex } from '../util/bytes.js';
import { readCorpus, readGaps } from '../testing/fuel-corpus/corpus.js';
import { runApp } from './index.js';

const corpus = readCorpus();
const gaps = readGaps();

test('the fuel corpus is the committed one (hand cases, 2000 random modules, template app)', () => {
  assert.ok(corpus.cases.length >= 2200, `${corpus.cases.length} cases`);
  const names = new Set(corpus.cases.map((c) => c.name));
  assert.equal(names.size, corpus.cases.length, 'case names are unique');
  for (const g of Object.keys(gaps)) assert.ok(names.has(g), `known gap ${g} is a corpus case`);
});

test('cycles equal wasmi 1.1.0 fuel on every corpus case outside the known gaps', async () => {
  const wrong: string[] = [];
  const fixed: string[] = [];
  for (const c of corpus.cases) {
    const r = await runApp({
      wasm: fromHex(c.wasm),
      stdin: c.stdin ? fromHex(c.stdin) : new Uint8Array(0),
      ...(c.budget ? { fuelLimit: BigInt(c.budget) } : {}),
      inThread: true,
    });
    const verdictOk = r.ok === (c.expect.verdict === 'ok');
    const same = verdictOk && r.cycles === BigInt(c.expect.fuel);
    const gap = gaps[c.name];
    if (gap === undefined) {
      if (!same) wrong.push(`${c.name}: ours ${r.ok ? 'ok' : 'fail'} ${r.cycles}, wasmi ${c.expect.verdict} ${c.expect.fuel}`);
    } else if (same) fixed.push(c.name);
    else if (r.cycles !== BigInt(gap)) wrong.push(`${c.name} (known gap): ours now ${r.cycles}, recorded ${gap}, wasmi ${c.expect.fuel}`);
  }
  assert.deepEqual(fixed, [], 'these known gaps now match: remove them from vectors/runner-fuel/known-gaps.json');
  assert.deepEqual(wrong.slice(0, 40), [], `${wrong.length} cases differ`);
});
