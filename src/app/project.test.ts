/**
 * `app build` / `app sign` / `app verify` find the binary where cargo puts it: names from
 * `cargo metadata` (real cargo), hyphens kept, workspace target directories, cargo's output on
 * stderr and only the path on stdout.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { releaseWasmPath } from './project.js';
import { skipOrFail } from '../testing/require.js';

const bin = fileURLToPath(new URL('../cli/charms.js', import.meta.url));
const env: NodeJS.ProcessEnv = { ...process.env };
delete env.CARGO_TARGET_DIR;
const charms = (args: string[], cwd: string) => spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', env });

const hasCargo = spawnSync('cargo', ['--version']).status === 0;
/** Whether rustc can build for wasm32-wasip1 here (the standard library for it is installed). */
function hasWasiTarget(): boolean {
  const r = spawnSync('rustc', ['--print', 'sysroot'], { encoding: 'utf8' });
  return r.status === 0 && existsSync(join(r.stdout.trim(), 'lib', 'rustlib', 'wasm32-wasip1'));
}

/** A crate without dependencies (cargo needs no registry for it). */
function crate(dir: string, name: string, extra = ''): string {
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'Cargo.toml'), `[package]\nname = "${name}"\nversion = "0.1.0"\nedition = "2021"\n${extra}`);
  writeFileSync(join(dir, 'src', 'main.rs'), 'fn main() {}\n');
  return dir;
}

/** cargo is a prerequisite like Redis: skipped without it, a failure under CHARMS_REQUIRE_ALL=1 (CI installs it). */
const cargoOrSkip = (t: { skip: (msg?: string) => void }): boolean => hasCargo || (skipOrFail(t, 'cargo not installed (CI installs it)'), false);

test('the release binary path comes from cargo metadata: hyphens kept, [[bin]] names, workspace target dir', (t) => {
  if (!cargoOrSkip(t)) return;
  const root = mkdtempSync(join(tmpdir(), 'charms-cargo-'));
  const alone = crate(join(root, 'my-token'), 'my-token', '[workspace]\n');
  assert.equal(releaseWasmPath(alone), join(alone, 'target', 'wasm32-wasip1', 'release', 'my-token.wasm'));
  const renamed = crate(join(root, 'renamed'), 'pkg-name', '[workspace]\n[[bin]]\nname = "my-app"\npath = "src/main.rs"\n');
  assert.equal(releaseWasmPath(renamed), join(renamed, 'target', 'wasm32-wasip1', 'release', 'my-app.wasm'));
  const ws = join(root, 'ws');
  mkdirSync(ws);
  writeFileSync(join(ws, 'Cargo.toml'), '[workspace]\nmembers = ["apps/my-nft"]\nresolver = "2"\n');
  const member = crate(join(ws, 'apps', 'my-nft'), 'my-nft');
  assert.equal(releaseWasmPath(member), join(ws, 'target', 'wasm32-wasip1', 'release', 'my-nft.wasm'));
});

test('app build: cargo build --locked, cargo output on stderr, only the path on stdout', (t) => {
  if (!cargoOrSkip(t)) return;
  const dir = crate(join(mkdtempSync(join(tmpdir(), 'charms-cargo-')), 'my-token'), 'my-token', '[workspace]\n');
  const r = charms(['app', 'build'], dir);
  assert.match(r.stderr, /running cargo build --locked --release --target=wasm32-wasip1/);
  assert.ok(existsSync(join(dir, 'Cargo.lock')), 'a fresh app gets its Cargo.lock before the locked build');
  const expected = join(dir, 'target', 'wasm32-wasip1', 'release', 'my-token.wasm');
  if (hasWasiTarget()) {
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${expected}\n`);
    assert.ok(existsSync(expected));
  } else {
    // the compile step itself cannot run here: cargo's complaint is on stderr, nothing on stdout
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /wasm32-wasip1/);
    assert.match(r.stderr, /Error: cargo build --locked --release --target=wasm32-wasip1 failed/);
  }
});

test('app sign / app verify default to the binary cargo names (my-token.wasm, not my_token.wasm)', (t) => {
  if (!cargoOrSkip(t)) return;
  const dir = crate(join(mkdtempSync(join(tmpdir(), 'charms-cargo-')), 'my-token'), 'my-token', '[workspace]\n');
  const wasm = join(dir, 'target', 'wasm32-wasip1', 'release', 'my-token.wasm');
  mkdirSync(join(wasm, '..'), { recursive: true });
  writeFileSync(wasm, Uint8Array.of(0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0)); // as if built
  assert.equal(charms(['app', 'keygen'], dir).status, 0);
  const signed = charms(['app', 'sign'], dir);
  assert.equal(signed.status, 0, signed.stderr);
  assert.equal(signed.stdout, `${wasm}.sig.yaml\n`);
  const verified = charms(['app', 'verify'], dir);
  assert.equal(verified.status, 0, verified.stderr);
  assert.match(verified.stdout, /^[0-9a-f]{64}: OK\n$/);
});
