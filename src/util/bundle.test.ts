import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { bundleOf } from './bundle.js';
import { noBundleOf } from '../settings/env.js';

/** runBundle in a fresh process (V8 keeps compiled scripts in memory: a second load here would not read the file). */
function load(file: string): { cache: string; value: number; where: string; twice: number } {
  const code = `import { runBundle } from ${JSON.stringify(new URL('./bundle.js', import.meta.url).href)};
    const r = runBundle(${JSON.stringify(file)}, 'now');
    console.log(JSON.stringify({ cache: r.cache, value: r.exports.value, where: r.exports.where, twice: r.exports.f() }));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

const bundleWith = (dir: string, value: number): string => {
  const file = join(dir, 'b.cjs');
  writeFileSync(
    file,
    `#!/usr/bin/env node\nconst path = require('node:path');\nexports.value = ${value};\nexports.where = path.basename(__filename);\nexports.f = () => ${value} * 2;\n`,
  );
  return file;
};

test('runBundle: runs a CommonJS bundle (require, __filename, exports); writes the code cache, then uses it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'charms-bundle-'));
  const file = bundleWith(dir, 41);
  assert.deepEqual(load(file), { cache: 'miss', value: 41, where: 'b.cjs', twice: 82 });
  assert.deepEqual(load(file), { cache: 'hit', value: 41, where: 'b.cjs', twice: 82 });
});

test('runBundle: a cache of another build of the same length is not used (V8 checks only the length); a corrupt one is refused by V8', () => {
  const dir = mkdtempSync(join(tmpdir(), 'charms-bundle-'));
  const file = bundleWith(dir, 41);
  load(file);
  bundleWith(dir, 42); // same length, other code
  utimesSync(file, new Date(), new Date(Date.now() + 5_000));
  assert.deepEqual(load(file), { cache: 'stale', value: 42, where: 'b.cjs', twice: 84 });
  // keep the (valid) header, spoil V8's part
  const cache = readFileSync(`${file}.v8cache`);
  cache.fill(0x5a, 16 + 8);
  writeFileSync(`${file}.v8cache`, cache);
  assert.deepEqual(load(file), { cache: 'rejected', value: 42, where: 'b.cjs', twice: 84 });
  assert.equal(load(file).cache, 'hit'); // rewritten after the refusal
});

test('bundleOf: the bundle of an entry of dist/ when it is at least as new as the entry; none when older, absent or CHARMS_NO_BUNDLE=1', () => {
  const root = mkdtempSync(join(tmpdir(), 'charms-dist-'));
  mkdirSync(join(root, 'cli'));
  mkdirSync(join(root, 'bundle', 'cli'), { recursive: true });
  const esm = join(root, 'cli', 'main.js');
  const cjs = join(root, 'bundle', 'cli', 'main.cjs');
  writeFileSync(esm, '');
  const entry = pathToFileURL(esm);
  assert.equal(bundleOf(entry, false, root), undefined);
  writeFileSync(cjs, '');
  const t = Date.now() / 1000;
  utimesSync(esm, t, t);
  utimesSync(cjs, t + 1, t + 1);
  assert.equal(bundleOf(entry, false, root), cjs);
  assert.equal(bundleOf(pathToFileURL(join(tmpdir(), 'elsewhere.js')), false, root), undefined);
  assert.equal(bundleOf(entry, noBundleOf({ CHARMS_NO_BUNDLE: '1' }), root), undefined);
  assert.equal(bundleOf(entry, noBundleOf({ CHARMS_NO_BUNDLE: '0' }), root), cjs);
  utimesSync(esm, t + 2, t + 2); // a tsc-only rebuild after the bundle
  assert.equal(bundleOf(entry, false, root), undefined);
});
