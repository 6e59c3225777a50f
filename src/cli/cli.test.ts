import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { commandTree } from './commands.js';
import { completionScript, SHELLS } from './completions.js';
import { parseArgv, helpText } from './parse.js';
import type { CommandDef } from './define.js';

const bin = fileURLToPath(new URL('./charms.js', import.meta.url));
const charms = (args: string[], cwd?: string) =>
  spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', env: { ...process.env, CHARMS_DEBUG: '' } });

const allNames = (c: CommandDef): string[] => [
  ...(c.subcommands ?? []).filter((s) => !s.hidden).flatMap((s) => [s.name, ...allNames(s)]),
];

test('completions for every shell name every visible subcommand', () => {
  const root = commandTree('charms');
  const names = allNames(root);
  assert.ok(names.includes('show-spell') && names.includes('keygen') && names.includes('dest'));
  for (const shell of SHELLS) {
    const script = completionScript(shell, root);
    for (const n of names) assert.ok(script.includes(n), `${shell} completion lacks ${n}`);
    assert.ok(!script.includes('install-circuit-files'), `${shell} completion shows a hidden command`);
  }
});

test('`charms completions bash|zsh|fish` prints a script naming every subcommand', () => {
  const names = allNames(commandTree('charms'));
  for (const shell of ['bash', 'zsh', 'fish']) {
    const r = charms(['completions', shell]);
    assert.equal(r.status, 0, r.stderr);
    for (const n of names) assert.ok(r.stdout.includes(n), `${shell}: ${n}`);
  }
  const bad = charms(['completions', 'tcsh']);
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /possible values/);
});

test('argument parser: defaults, required options, repeatable values, aliases, unknown flags', () => {
  const root = commandTree('charms');
  const r = parseArgv(root, ['spell', 'prove', '--change-address', 'bc1q', '--app-bins', 'a.wasm', 'b.wasm', '--collateral', 'x:0']);
  assert.equal(r.parsed.opts['fee-rate'], '2.0');
  assert.deepEqual(r.parsed.opts['app-bins'], ['a.wasm', 'b.wasm']);
  assert.equal(r.parsed.opts['collateral-utxo'], 'x:0');
  assert.throws(() => parseArgv(root, ['spell', 'prove']), /--change-address/);
  assert.throws(() => parseArgv(root, ['tx', 'show-spell', '--tx']), /value is required/);
  assert.throws(() => parseArgv(root, ['spell', 'nope']), /unrecognized subcommand/);
  assert.throws(() => parseArgv(root, ['util', 'dest', '--bogus']), /unexpected argument/);
  assert.match(helpText(r.path), /--collateral-utxo <UTXO>.*aliases: --collateral/);
});

test('`app keygen` twice: the second run fails and the first key is untouched; mode 0600', () => {
  const dir = mkdtempSync(join(tmpdir(), 'charms-keygen-'));
  const first = charms(['app', 'keygen'], dir);
  assert.equal(first.status, 0, first.stderr);
  const file = join(dir, '.svc', 'app-key.json');
  const text = readFileSync(file, 'utf8');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const key = JSON.parse(text);
  assert.match(key.secret_key, /^[0-9a-f]{64}$/);
  assert.equal(first.stdout.trim(), key.vk);
  const second = charms(['app', 'keygen'], dir);
  assert.notEqual(second.status, 0);
  assert.match(second.stderr, /^Error: .*already exists/);
  assert.equal(second.stderr.trim().split('\n').length, 1, 'one-line error');
  assert.equal(readFileSync(file, 'utf8'), text);
  // vk from the key file; --pubkey from the same file gives the same vk
  assert.equal(charms(['app', 'vk'], dir).stdout.trim(), key.vk);
  assert.equal(charms(['app', 'vk', '--pubkey', file], dir).stdout.trim(), key.vk);
});

test('`app sign` and `app verify` round-trip; a tampered binary fails', () => {
  const dir = mkdtempSync(join(tmpdir(), 'charms-sign-'));
  assert.equal(charms(['app', 'keygen'], dir).status, 0);
  const wasm = join(dir, 'app.wasm');
  spawnSync('sh', ['-c', `printf 'test wasm binary' > ${wasm}`]);
  const s = charms(['app', 'sign', '--bin', wasm], dir);
  assert.equal(s.status, 0, s.stderr);
  const sigFile = `${wasm}.sig.yaml`;
  assert.match(readFileSync(sigFile, 'utf8'), /^[0-9a-f]{64}:\n {2}public_key: [0-9a-f]{64}\n {2}signature: [0-9a-f]{128}\n$/);
  const v = charms(['app', 'verify', '--bin', wasm], dir);
  assert.equal(v.status, 0, v.stderr);
  const json = join(dir, 'sig.json');
  assert.equal(charms(['app', 'sign', '--bin', wasm, '--out', json], dir).status, 0);
  assert.equal(charms(['app', 'verify', '--bin', wasm, '--sig', json], dir).status, 0);
  spawnSync('sh', ['-c', `printf 'other' > ${wasm}`]);
  const bad = charms(['app', 'verify', '--bin', wasm], dir);
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /does not verify/);
});

