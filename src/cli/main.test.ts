/**
 * The command contract: a command returns its output as a value and `main` prints it (ord's
 * `Output`); errors are one line on stderr with exit 1, usage errors exit 2 (clap's); each
 * command's options are typed from its own definition.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CharmsError } from '../errors.js';
import { ValueMap } from '../codec/value.js';
import { CURRENT_VERSION } from '../model/spell.js';
import { spellVkFor } from '../groth16/constants.js';
import { toHex } from '../util/bytes.js';
import { readSharedJson, readSharedText, sharedOrSkip } from '../testing/shared.js';
import { type CommandDef, defineCommand, type Options, type Run } from './define.js';
import { main, runCli, type CliIo } from './main.js';
import { bytes, documents, json, lines, renderOutput, text, valueOfPlain, withExitCode, yaml, type Output } from './output.js';
import type { spellProveOptions, txShowSpellOptions, utilDestOptions } from './options.js';
import { completionScript } from './completions.js';
import { commandTree } from './commands.js';
import { parseArgv } from './parse.js';

/** An in-memory process: what was written on stdout (bytes) and stderr. */
function memoryIo(env: NodeJS.ProcessEnv = {}): { io: CliIo; out: () => Buffer; err: () => string } {
  const out: Buffer[] = [];
  let err = '';
  const io: CliIo = {
    stdout: (s) => void out.push(Buffer.from(s)),
    stderr: (s) => void (err += s),
    env,
    cwd: process.cwd(),
    readStdin: async () => new Uint8Array(),
  };
  return { io, out: () => Buffer.concat(out), err: () => err };
}

const self = { script: 'test', node: process.execPath };

/** A tree with one command per outcome. */
function testTree(result: () => Promise<Output | void>): CommandDef {
  return {
    name: 'tool',
    about: 'test tool',
    subcommands: [
      defineCommand({
        name: 'go',
        about: 'returns what the test says',
        options: [
          { name: 'n', value: 'N', required: true, help: 'a number' },
          { name: 'loud', help: 'a flag' },
        ] as const,
        run: async ({ opts }) => {
          assert.equal(typeof opts.loud, 'boolean', 'an absent flag is false, not undefined');
          return result();
        },
      }),
    ],
  };
}

async function run(result: () => Promise<Output | void>, argv = ['go', '--n', '1']) {
  const m = memoryIo();
  const code = await runCli(testTree(result), argv, { ...m.io, prover: false }, self);
  return { code, stdout: m.out(), stderr: m.err() };
}

test('renderOutput: each format as the reference prints it', () => {
  const v = ValueMap.of({ a: 1n, b: ['x', true], c: new ValueMap() });
  assert.equal(renderOutput(json(v)), '{"a":1,"b":["x",true],"c":{}}\n');
  assert.equal(renderOutput(json(v, { pretty: true, newline: false })), '{\n  "a": 1,\n  "b": [\n    "x",\n    true\n  ],\n  "c": {}\n}');
  assert.equal(renderOutput(yaml(ValueMap.of({ a: 1n, b: 'x' }))), 'a: 1\nb: x\n');
  assert.equal(renderOutput(documents([ValueMap.of({ a: 1n }), ValueMap.of({ a: 2n })], 'yaml')), '---\na: 1\n\n---\na: 2\n\n');
  assert.equal(renderOutput(documents([ValueMap.of({ a: 1n })], 'json')), '{\n  "a": 1\n}\n');
  assert.equal(renderOutput(documents([], 'json')), '');
  assert.equal(renderOutput(lines('a', 'b')), 'a\nb\n');
  assert.equal(renderOutput(text('as is')), 'as is');
  assert.deepEqual(renderOutput(bytes(new Uint8Array([0xa1, 0]))), new Uint8Array([0xa1, 0]));
});

test('valueOfPlain prints plain data as JSON.stringify does (integers without ".0", undefined fields left out)', () => {
  const plain = { address: '0xab', ready: false, n: 42, nested: { url: 'http://x', skipped: undefined, list: [1, 'two', null] } };
  assert.equal(renderOutput(json(valueOfPlain(plain), { pretty: true })), `${JSON.stringify(plain, null, 2)}\n`);
  assert.throws(() => valueOfPlain({ f: 1.5 }), /only integers/);
});

