/**
 * The package is publishable: `npm pack` ships the built CLI and library entry points, the app
 * templates (with their gitignore files, which npm would drop if named .gitignore) and the
 * README, and nothing from src/, CI or dependencies.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../testing/shared.js';

test('npm pack contents: bins, exports, templates and README; no sources, CI or node_modules', () => {
  const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const files = new Set((JSON.parse(r.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path));
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
  const wanted = [
    ...Object.values(pkg.bin as Record<string, string>),
    ...Object.values(pkg.exports as Record<string, string>).map((p) => p.replace(/^\.\//, '')),
    'README.md',
    'package.json',
    'scripts/link-bins.mjs',
  ];
  for (const t of ['rust', 'assemblyscript'])
    for (const f of ['gitignore', 'README.md', 'spells/mint-nft.yaml', 'spells/mint-nft-private.yaml', 'spells/mint-token.yaml', 'spells/send.yaml']) wanted.push(`templates/${t}/${f}`);
  for (const f of wanted) assert.ok(files.has(f), `${f} is missing from the package`);
  for (const f of files) assert.ok(!/^(src|\.ci|node_modules)\//.test(f) && !f.endsWith('.gitignore'), `${f} should not be in the package`);
});
