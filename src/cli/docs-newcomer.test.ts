/**
 * What the newcomer trial found in the docs stays fixed: npm 11's install-script policy declared
 * for every dependency that has one, the Getting-started block waits for the server it starts,
 * and the pages state what is true (app build's compiler, the wallet page's links, mock marks,
 * where the CLI follows the spec).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../testing/shared.js';

const read = (...p: string[]) => readFileSync(join(repoRoot, ...p), 'utf8');

test('every installed dependency with an install script is covered by package.json allowScripts', () => {
  const allow = Object.keys(JSON.parse(read('package.json')).allowScripts ?? {});
  const nm = join(repoRoot, 'node_modules');
  const dirs = readdirSync(nm).flatMap((d) => (d.startsWith('@') ? readdirSync(join(nm, d)).map((s) => `${d}/${s}`) : d.startsWith('.') ? [] : [d]));
  const withScripts = dirs.filter((d) => {
    const f = join(nm, d, 'package.json');
    if (!existsSync(f)) return false;
    const s = JSON.parse(readFileSync(f, 'utf8')).scripts ?? {};
    return ['preinstall', 'install', 'postinstall'].some((k) => k in s);
  });
  assert.ok(withScripts.length > 0, 'esbuild has one');
  for (const d of withScripts) assert.ok(allow.includes(d), `${d} runs an install script but is not in allowScripts`);
});

test('README: npm ci before npm install -g; the server started in the background is waited for, boundedly', () => {
  const readme = read('README.md');
  assert.match(readme, /`npm install -g \.` alone stops with `tsc: not found`/);
  const block = /Run a proving service[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)![1]!.split('\n');
  const bg = block.findIndex((l) => /&\s*(#.*)?$/.test(l));
  assert.ok(bg >= 0);
  assert.match(block[bg + 1]!, /^for i in \$\(seq \d+\); do curl -sf http:\/\/localhost:17784\/ready && break; sleep [\d.]+; done/);
});

test('docs: app build compiler, the wallet page links and decimals, mock marks, spec-over-Rust choices', () => {
  assert.doesNotMatch(read('docs', 'apps.md'), /also finds the compiler installed with charms-ts\)/);
  const q = read('docs', 'query-service.md');
  for (const s of ['?utxos=', '?txid=', '"mock":true', 'CHIP-0420', 'decimals']) assert.ok(q.includes(s), s);
  const cli = read('docs', 'cli.md');
  assert.match(cli, /## Where we follow the spec rather than the Rust CLI/);
  for (const s of ['`.svc/`', '`spell vk --mock`', '`--version`']) assert.ok(cli.includes(s), s);
});
