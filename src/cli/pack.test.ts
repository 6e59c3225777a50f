/**
 * The package is publishable: `npm pack` ships the built CLI and library entry points, the app
 * templates (with their gitignore files, which npm would drop if named .gitignore) and the
 * README, and nothing from src/, CI or dependencies, and no tests, test helpers, fixtures or benchmarks.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../testing/shared.js';

test('npm pack contents: bins, exports, templates and README; no sources, CI or node_modules', () => {
  const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const files = new Set((JSON.parse(r.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path));
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
  const wanted = [
    ...Object.values(pkg.bin as Record<string, string>),
    ...exportTargets(pkg.exports).map((p) => p.replace(/^\.\//, '')),
    'README.md',
    'package.json',
    'scripts/link-bins.mjs',
  ];
  for (const t of ['rust', 'assemblyscript'])
    for (const f of ['gitignore', 'README.md', 'spells/mint-nft.yaml', 'spells/mint-nft-private.yaml', 'spells/mint-token.yaml', 'spells/send.yaml']) wanted.push(`templates/${t}/${f}`);
  // the bundles the CLI starts from, without the code caches this machine wrote (V8- and flag-specific)
  if (existsSync(join(repoRoot, 'dist', 'bundle'))) wanted.push('dist/bundle/cli/main.cjs', 'dist/bundle/runner/worker.cjs', 'scripts/bundle.mjs');
  for (const f of files) assert.ok(!f.endsWith('.v8cache'), `${f}: a code cache should not be in the package`);
  for (const f of wanted) assert.ok(files.has(f), `${f} is missing from the package`);
  for (const f of files) assert.ok(!/^(src|\.ci|node_modules)\//.test(f) && !f.endsWith('.gitignore'), `${f} should not be in the package`);
  // tests, test helpers, fixtures and benchmarks stay out of the published package
  for (const f of files) assert.ok(!/\.test\.|^dist\/(testing|bench)\/|\/fixtures\//.test(f), `${f} is test code and should not be in the package`);
});

/** Every file path named in an `exports` map, conditional entries included. */
function exportTargets(e: unknown): string[] {
  if (typeof e === 'string') return [e];
  if (e !== null && typeof e === 'object') return Object.values(e).flatMap(exportTargets);
  return [];
}
