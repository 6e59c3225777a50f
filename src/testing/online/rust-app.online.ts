/**
 * Online suite (`npm run test:online`, not part of `npm test` or CI): what needs the internet.
 * A new Rust app project depends on `charms-sdk` from crates.io, so building it fetches crates;
 * offline the build can only fail. Needs cargo and the wasm32-wasip1 target
 * (`rustup target add wasm32-wasip1`); a missing one is a failure here, never a skip.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../../cli/charms.js', import.meta.url));
const charms = (args: string[], cwd: string) => spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', timeout: 15 * 60_000 });

test('a new Rust app project builds for real (crates from crates.io) and its vk is the SHA-256 of the binary', { timeout: 20 * 60_000 }, () => {
  const root = mkdtempSync(join(tmpdir(), 'charms-online-'));
  try {
    assert.equal(charms(['app', 'new', 'my-token'], root).status, 0);
    const dir = join(root, 'my-token');
    const built = charms(['app', 'build'], dir);
    assert.equal(built.status, 0, built.stderr);
    const wasm = built.stdout.trim();
    assert.equal(wasm, join(dir, 'target', 'wasm32-wasip1', 'release', 'my-token.wasm'));
    assert.ok(existsSync(wasm));
    const vk = charms(['app', 'vk', wasm], dir);
    assert.equal(vk.status, 0, vk.stderr);
    assert.equal(vk.stdout.trim(), createHash('sha256').update(readFileSync(wasm)).digest('hex'));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
