/**
 * The errors a newcomer met in the README and the app tutorial, each one line that says what to
 * do: a prev tx that is not a transaction, a mistyped bech32 change address (caught before any
 * contract runs), a Cardano transaction read as Bitcoin, a missing file, an empty app name, a bad
 * JSON body.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { charmsBin } from '../testing/cli.js';
import { readSharedText, sharedOrSkip } from '../testing/shared.js';
import { funding } from '../testing/fixtures.js';
import { decodeProveRequest } from '../prover/service.js';
import { CharmsError } from '../errors.js';
import { parseFeeSettings } from '../bitcoin/fee-settings.js';
import { proveServiceFor } from '../prover/setup.js';
import { proverConfig } from '../settings/settings.js';

const charms = (args: string[], cwd: string) =>
  spawnSync(process.execPath, [charmsBin, ...args], { cwd, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: cwd, SVC_APP_CACHE_DIR: 'off' } });

const errorLine = (stderr: string) => stderr.split('\n').find((l) => l.startsWith('Error: ')) ?? stderr;

test('spell check/prove: a prev tx that is not one, a mistyped bech32 change address before any contract runs', (t) => {
  if (!sharedOrSkip(t)) return;
  const dir = mkdtempSync(join(tmpdir(), 'charms-newcomer-'));
  const f = funding(readSharedText);
  writeFileSync(
    join(dir, 'spell.yaml'),
    `version: 15\ntx:\n  ins: [${f.txid}:0]\n  outs: [{}]\n  coins: [{amount: 1000, dest: ${f.dest}}]\napp_public_inputs: {}\n`,
  );
  const zz = charms(['spell', 'check', '--spell', 'spell.yaml', '--prev-txs', 'zz'], dir);
  assert.equal(zz.status, 1);
  assert.match(errorLine(zz.stderr), /prev-txs\[0\]: "zz" is not a transaction: give the raw transaction as hex, or as \{bitcoin: <hex>\}/);
  // the last character changed: a checksum error, named as such, and nothing proved or checked first
  const typo = f.changeAddress.slice(0, -1) + (f.changeAddress.endsWith('q') ? 'p' : 'q');
  const prove = charms(['spell', 'prove', '--spell', 'spell.yaml', '--prev-txs', f.hex, '--change-address', typo, '--mock'], dir);
  assert.equal(prove.status, 1);
  assert.match(errorLine(prove.stderr), /not a valid tb1… \(bech32\) address: its checksum or format does not match/);
  assert.doesNotMatch(prove.stderr, /base58/);
  assert.doesNotMatch(prove.stderr, /spell checked/, 'the change address is checked before the spell');
  // a Cardano change address for a Bitcoin spell: said so, with what to do
  const ada = charms(['spell', 'prove', '--spell', 'spell.yaml', '--prev-txs', f.hex, '--change-address', `addr1${'q'.repeat(98)}`, '--mock'], dir);
  assert.equal(ada.status, 1);
  assert.match(
    errorLine(ada.stderr),
    /this is a Cardano address \(addr1…\), not a Bitcoin one: give a Bitcoin address \(bc1…, tb1…, 1…, 3…\), or pass --chain cardano/,
  );
  assert.doesNotMatch(ada.stderr, /base58|spell checked/);
  // a fee rate over the cap is refused before any contract runs
  const fee = charms(
    ['spell', 'prove', '--spell', 'spell.yaml', '--prev-txs', f.hex, '--change-address', f.changeAddress, '--mock', '--fee-rate', '100000'],
    dir,
  );
  assert.equal(fee.status, 1);
  assert.match(errorLine(fee.stderr), /fee_rate 100000 sat\/vB is above this prover's cap/);
  assert.doesNotMatch(fee.stderr, /spell checked/, 'the fee rate is refused before the contracts run');
  const missing = charms(['spell', 'check', '--spell', 'nope.yaml'], dir);
  assert.equal(missing.status, 1);
  assert.match(errorLine(missing.stderr), /cannot read spell: ENOENT: no such file or directory/);
  assert.doesNotMatch(missing.stderr, /ENOENT: ENOENT/);
});

test('tx show-spell of a Cardano transaction without --chain cardano says to use it', (t) => {
  if (!sharedOrSkip(t)) return;
  const dir = mkdtempSync(join(tmpdir(), 'charms-newcomer-'));
  const hex = readSharedText('vectors', 'chain', '0f9b34a89b50794e36331d61e6ea7ea59fa3990fe3129fbf26fefb57f031d02a.cardano.hex').trim();
  const r = charms(['tx', 'show-spell', '--tx', hex], dir);
  assert.equal(r.status, 1);
  assert.match(errorLine(r.stderr), /^Error: this looks like a Cardano transaction: use --chain cardano/);
  const ok = charms(['tx', 'show-spell', '--tx', hex, '--chain', 'cardano'], dir);
  assert.equal(ok.status, 0, ok.stderr);
});

test('app new "" names the empty name instead of "already exists"', () => {
  const dir = mkdtempSync(join(tmpdir(), 'charms-newcomer-'));
  const r = charms(['app', 'new', ''], dir);
  assert.equal(r.status, 1);
  assert.match(errorLine(r.stderr), /the app name is empty/);
});

test('a bad JSON body: "Invalid JSON:" once, then where', () => {
  assert.throws(
    () => decodeProveRequest(new TextEncoder().encode('{not json'), 'json'),
    (e: unknown) => e instanceof CharmsError && /^Invalid JSON: [\s\S]*line 1 column/.test(e.message) && !/invalid JSON/.test(e.message),
  );
});

/** How often `word` occurs in `text`, any capitalisation. */
const count = (text: string, word: string) => text.toLowerCase().split(word.toLowerCase()).length - 1;

