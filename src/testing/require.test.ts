import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from './shared.js';
import { skipOrFail } from './require.js';

test('CHARMS_REQUIRE_ALL=1 turns a missing prerequisite into a failure; without it the test skips', () => {
  const skipped: string[] = [];
  const t = { skip: (m?: string) => void skipped.push(m ?? '') };
  const saved = process.env.CHARMS_REQUIRE_ALL;
  try {
    delete process.env.CHARMS_REQUIRE_ALL;
    // a made-up prerequisite, and its notice kept here: the suite's output must not report a skip
    // that did not happen
    const notices: string[] = [];
    skipOrFail(t, 'frobnicator not installed', (l) => void notices.push(l));
    assert.deepEqual(skipped, ['frobnicator not installed']);
    assert.deepEqual(notices, ['NOTICE: frobnicator not installed: test skipped\n']);
    process.env.CHARMS_REQUIRE_ALL = '1';
    assert.throws(() => skipOrFail(t, 'frobnicator not installed', (l) => void notices.push(l)), /CHARMS_REQUIRE_ALL=1 but frobnicator not installed/);
    assert.equal(notices.length, 1);
    assert.equal(skipped.length, 1);
  } finally {
    if (saved === undefined) delete process.env.CHARMS_REQUIRE_ALL;
    else process.env.CHARMS_REQUIRE_ALL = saved;
  }
});

test('a vector test file without ../shared: skips normally, fails under CHARMS_REQUIRE_ALL=1', () => {
  const file = join(repoRoot, 'dist', 'proof', 'constants.test.js');
  const env: NodeJS.ProcessEnv = { ...process.env, CHARMS_SHARED_DIR: '/nonexistent-shared', CHARMS_REQUIRE_ALL: '' };
  delete env.NODE_TEST_CONTEXT; // the child reports on stdout, not to this runner
  const run = (extra: Record<string, string>) => spawnSync(process.execPath, ['--test', file], { encoding: 'utf8', env: { ...env, ...extra } });
  const lax = run({});
  assert.equal(lax.status, 0, lax.stdout);
  assert.match(lax.stdout, /# skipped [1-9]/);
  const strict = run({ CHARMS_REQUIRE_ALL: '1' });
  assert.equal(strict.status, 1);
  assert.match(strict.stdout, /CHARMS_REQUIRE_ALL=1 but \.\.\/shared not found at \/nonexistent-shared/);
});

test('.ci/run stops with a message naming what is missing when the shared vectors are absent', () => {
  const r = spawnSync('bash', [join(repoRoot, '.ci', 'run')], { encoding: 'utf8', env: { ...process.env, CHARMS_SHARED_DIR: '/nonexistent-shared' } });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /^ci: missing \/nonexistent-shared\/vectors: CI needs the shared specification vectors/);
});
