/**
 * The CLI end to end, offline: show-spell on real transactions, an AssemblyScript app from
 * `app new` built and checked, a mint proved locally in mock mode, and a spend of its output
 * proved through a `charms server --mock` with the CLI's CBOR client.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCliServer } from '../testing/cli.js';
import { readSharedJson, readSharedText, sharedOrSkip } from '../testing/shared.js';
import { funding, identityFor } from '../testing/fixtures.js';

const bin = fileURLToPath(new URL('./charms.js', import.meta.url));
const charms = (args: string[], opts: { cwd?: string; env?: Record<string, string>; input?: string } = {}) =>
  spawnSync(process.execPath, [bin, ...args], { cwd: opts.cwd, input: opts.input, encoding: 'utf8', env: { ...process.env, ...opts.env } });

const children: ChildProcess[] = [];
after(() => children.forEach((c) => c.kill('SIGTERM')));

test('tx show-spell: YAML and JSON as the reference prints them; no-spell and bad-input outcomes', (t) => {
  if (!sharedOrSkip(t)) return;
  const hex = readSharedJson('vectors', 'bitcoin-v12-spell-tx-decoded.json').tx_hex;
  const yaml = charms(['tx', 'show-spell', '--tx', hex]);
  assert.equal(yaml.status, 0, yaml.stderr);
  assert.equal(yaml.stdout, readSharedText('vectors', 'bitcoin-v12-show-spell.expected.yaml'));
  const json = charms(['tx', 'show-spell', '--tx', hex, '--json']);
  assert.equal(json.stdout, readSharedText('vectors', 'bitcoin-v12-show-spell.expected.json'));
  const plain = readSharedText('vectors', 'chain', '4125a400a51213b256b3b8087717e429712787d943e65f045063f4ea011bfe36.bitcoin.hex').trim();
  const none = charms(['tx', 'show-spell', '--tx', plain]);
  assert.equal(none.status, 0);
  assert.equal(none.stdout, '');
  assert.equal(none.stderr, 'No spell found in the transaction\n');
  const bad = charms(['tx', 'show-spell', '--tx', 'deadbeef']);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /^Error: invalid Bitcoin transaction/);
  const ada = charms(['tx', 'show-spell', '--chain', 'cardano', '--tx', plain]);
  assert.notEqual(ada.status, 0);
  assert.match(ada.stderr, /Cardano/);
});

test('tx show-spell on a truncated transaction (0200) is an error, exit 1, as the reference: not "no spell"', () => {
  const r = charms(['tx', 'show-spell', '--tx', '0200']);
  assert.equal(r.status, 1);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^Error: invalid Bitcoin transaction: unexpected end of data/);
});

test('app new (both templates); the AssemblyScript app builds, prints its vk, and its example spell passes spell check; mint proved with --mock, spend proved through the server', async (t) => {
  if (!sharedOrSkip(t)) return;
  const dir = mkdtempSync(join(tmpdir(), 'charms-cli-'));
  const rust = charms(['app', 'new', 'my-rust-app'], { cwd: dir });
  assert.equal(rust.status, 0, rust.stderr);
  for (const f of ['Cargo.toml', 'src/lib.rs', 'src/main.rs', 'spells/mint-nft.yaml', '.git', '.gitignore'])
    assert.ok(existsSync(join(dir, 'my-rust-app', f)), f);
  assert.match(readFileSync(join(dir, 'my-rust-app', 'src/lib.rs'), 'utf8'), /pub fn app_contract/);
  assert.match(readFileSync(join(dir, 'my-rust-app', 'src/main.rs'), 'utf8'), /my_rust_app::app_contract/);
  assert.notEqual(charms(['app', 'new', 'my-rust-app'], { cwd: dir }).status, 0, 'refuses an existing directory');

  const made = charms(['app', 'new', 'toad', '--template', 'assemblyscript'], { cwd: dir });
  assert.equal(made.status, 0, made.stderr);
  const appDir = join(dir, 'toad');
  const built = charms(['app', 'build'], { cwd: appDir });
  assert.equal(built.status, 0, built.stderr);
  const wasmPath = built.stdout.trim();
  assert.ok(existsSync(wasmPath));
  const vk = charms(['app', 'vk'], { cwd: appDir }).stdout.trim();
  assert.match(vk, /^[0-9a-f]{64}$/);
  assert.equal(charms(['app', 'vk', wasmPath]).stdout.trim(), vk);

  const f = funding(readSharedText);
  const fill = (text: string, vars: Record<string, string>) => text.replace(/\$\{(\w+)\}/g, (_, k) => vars[k] ?? `\${${k}}`);
  const in0 = `${f.txid}:0`;
  const vars = { in_utxo_0: in0, app_id: identityFor(in0), app_vk: vk, dest_0: f.dest, amount_0: '1000' };
  writeFileSync(join(appDir, 'mint.yaml'), fill(readFileSync(join(appDir, 'spells/mint-nft.yaml'), 'utf8'), vars));
  writeFileSync(join(appDir, 'mint-private.yaml'), fill(readFileSync(join(appDir, 'spells/mint-nft-private.yaml'), 'utf8'), vars));
  const check = charms(['spell', 'check', '--spell', 'mint.yaml', '--private-inputs', 'mint-private.yaml', '--app-bins', wasmPath, '--prev-txs', f.hex], {
    cwd: appDir,
  });
  assert.equal(check.status, 0, check.stderr);
  assert.match(check.stderr, /cycles spent: \[\d+\]\n$/);
  // without the private input the contract explains its rejection on stderr
  const reject = charms(['spell', 'check', '--spell', 'mint.yaml', '--app-bins', wasmPath, '--prev-txs', f.hex], { cwd: appDir });
  assert.equal(reject.status, 1);
  assert.match(reject.stderr, /condition does not hold: w is the minting UTXO id/);
  assert.match(reject.stderr, /Error: all apps should run successfully/);

  // prove the mint locally in mock mode
  const proved = charms(
    [
      'spell',
      'prove',
      '--mock',
      '--spell',
      'mint.yaml',
      '--private-inputs',
      'mint-private.yaml',
      '--app-bins',
      wasmPath,
      '--prev-txs',
      f.hex,
      '--change-address',
      f.changeAddress,
    ],
    { cwd: appDir },
  );
  assert.equal(proved.status, 0, proved.stderr);
  const [{ bitcoin: tx1 }] = JSON.parse(proved.stdout);
  const shown = charms(['tx', 'show-spell', '--mock', '--json', '--tx', tx1]);
  assert.equal(JSON.parse(shown.stdout).mock, true);
  assert.equal(
    charms(['tx', 'show-spell', '--tx', tx1]).stderr,
    'No spell found in the transaction: it carries a spell with a MOCK proof (not valid on chain); pass --mock to show it\n',
    'a mock spell is not valid without --mock',
  );

  // the payload is the ProveRequest; fee rate below 1.0 is refused
  const payload = charms(
    ['spell', 'prove', '--payload', '--spell', 'mint.yaml', '--app-bins', wasmPath, '--prev-txs', f.hex, '--change-address', f.changeAddress],
    { cwd: appDir },
  );
  assert.equal(JSON.parse(payload.stdout).chain, 'bitcoin');
  assert.match(
    charms(['spell', 'prove', '--fee-rate', '0.5', '--spell', 'mint.yaml', '--change-address', f.changeAddress], { cwd: appDir }).stderr,
    /fee rate must be >= 1.0/,
  );

  // spend the NFT through a mock proving server (the CLI sends CBOR to SVC_PROVE_API_URL)
  const { child: server, port } = await startCliServer(['server', '--mock', '--ip', '127.0.0.1', '--port', '0']);
  children.push(server);
  const { txidHex, parseTx } = await import('../bitcoin/tx.js');
  const { fromHex } = await import('../util/bytes.js');
  const tx1id = txidHex(parseTx(fromHex(tx1)));
  const nft = `n/${vars.app_id}/${vk}`;
  writeFileSync(
    join(appDir, 'update.yaml'),
    `version: 15\ntx:\n  ins: [${tx1id}:0, ${f.txid}:1]\n  outs:\n  - 0: {ticker: TOAD, remaining: 100000}\n  coins: [{amount: 1000, dest: ${f.dest}}]\napp_public_inputs:\n  ${nft}: ~\n`,
  );
  const viaServer = charms(['spell', 'prove', '--spell', 'update.yaml', '--prev-txs', tx1, '--prev-txs', f.hex, '--change-address', f.changeAddress], {
    cwd: appDir,
    env: { SVC_PROVE_API_URL: `http://127.0.0.1:${port}/spells/prove` },
  });
  assert.equal(viaServer.status, 0, viaServer.stderr);
  const [{ bitcoin: tx2 }] = JSON.parse(viaServer.stdout);
  const s2 = JSON.parse(charms(['tx', 'show-spell', '--mock', '--json', '--tx', tx2]).stdout);
  assert.equal(s2.tx.ins[0], `${tx1id}:0`);
  assert.equal(s2.mock, true);
  // a 4xx from the server is reported, not retried
  const refused = charms(['spell', 'prove', '--spell', 'update.yaml', '--prev-txs', f.hex, '--change-address', f.changeAddress], {
    cwd: appDir,
    env: { SVC_PROVE_API_URL: `http://127.0.0.1:${port}/spells/prove` },
  });
  assert.equal(refused.status, 1);
  assert.match(refused.stderr, /refused the request: 400/);
});

test('a Bitcoin spell with a Scrolls output: spell check warns "not yet bound" (exit 0); spell prove --mock refuses it in one line (exit 1), printing no transaction', (t) => {
  if (!sharedOrSkip(t)) return;
  const f = funding(readSharedText);
  const dir = mkdtempSync(join(tmpdir(), 'charms-scrolls-'));
  writeFileSync(
    join(dir, 'scroll.yaml'),
    `version: 15\ntx:\n  ins:\n    - ${f.txid}:0\n  outs:\n    - {}\n    - {}\n  coins:\n    - amount: 1000\n      dest: ${f.dest}\n    - amount: 1000\n      dest: ""\n  scrolls: [1]\napp_public_inputs: {}\n`,
  );
  const check = charms(['spell', 'check', '--spell', 'scroll.yaml', '--prev-txs', f.hex], { cwd: dir });
  assert.equal(check.status, 0, check.stderr);
  assert.match(check.stderr, /Scrolls outputs whose scriptPubKeys are not yet bound/);
  const prove = charms(['spell', 'prove', '--mock', '--spell', 'scroll.yaml', '--prev-txs', f.hex, '--change-address', f.changeAddress], { cwd: dir });
  assert.equal(prove.status, 1);
  assert.equal(prove.stdout, '');
  // the mock-mode notice, then the one-line error
  const errors = prove.stderr
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('Error:'));
  assert.equal(errors.length, 1, prove.stderr);
  assert.match(errors[0]!, /^Error: Scrolls output\(s\) #1: mock mode cannot bind Scrolls outputs.*real prover server/);
});
