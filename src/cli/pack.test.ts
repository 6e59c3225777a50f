/**
 * The package is publishable: `npm pack` ships the built CLI and library entry points, the app
 * templates (with their gitignore files, which npm would drop if named .gitignore) and the
 * README, and nothing from src/, CI or dependencies, and no tests, test helpers, fixtures or benchmarks.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
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
    for (const f of ['gitignore', 'README.md', 'spells/mint-nft.yaml', 'spells/mint-nft-private.yaml', 'spells/mint-token.yaml', 'spells/send.yaml'])
      wanted.push(`templates/${t}/${f}`);
  // the bundles the CLI starts from, without the code caches this machine wrote (V8- and flag-specific)
  if (existsSync(join(repoRoot, 'dist', 'bundle'))) wanted.push('dist/bundle/cli/main.cjs', 'dist/bundle/runner/worker.cjs', 'scripts/bundle.mjs');
  for (const f of files) assert.ok(!f.endsWith('.v8cache'), `${f}: a code cache should not be in the package`);
  for (const f of wanted) assert.ok(files.has(f), `${f} is missing from the package`);
  for (const f of files) assert.ok(!/^(src|\.ci|node_modules)\//.test(f) && !f.endsWith('.gitignore'), `${f} should not be in the package`);
  // tests, test helpers, fixtures and benchmarks stay out of the published package
  for (const f of files) assert.ok(!/\.test\.|^dist\/(testing|bench)\/|\/fixtures\//.test(f), `${f} is test code and should not be in the package`);
  // and no test helper hides elsewhere: a shipped module (not an entry point) that only test code refers to is one
  const testOnly = [...files]
    .filter((f) => /^dist\/.*\.js$/.test(f) && !f.startsWith('dist/bundle/') && !wanted.includes(f))
    .map((f) => f.replace(/^dist\//, 'src/').replace(/\.js$/, '.ts'))
    .filter((src) => {
      const by = referrers.get(src) ?? [];
      return by.length > 0 && by.every(isTestCode);
    });
  assert.deepEqual(testOnly, [], 'modules only tests use belong in src/testing/ (not shipped)');
});

const isTestCode = (src: string) => /\.test\.ts$|^src\/(testing|bench)\/|\/fixtures\//.test(src);

/** src module → the src files that import it or load it (`new URL('./x.js', import.meta.url)`). */
const referrers = (() => {
  const by = new Map<string, string[]>();
  const walk = (dir: string): string[] =>
    readdirSync(join(repoRoot, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(`${dir}/${e.name}`) : e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [`${dir}/${e.name}`] : [],
    );
  for (const file of walk('src')) {
    const text = readFileSync(join(repoRoot, file), 'utf8');
    for (const m of text.matchAll(/(?:from\s*|import\(\s*|new URL\(\s*)['"](\.\.?\/[^'"]+)\.js['"]/g)) {
      const target = posix.join(posix.dirname(file), `${m[1]}.ts`);
      by.set(target, [...(by.get(target) ?? []), file]);
    }
  }
  return by;
})();

test('the test-helper check sees what it must: a module only tests load is flagged, the real ones are not', () => {
  assert.ok((referrers.get('src/testing/prove-server-child.ts') ?? []).every(isTestCode), 'the prove-server child is loaded by tests only');
  assert.ok(!(referrers.get('src/runner/worker.ts') ?? []).every(isTestCode), 'the runner worker is loaded by library code');
  assert.ok(!(referrers.get('src/infra/cache.ts') ?? []).every(isTestCode));
});

/** Every file path named in an `exports` map, conditional entries included. */
function exportTargets(e: unknown): string[] {
  if (typeof e === 'string') return [e];
  if (e !== null && typeof e === 'object') return Object.values(e).flatMap(exportTargets);
  return [];
}