test('an error as rendered (message and its causes, as the CLI and the servers print it) says its text once', async () => {
  // the server answers a bad JSON body with the full message; it was "Invalid JSON: X: invalid JSON: X"
  assert.throws(
    () => decodeProveRequest(new TextEncoder().encode('{not json'), 'json'),
    (e: unknown) => e instanceof CharmsError && count(e.fullMessage, 'invalid JSON') === 1 && count(e.fullMessage, 'line 1 column') === 1,
  );
  // fee settings that are not YAML: it was "fee settings: not valid YAML: invalid YAML: …"
  assert.throws(
    () => parseFeeSettings('a: [\n'),
    (e: unknown) =>
      e instanceof CharmsError && /^fee settings: invalid YAML: .* at line \d+ column \d+$/.test(e.fullMessage) && count(e.fullMessage, 'YAML') === 1,
  );
  // a settings file that is not there: its path once (Node's message names it already)
  for (const [name, what] of [
    ['SVC_FEE_SETTINGS', 'fee settings'],
    ['SVC_CARDANO_PROTOCOL_PARAMS', 'Cardano protocol parameters'],
  ] as const) {
    const path = join(tmpdir(), `charms-missing-${name}.yaml`);
    await assert.rejects(
      proveServiceFor(proverConfig({ MOCK: '1', SVC_PROOF_THREADS: '0', [name]: path }), false),
      (e: unknown) => e instanceof CharmsError && e.fullMessage.startsWith(`cannot read ${what}: ENOENT`) && count(e.fullMessage, path) === 1,
    );
  }
  // a cause that is not an Error is not said twice either
  assert.equal(new CharmsError('IO', 'disk full: ENOSPC', { cause: 'ENOSPC' }).fullMessage, 'disk full: ENOSPC');
});

test('tx show-spell of a mock spell without --mock: "No spell found" says a mock spell is there and --mock shows it', (t) => {
  if (!sharedOrSkip(t)) return;
  const dir = mkdtempSync(join(tmpdir(), 'charms-newcomer-'));
  const vectors = JSON.parse(readSharedText('vectors', 'bitcoin-witness-era-spell-txs.json')) as { tx_hex: string; mock: boolean }[];
  const mock = vectors.find((v) => v.mock)!;
  const r = charms(['tx', 'show-spell', '--tx', mock.tx_hex], dir);
  assert.equal(r.status, 0);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^No spell found in the transaction: it carries a spell with a MOCK proof \(not valid on chain\); pass --mock to show it\n$/);
  const shown = charms(['tx', 'show-spell', '--tx', mock.tx_hex, '--mock'], dir);
  assert.equal(shown.status, 0, shown.stderr);
  assert.match(shown.stdout, /version: 6/);
  // a real spell, or none at all, is not said to be a mock one
  const real = vectors.find((v) => !v.mock)!;
  assert.equal(charms(['tx', 'show-spell', '--tx', real.tx_hex], dir).stderr, '');
});