test('main prints what the command returns; exit code from the output, else 0', async () => {
  const r = await run(async () => json(ValueMap.of({ ok: true })));
  assert.deepEqual([r.code, r.stdout.toString(), r.stderr], [0, '{"ok":true}\n', '']);
  const raw = await run(async () => bytes(new Uint8Array([0xff, 0x00, 0x80])));
  assert.deepEqual([...raw.stdout], [0xff, 0x00, 0x80], 'bytes reach stdout unchanged');
  const notReady = await run(async () => withExitCode(json(ValueMap.of({ ready: false }), { pretty: true }), 1));
  assert.deepEqual([notReady.code, notReady.stdout.toString()], [1, '{\n  "ready": false\n}\n']);
  const nothing = await run(async () => {});
  assert.deepEqual([nothing.code, nothing.stdout.length, nothing.stderr], [0, 0, '']);
});

test('main: an error is one line on stderr, exit 1, nothing on stdout; usage errors exit 2', async () => {
  const failed = await run(async () => {
    throw new CharmsError('INVALID_INPUT', 'bad spell:\n  line two', { cause: new Error('the cause') });
  });
  assert.equal(failed.code, 1);
  assert.equal(failed.stdout.length, 0);
  assert.equal(failed.stderr.trimEnd().split('\n').length, 1, failed.stderr);
  assert.match(failed.stderr, /^Error: bad spell: line two/);
  // an output that cannot be printed (a lone surrogate in JSON) fails before any byte is written
  const unprintable = await run(async () => json(['ok', '\ud800']));
  assert.deepEqual([unprintable.code, unprintable.stdout.length], [1, 0]);
  assert.match(unprintable.stderr, /^Error: cannot print JSON/);
  for (const argv of [['go'], ['go', '--n', '1', '--bogus'], ['nope'], ['go', '--n']]) {
    const usage = await run(async () => json(null), argv);
    assert.equal(usage.code, 2, argv.join(' '));
    assert.equal(usage.stdout.length, 0);
    assert.match(usage.stderr, /^Error: /);
  }
  const missing = await run(async () => json(null), []);
  assert.equal(missing.code, 2, 'a command that needs a subcommand: help on stderr');
  assert.match(missing.stderr, /^test tool\n\nUsage: tool <COMMAND>/);
});

test('the charms commands return their output: spell vk, util dest, completions through main', async () => {
  const cases: [string[], boolean][] = [
    [['spell', 'vk'], false],
    [['spell', 'vk', '--mock'], false],
    [['spell', 'vk'], true],
  ];
  for (const [argv, prover] of cases) {
    const m = memoryIo();
    assert.equal(await main('charms', prover, argv, m.io), 0);
    const mock = argv.includes('--mock');
    // serde_json's field order: `mock` first when set, then prover, version, vk
    const expected = { ...(mock ? { mock: true } : {}), prover, version: CURRENT_VERSION, vk: toHex(spellVkFor(CURRENT_VERSION, mock)) };
    assert.equal(m.out().toString(), `${JSON.stringify(expected)}\n`);
  }
  const dest = readSharedJson('vectors', 'util-dest-bitcoin-vectors.json').bitcoin[0] as { addr: string; dest: string };
  const d = memoryIo();
  assert.equal(await main('charms', false, ['util', 'dest', '--addr', dest.addr], d.io), 0);
  assert.equal(d.out().toString(), `${dest.dest}\n`);
  const c = memoryIo();
  assert.equal(await main('charms', false, ['completions', 'fish'], c.io), 0);
  assert.equal(c.out().toString(), completionScript('fish', commandTree('charms')));
});

