/**
 * Seeded fuzz of every decoder that reads hostile input: a few thousand mutants each, and the only
 * acceptable failure is a CharmsError (a 4xx for the servers). `npm run fuzz` runs the same
 * targets for longer.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { describeFailures, fuzz } from './harness.js';
import { fuzzTargets } from './targets.js';
import { hasShared } from '../shared.js';
import { skipOrFail } from '../require.js';
import { shutdownRunner } from '../../runner/index.js';

after(() => shutdownRunner());

const ITERATIONS = 3000;
const NEEDS_SHARED = new Set(['bitcoin-tx', 'tx-inputs', 'bitcoin-block', 'cardano-tx']);

for (const target of fuzzTargets()) {
  test(`fuzz ${target.name}: ${ITERATIONS} mutants give answers or CharmsErrors only`, { timeout: 300_000 }, async (t) => {
    if (NEEDS_SHARED.has(target.name) && !hasShared) return skipOrFail(t, 'test vectors not found (CHARMS_SHARED_DIR): no chain transactions to mutate');
    const s = await fuzz(target, { iterations: ITERATIONS, seed: 0x13 });
    assert.equal(s.iterations, ITERATIONS);
    assert.equal(s.failures.length, 0, describeFailures(s));
    assert.ok(s.accepted > 0 && Object.keys(s.refused).length > 0, `${target.name}: the mutants should hit both accepting and refusing paths`);
  });
}
