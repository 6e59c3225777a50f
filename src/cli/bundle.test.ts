/**
 * The CLI runs from the bundles `npm run build` makes (util/bundle.ts): the same answers as from
 * the ES modules, with the app runner on the main thread or in its worker threads.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { charmsBin } from '../testing/cli.js';
import { sharedOrSkip } from '../testing/shared.js';
import { skipOrFail } from '../testing/require.js';
import { nftFixture } from '../bench/nft-fixture.js';
import { extractAndVerifySpell } from '../verify/index.js';
import { encodeSpellCbor } from '../model/spell.js';
import { toHex } from '../util/bytes.js';

const dist = fileURLToPath(new URL('..', import.meta.url));
const charms = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [charmsBin, ...args], { encoding: 'utf8', env: { ...process.env, ...env } });

const hasEsbuild = (): boolean => {
  try {
    createRequire(import.meta.url).resolve('esbuild');
    return true;
  } catch {
    return false;
  }
};

// the three ways a command can run its contracts
const MODES: Record<string, Record<string, string>> = {
  'bundle, main thread': {},
  'bundle, worker threads': { APP_RUN_ISOLATION: 'worker' },
  'ES modules, worker threads': { CHARMS_NO_BUNDLE: '1', APP_RUN_ISOLATION: 'worker' },
};

test('the build writes the CLI and worker bundles: module URLs rewritten, mcl-wasm decoded natively, ioredis left out', (t) => {
  if (!hasEsbuild()) return skipOrFail(t, 'esbuild is not installed: no bundles (the CLI runs from the ES modules)');
  for (const f of ['cli/main.cjs', 'runner/worker.cjs', 'prover/proof-worker.cjs', 'util/bundle-worker.cjs'])
    assert.ok(existsSync(join(dist, 'bundle', f)), `dist/bundle/${f} is missing`);
  const main = readFileSync(join(dist, 'bundle', 'cli', 'main.cjs'), 'utf8');
  assert.ok(!main.includes('import.meta'));
  assert.match(main, /Buffer\.from\(wasmBase64, ?["']base64["']\)/);
  assert.ok(!main.includes('atob(wasmBase64)'));
  // ioredis stays outside, required by the first Redis cache (infra/cache.ts), not at start
  assert.ok(main.includes('("ioredis")') && !main.includes('require("ioredis")') && !main.includes('class Redis extends'));
  const a = charms(['--version']);
  const b = charms(['--version'], { CHARMS_NO_BUNDLE: '1' });
  assert.equal(a.status, 0, a.stderr);
  assert.equal(a.stdout, b.stdout);
  assert.match(a.stdout, /^charms \d+\.\d+\.\d+/);
  assert.equal(charms(['spell', '--help']).stdout, charms(['spell', '--help'], { CHARMS_NO_BUNDLE: '1' }).stdout);
});

test('spell check and spell prove --mock of a 2-app spend: the same cycles and the same spell from the bundle (main thread, workers) and from the ES modules', async (t) => {
  if (!sharedOrSkip(t)) return;
  const { app, f, mint, spendYaml } = await nftFixture();
  const [tx1] = await mint(1);
  const dir = mkdtempSync(join(tmpdir(), 'charms-bundle-cli-'));
  writeFileSync(join(dir, 'spell.yaml'), spendYaml(tx1!));
  const inputs = ['--spell', join(dir, 'spell.yaml'), '--app-bins', app.path, '--prev-txs', tx1!, '--prev-txs', f.hex];
  const checks = new Set<string>();
  const spells = new Set<string>();
  for (const [mode, env] of Object.entries(MODES)) {
    const check = charms(['spell', 'check', '--mock', ...inputs], env);
    assert.equal(check.status, 0, `${mode}: ${check.stderr}`);
    assert.match(check.stderr, /cycles spent: \[\d+, \d+\]\n$/);
    checks.add(check.stderr);
    const proved = charms(['spell', 'prove', '--mock', ...inputs, '--change-address', f.changeAddress], env);
    assert.equal(proved.status, 0, `${mode}: ${proved.stderr}`);
    const [tx] = JSON.parse(proved.stdout) as { bitcoin: string }[];
    const read = extractAndVerifySpell({ bitcoin: tx!.bitcoin }, true); // the mock proof checked
    assert.equal(read.mock, true);
    spells.add(toHex(encodeSpellCbor(read)));
  }
  assert.equal(checks.size, 1, [...checks].join('\n'));
  assert.equal(spells.size, 1);
});

test('charms server --mock from the bundle loads both WASM pairing backends (no fallback to pure JS), in its proof threads too; its contracts run in workers whatever APP_RUN_ISOLATION says', async () => {
  const env = { ...process.env, SVC_PROOF_THREADS: '1', APP_RUN_ISOLATION: 'thread' };
  const child = spawn(process.execPath, [charmsBin, 'server', '--mock', '--port', '0', '--ip', '127.0.0.1'], { stdio: ['ignore', 'ignore', 'pipe'], env });
  let log = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      log += d.toString();
      if (log.includes('Server running') && log.includes('proof thread backends')) resolve();
    });
    child.once('exit', () => reject(new Error(`server exited: ${log}`)));
  });
  const port = Number(/Server running on 127\.0\.0\.1:(\d+)/.exec(log)![1]);
  const res = await fetch(`http://127.0.0.1:${port}/ready`);
  assert.equal(res.status, 200);
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  assert.doesNotMatch(log, /unavailable/, log);
  assert.match(log, /"msg":"proof thread backends","backend":"mcl-wasm"/, log);
  assert.match(log, /"msg":"app runner limits".*"isolation":"worker"/, log);
});
