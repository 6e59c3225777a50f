import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
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

test('a vector test file whose vectors are missing (CHARMS_SHARED_DIR pointing at nothing): skips normally, fails under CHARMS_REQUIRE_ALL=1', () => {
  const file = join(repoRoot, 'dist', 'groth16', 'constants.test.js');
  const env: NodeJS.ProcessEnv = { ...process.env, CHARMS_SHARED_DIR: '/nonexistent-shared', CHARMS_REQUIRE_ALL: '' };
  delete env.NODE_TEST_CONTEXT; // the child reports on stdout, not to this runner
  const run = (extra: Record<string, string>) =>
    spawnSync(process.execPath, ['--test', '--test-reporter=tap', file], { encoding: 'utf8', env: { ...env, ...extra } });
  const lax = run({});
  assert.equal(lax.status, 0, lax.stdout);
  assert.match(lax.stdout, /# skipped [1-9]/);
  const strict = run({ CHARMS_REQUIRE_ALL: '1' });
  assert.equal(strict.status, 1);
  assert.match(strict.stdout, /CHARMS_REQUIRE_ALL=1 but test vectors not found at \/nonexistent-shared\/vectors/);
});

test('the vectors are in the repository, and .ci/run does not look for ../shared', () => {
  assert.ok(existsSync(join(repoRoot, 'vectors', 'chain')) && existsSync(join(repoRoot, 'vectors', 'keys', 'vk')));
  const ci = readFileSync(join(repoRoot, '.ci', 'run'), 'utf8');
  assert.doesNotMatch(ci, /\.\.\/shared/);
});

test('vectors/PROVENANCE.md names every vector file, and every file it names exists', () => {
  const root = join(repoRoot, 'vectors');
  const files = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));
  const onDisk = files('')
    .filter((f) => f !== 'PROVENANCE.md')
    .sort();
  const table = readFileSync(join(root, 'PROVENANCE.md'), 'utf8');
  const named = [...table.matchAll(/^\| `([^`]+)`/gm)].map((m) => m[1]!);
  const covers = (f: string) => named.some((n) => n === f || (n.endsWith('/*.json') && f.startsWith(n.slice(0, -6)) && f.endsWith('.json')));
  assert.deepEqual(
    onDisk.filter((f) => !covers(f)),
    [],
    'vector files missing from PROVENANCE.md',
  );
  assert.deepEqual(
    named.filter((n) => !n.includes('*') && !existsSync(join(root, n))),
    [],
    'PROVENANCE.md rows without a file',
  );
  assert.ok(onDisk.length > 100);
});