test('tx show-spell through main: the reference bytes in YAML and JSON; no spell is stderr only', async (t) => {
  if (!sharedOrSkip(t)) return;
  const hex = readSharedJson('vectors', 'bitcoin-v12-spell-tx-decoded.json').tx_hex as string;
  for (const [flags, file] of [
    [[], 'bitcoin-v12-show-spell.expected.yaml'],
    [['--json'], 'bitcoin-v12-show-spell.expected.json'],
  ] as const) {
    const m = memoryIo();
    assert.equal(await main('charms', false, ['tx', 'show-spell', '--tx', hex, ...flags], m.io), 0, m.err());
    assert.equal(m.out().toString(), readSharedText('vectors', file));
  }
  const plain = readSharedText('vectors', 'chain', '4125a400a51213b256b3b8087717e429712787d943e65f045063f4ea011bfe36.bitcoin.hex').trim();
  const none = memoryIo();
  assert.equal(await main('charms', false, ['tx', 'show-spell', '--tx', plain], none.io), 0);
  assert.deepEqual([none.out().length, none.err()], [0, 'No spell found in the transaction\n']);
});

test('the parser fills every declared option: defaults, false for absent flags, [] for absent lists', () => {
  const r = parseArgv(commandTree('charms'), ['spell', 'prove', '--change-address', 'bc1q']);
  assert.equal(r.parsed.opts['payload'], false);
  assert.equal(r.parsed.opts['mock'], false);
  assert.deepEqual(r.parsed.opts['app-bins'], []);
  assert.equal(r.parsed.opts['output'], 'json');
  assert.equal(r.parsed.opts['collateral-utxo'], undefined);
  // `-o` still requires `--payload` although absent flags now read false
  assert.throws(() => parseArgv(commandTree('charms'), ['spell', 'prove', '--change-address', 'bc1q', '-o', 'cbor']), /requires '--payload'/);
});

test('for every charms command the parse result has what its typed options promise', () => {
  const leaves = (c: CommandDef, path: string[]): [string[], CommandDef][] =>
    c.subcommands ? c.subcommands.flatMap((s) => leaves(s, [...path, s.name])) : [[path, c]];
  const all = leaves(commandTree('charms'), []);
  assert.ok(all.length >= 15, `${all.length} commands`);
  for (const [path, cmd] of all) {
    const argv = [...path];
    for (const o of cmd.options ?? []) if (o.required) argv.push(`--${o.name}`, o.choices?.[0] ?? 'x');
    for (const a of cmd.args ?? []) if (a.required) argv.push(a.choices?.[0] ?? 'x');
    const { opts } = parseArgv(commandTree('charms'), argv).parsed;
    for (const o of cmd.options ?? []) {
      const v = opts[o.name];
      const where = `${path.join(' ')} --${o.name}`;
      if (!o.value) assert.equal(typeof v, 'boolean', where);
      else if (o.repeatable) assert.ok(Array.isArray(v), where);
      else if (o.default !== undefined || o.required) assert.equal(typeof v, 'string', where);
      else assert.equal(v, undefined, where);
      if (typeof v === 'string' && o.choices) assert.ok(o.choices.includes(v), where);
    }
  }
});

test('option types come from each command definition (checked by tsc)', () => {
  const showSpell: Run<typeof txShowSpellOptions> = async ({ opts }) => {
    const chain: 'bitcoin' | 'cardano' = opts.chain; // a choice with a default: one of its values
    const tx: string = opts.tx; // required: always there
    const asJson: boolean = opts.json; // a flag
    // @ts-expect-error: `tx show-spell` declares no --change-address
    void opts['change-address'];
    // @ts-expect-error: nor --payload
    void opts.payload;
    return lines(chain, tx, String(asJson));
  };
  const prove = (opts: Options<typeof spellProveOptions>) => {
    const bins: string[] = opts['app-bins']; // repeatable: a list
    const format: 'json' | 'cbor' = opts.output;
    // @ts-expect-error: an option without a default may be absent
    const collateral: string = opts['collateral-utxo'];
    return [bins, format, collateral];
  };
  const dest = (opts: Options<typeof utilDestOptions>) => {
    // @ts-expect-error: `util dest --chain` has no default: it may be absent
    const chain: 'bitcoin' | 'cardano' = opts.chain;
    return chain;
  };
  // a handler typed for one command's options cannot serve another command's definition
  defineCommand({
    name: 'x',
    about: 'x',
    options: [{ name: 'mock', help: 'm' }] as const,
    // @ts-expect-error: the handler reads options (--tx, --chain, --json) this definition does not declare
    run: showSpell,
  });
  assert.equal(typeof prove, 'function');
  assert.equal(typeof dest, 'function');
});
