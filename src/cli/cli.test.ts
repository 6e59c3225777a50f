import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { commandTree } from './commands.js';
import { completionScript, SHELLS } from './completions.js';
import { parseArgv, helpText } from './parse.js';
import type { CommandDef } from './define.js';
import { skipOrFail } from '../testing/require.js';
import { ENV_NAMES } from '../settings/env.js';
import { ENV_HELP } from '../settings/env-help.js';

const bin = fileURLToPath(new URL('./charms.js', import.meta.url));
const charms = (args: string[], cwd?: string) =>
  spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', env: { ...process.env, CHARMS_DEBUG: '' } });

const allNames = (c: CommandDef): string[] => [...(c.subcommands ?? []).filter((s) => !s.hidden).flatMap((s) => [s.name, ...allNames(s)])];

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

/** A directory holding `charms` (a link to the built CLI), to put first on PATH for real shells. */
function charmsOnPath(): { env: NodeJS.ProcessEnv; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'charms-path-'));
  symlinkSync(bin, join(dir, 'charms'));
  return { dir, env: { ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}`, CHARMS_DEBUG: '' } };
}
const hasShell = (sh: string) => spawnSync(sh, ['-c', 'exit 0']).status === 0;

test('COMPLETE=<shell> charms prints a registration script for every shell (clap CompleteEnv); unknown shells and COMPLETE=0 as clap', () => {
  const withEnv = (env: Record<string, string>, args: string[] = []) =>
    spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { ...process.env, CHARMS_DEBUG: '', ...env } });
  const expect: Record<string, RegExp> = {
    bash: /complete -o nospace -o bashdefault -o nosort -F _clap_complete_charms charms/,
    zsh: /^#compdef charms[\s\S]*compdef _clap_dynamic_completer_charms charms/,
    fish: /^complete --keep-order --exclusive --command charms --arguments "\(COMPLETE=fish .* -- \(commandline --current-process --tokenize --cut-at-cursor\) \(commandline --current-token\)\)"/,
    elvish: /set edit:completion:arg-completer\[charms\][\s\S]*_CLAP_COMPLETE_INDEX=/,
    powershell: /Register-ArgumentCompleter -Native -CommandName charms/,
  };
  for (const [shell, re] of Object.entries(expect)) {
    const r = withEnv({ COMPLETE: shell });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, re, shell);
    assert.ok(r.stdout.includes(bin), `${shell}: the completer is this program`);
  }
  // the completion call itself: candidates in each shell's format
  const call = (shell: string, words: string[], index?: number) =>
    withEnv({ COMPLETE: shell, _CLAP_IFS: '\n', ...(index === undefined ? {} : { _CLAP_COMPLETE_INDEX: String(index) }) }, ['--', ...words]).stdout;
  assert.equal(call('bash', ['charms', 'sp'], 1), 'spell');
  assert.deepEqual(call('bash', ['charms', 'tx', 'show-spell', '--chain', ''], 4).split('\n'), ['bitcoin', 'cardano']);
  assert.equal(call('fish', ['charms', 'sp']), 'spell\tWork with spells\n');
  assert.equal(call('zsh', ['charms', 'sp'], 1), 'spell:Work with spells');
  assert.match(call('powershell', ['charms', 'spell', 'prove', '--fee']), /^--fee-rate\t/);
  // COMPLETE=0 or empty: the program runs as usual; an unknown shell is an error
  assert.match(withEnv({ COMPLETE: '0' }, ['--version']).stdout, /^charms /);
  const bad = withEnv({ COMPLETE: 'tcsh' });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /unknown shell `tcsh`, expected one of `bash`, `elvish`, `fish`, `powershell`, `zsh`/);
});

test('source <(COMPLETE=bash charms) in a real bash completes subcommands, options and values', () => {
  const { env } = charmsOnPath();
  const script = `
source <(COMPLETE=bash charms) || exit 9
comp() { COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]}-1)); COMP_LINE="$*"; COMP_POINT=\${#COMP_LINE}; COMP_TYPE=9
  _clap_complete_charms charms "\${COMP_WORDS[COMP_CWORD]}" "\${COMP_WORDS[COMP_CWORD-1]}"; echo "\${COMPREPLY[*]}"; }
complete -p charms
comp charms sp
comp charms spell ""
comp charms spell prove --change
comp charms tx show-spell --chain ""
comp charms spell prove -o ""
comp charms completions f
`;
  const r = spawnSync('bash', ['--norc', '-c', script], { encoding: 'utf8', env });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split('\n'), [
    'complete -o bashdefault -o nosort -o nospace -F _clap_complete_charms charms',
    'spell',
    'check help prove vk --help -h',
    '--change-address',
    'bitcoin cardano',
    'json cbor',
    'fish',
  ]);
});

test('COMPLETE=zsh and COMPLETE=fish registrations work in real zsh and fish', (t) => {
  if (!hasShell('zsh') || !hasShell('fish')) return skipOrFail(t, 'zsh or fish not installed (apt-get install zsh fish)');
  const { env } = charmsOnPath();
  const fish = spawnSync('fish', ['--no-config', '-c', 'COMPLETE=fish charms | source; complete -C "charms sp"; complete -C "charms tx show-spell --chain "'], {
    encoding: 'utf8',
    env,
  });
  assert.equal(fish.status, 0, fish.stderr);
  assert.deepEqual(fish.stdout.trim().split('\n'), ['spell\tWork with spells', 'bitcoin', 'cardano']);
  // zsh: the registered completer, called as the completion system would, hands `_describe` the candidates
  const zsh = spawnSync(
    'zsh',
    [
      '-f',
      '-c',
      `autoload -U compinit; compinit -u -D # -D: no dump file (compinit -d replaces its file by a rename)