test('`app sign --out <key file>` refuses and leaves the secret key in place', () => {
  const dir = mkdtempSync(join(tmpdir(), 'charms-sign-key-'));
  assert.equal(charms(['app', 'keygen'], dir).status, 0);
  const keyFile = join(dir, '.svc', 'app-key.json');
  const before = readFileSync(keyFile, 'utf8');
  const wasm = join(dir, 'app.wasm');
  spawnSync('sh', ['-c', `printf 'test wasm binary' > ${wasm}`]);
  for (const out of ['.svc/app-key.json', keyFile]) {
    const r = charms(['app', 'sign', '--bin', wasm, '--out', out], dir);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /holds a secret key: refusing to overwrite/);
    assert.equal(r.stderr.trim().split('\n').length, 1, 'one-line error');
    assert.equal(readFileSync(keyFile, 'utf8'), before, 'the key file is untouched');
  }
  // another key-holding file (a copy under another name) is protected too
  const copy = join(dir, 'backup.json');
  spawnSync('cp', [keyFile, copy]);
  assert.notEqual(charms(['app', 'sign', '--bin', wasm, '--out', copy], dir).status, 0);
  assert.equal(readFileSync(copy, 'utf8'), before);
  // an existing signature file is replaced as before
  const sig = join(dir, 'sig.json');
  assert.equal(charms(['app', 'sign', '--bin', wasm, '--out', sig], dir).status, 0);
  assert.equal(charms(['app', 'sign', '--bin', wasm, '--out', sig], dir).status, 0);
  assert.match(readFileSync(sig, 'utf8'), /"signature"/);
});

test('bad inputs give one-line errors and a non-zero exit, never a stack trace', () => {
  const cases: [string[], RegExp][] = [
    [['tx', 'show-spell', '--tx', 'zz'], /hex/],
    [['app', 'vk', '--pubkey', '/nonexistent'], /cannot read/],
    [['util', 'dest'], /exactly one of --addr or --apps/],
    [['util', 'dest', '--apps', 'n/00/00', '--chain', 'bitcoin'], /--apps only works with Cardano/],
    [['util', 'dest', '--addr', 'notanaddress'], /could not parse address/],
  ];
  for (const [args, re] of cases) {
    const r = charms(args);
    assert.notEqual(r.status, 0, args.join(' '));
    assert.match(r.stderr, re, args.join(' '));
    assert.equal(r.stderr.trim().split('\n').length, 1, `${args.join(' ')}: ${r.stderr}`);
    assert.ok(!/\n\s+at /.test(r.stderr));
  }
});

test('`spell vk` prints {prover, version, vk}; --mock adds mock and uses the mock vk', () => {
  const r = charms(['spell', 'vk']);
  assert.equal(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  assert.deepEqual(Object.keys(j), ['prover', 'version', 'vk']);
  assert.equal(j.prover, false);
  assert.equal(j.version, 15);
  assert.equal(j.vk, '00425796f4c4fa050043eee14d801b4f935244e44aad6a28de0cd5cb3de0ae52');
  const m = JSON.parse(charms(['spell', 'vk', '--mock']).stdout);
  assert.deepEqual(Object.keys(m), ['mock', 'prover', 'version', 'vk']);
  assert.equal(m.vk, '7c38e8639a2eac0074cee920982b92376513e8940f4a7ca6859f17a728af5b0e');
  const p = spawnSync(process.execPath, [fileURLToPath(new URL('./charms-prover.js', import.meta.url)), 'spell', 'vk'], { encoding: 'utf8' });
  assert.equal(JSON.parse(p.stdout).prover, true);
});

test('`charms --version` names the package and the protocol version; `-o` without `--payload` is a usage error', () => {
  const pkg = JSON.parse(readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8')).version;
  for (const flag of ['--version', '-V']) {
    const r = charms([flag]);
    assert.equal(r.status, 0);
    assert.equal(r.stdout, `charms ${pkg} (Charms protocol version 15)\n`);
  }
  for (const args of [['-o', 'cbor'], ['--output', 'json'], ['--output=cbor']]) {
    const r = charms(['spell', 'prove', '--change-address', 'bc1q', ...args]);
    assert.equal(r.status, 2, args.join(' '));
    assert.match(r.stderr, /^Error: the argument '--output <FORMAT>' requires '--payload'/);
  }
  const root = commandTree('charms');
  assert.equal(parseArgv(root, ['spell', 'prove', '--change-address', 'bc1q', '--payload', '-o', 'cbor']).parsed.opts['output'], 'cbor');
});
