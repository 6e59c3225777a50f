/**
 * `npm run test:apps`: the published apps (toad-token, eBTC, bro-token) give exactly the cycles
 * real wasmi 1.1.0 gives (vectors/runner-fuel/apps.json, from tools/wasmi-oracle) on each
 * `spell check`-style scenario, and the same verdict. Needs the binaries in the apps folder
 * (docs/apps.md "Exact cycles"); fetches nothing.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { runApp } from '../../runner/index.js';
import { appScenarios } from '../fuel-corpus/app-scenarios.js';
import { appsVectorsPath, readAppBinary, type AppFuelFact } from '../fuel-corpus/apps-dir.js';

const facts = JSON.parse(readFileSync(appsVectorsPath(), 'utf8')) as { oracle: string; scenarios: AppFuelFact[] };
const scenarios = new Map(appScenarios().map((s) => [s.name, s]));

test('every scenario has a recorded wasmi fuel fact', () => {
  assert.deepEqual(
    [...scenarios.keys()].filter((n) => !facts.scenarios.some((f) => f.name === n)),
    [],
  );
});

for (const fact of facts.scenarios) {
  test(`${fact.name}: ${fact.verdict}, ${fact.fuel} cycles as wasmi 1.1.0`, async () => {
    const s = scenarios.get(fact.name);
    assert.ok(s, `scenario ${fact.name} is defined in app-scenarios.ts`);
    const wasm = readAppBinary(s.binary);
    const r = await runApp({ wasm, stdin: s.stdin, inThread: true });
    assert.equal(r.ok, fact.verdict === 'ok', r.error);
    assert.equal(r.cycles, BigInt(fact.fuel));
  });
}