source <(COMPLETE=zsh charms)
print -r -- "$_comps[charms]"
_describe() { shift 2; print -rl -- "\${(@P)1}"; }
words=(charms sp); CURRENT=2; _clap_dynamic_completer_charms
words=(charms spell prove -o ""); CURRENT=5; _clap_dynamic_completer_charms`,
    ],
    { encoding: 'utf8', env },
  );
  assert.equal(zsh.status, 0, zsh.stderr);
  assert.deepEqual(zsh.stdout.trim().split('\n'), ['_clap_dynamic_completer_charms', 'spell:Work with spells', 'json', 'cbor']);
});

test('exit codes and parsing as clap: no subcommand, bad values, -o=cbor, usage lines, -V, completions --help', () => {
  // no subcommand: help on stderr, exit 2 (at the top and one level down); --help: stdout, 0
  for (const args of [[], ['spell']]) {
    const r = charms(args);
    assert.equal(r.status, 2, args.join(' '));
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^Usage: charms (spell )?<COMMAND>$/m);
  }
  const help = charms(['--help']);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^ {2}-V, --version +Print version$/m);
  assert.match(help.stdout, /^ {2}help +Print this message/m);
  assert.doesNotMatch(charms(['spell', '--help']).stdout, /--version/);
  // values clap's value parsers refuse: usage errors, exit 2
  for (const [args, re] of [
    [['spell', 'prove', '--change-address', 'x', '--fee-rate', 'abc'], /invalid value 'abc' for '--fee-rate <FEE_RATE>': invalid float literal/],
    [['server', '--port', '99999'], /invalid value '99999' for '--port <PORT>': 99999 is not in 0\.\.=65535/],
    [['query-server', '--port', 'x'], /invalid digit found in string/],
    [['server', '--ip', '1.2.3'], /invalid IP address syntax/],
  ] as [string[], RegExp][]) {
    const r = charms(args);
    assert.equal(r.status, 2, args.join(' '));
    assert.match(r.stderr, re);
  }
  const root = commandTree('charms');
  for (const ok of ['2', '2.5', '1e1', '.5', 'inf'])
    assert.equal(parseArgv(root, ['spell', 'prove', '--change-address', 'x', '--fee-rate', ok]).parsed.opts['fee-rate'], ok);
  // -o=cbor and -ocbor, as clap
  for (const o of ['-o=cbor', '-ocbor'])
    assert.equal(parseArgv(root, ['spell', 'prove', '--change-address', 'x', '--payload', o]).parsed.opts['output'], 'cbor');
  // usage lines name the required options
  assert.match(charms(['tx', 'show-spell', '--help']).stdout, /^Usage: charms tx show-spell \[OPTIONS\] --tx <TX>$/m);
  assert.match(charms(['spell', 'prove', '--help']).stdout, /^Usage: charms spell prove \[OPTIONS\] --change-address <CHANGE_ADDRESS>$/m);
  // completions --help lists the shells and the dynamic set-up
  const c = charms(['completions', '--help']).stdout;
  assert.match(c, /\[possible values: bash, zsh, fish, powershell, elvish\]/);
  assert.match(c, /source <\(COMPLETE=bash charms\)/);
});

test("the servers' --help list their environment variables, from the settings table", () => {
  for (const command of ['server', 'query-server', 'index'] as const) {
    const r = charms([command, '--help']);
    assert.equal(r.status, 0, r.stderr);
    const section = r.stdout.slice(r.stdout.indexOf('\nEnvironment (options override it'));
    assert.ok(section.length > 1, `${command} --help has no Environment section`);
    const listed = [...section.matchAll(/^ {2}([A-Z][A-Z0-9_]+)/gm)].map((m) => m[1]);
    const expected = (Object.keys(ENV_HELP) as (keyof typeof ENV_NAMES)[]).filter((k) => ENV_HELP[k].for.includes(command)).map((k) => ENV_NAMES[k][0]);
    assert.deepEqual(listed, expected, command);
    // the reference's aliases are named with the spec's name
    if (command === 'server') assert.match(section, /^ {2}SVC_PROVE_API_URL \(CHARMS_PROVE_API_URL\)/m);
  }
  const server = charms(['server', '--help']).stdout;
  assert.match(server, /^ {2}SVC_MAX_FEE_RATE +Bitcoin fee-rate cap/m);
  assert.doesNotMatch(server, /ESPLORA_URL|INDEX_DB_URL/);
  const query = charms(['query-server', '--help']).stdout;
  assert.match(query, /^ {2}BITCOIN_RPC_COOKIE +/m);
  assert.doesNotMatch(query, /^ {2}MOCK\b/m, 'query-server takes --mock only');
  assert.match(charms(['index', '--help']).stdout, /^ {2}INDEX_DB_URL +the database/m);
});
