/**
 * Cardano through the CLI, offline: an NFT minted on Cardano with `spell prove --chain cardano
 * --mock`, spent through a `charms server --mock`, both read back by `tx show-spell --chain
 * cardano --mock`; the collateral UTXO is required.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCliServer } from '../testing/cli.js';
import { cardanoFundingTx, identityFor, templateApp } from '../testing/fixtures.js';
import { cardanoAddressBytes } from '../cardano/address.js';
import { cardanoTxHash, parseCardanoTx } from '../cardano/tx.js';
import { DEFAULT_CARDANO_FEE_ADDRESS } from '../cardano/builder.js';
import { CARDANO_MOCK_NOTICE } from '../prover/prove-cardano.js';
import { fromHex, toHex } from '../util/bytes.js';

const bin = fileURLToPath(new URL('./charms.js', import.meta.url));
const charms = (args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) =>
  spawnSync(process.execPath, [bin, ...args], { cwd: opts.cwd, encoding: 'utf8', env: { ...process.env, ...opts.env } });
const children: ChildProcess[] = [];
after(() => children.forEach((c) => c.kill('SIGTERM')));

const ADDR = DEFAULT_CARDANO_FEE_ADDRESS;
const ADDR_HEX = toHex(cardanoAddressBytes(ADDR));

test('CLI: mint on Cardano in mock mode, spend it through the server, show-spell --chain cardano --mock verifies both', async () => {
  const app = await templateApp();
  const dir = mkdtempSync(join(tmpdir(), 'charms-cardano-'));
  const fund = cardanoFundingTx(
    [
      { address: cardanoAddressBytes(ADDR), lovelace: 40_000_000n },
      { address: cardanoAddressBytes(ADDR), lovelace: 5_000_000n },
      { address: cardanoAddressBytes(ADDR), lovelace: 20_000_000n },
    ],
    3,
  );
  const fundHex = toHex(fund);
  const fundId = toHex(cardanoTxHash(parseCardanoTx(fund)));
  const in0 = `${fundId}:0`;
  const nft = `n/${identityFor(in0)}/${app.vk}`;
  writeFileSync(
    join(dir, 'mint.yaml'),
    `version: 15\ntx:\n  ins: [${in0}]\n  outs:\n  - 0: {ticker: TOAD, remaining: 100000}\n  coins: [{amount: 2000000, dest: ${ADDR_HEX}}]\napp_public_inputs:\n  ${nft}: ~\n`,
  );
  writeFileSync(join(dir, 'private.yaml'), `${nft}: "${in0}"\n`);

  const common = ['--chain', 'cardano', '--change-address', ADDR];

  const noColl = charms(
    [
      'spell',
      'prove',
      '--mock',
      '--spell',
      'mint.yaml',
      '--private-inputs',
      'private.yaml',
      '--app-bins',
      app.path,
      '--prev-txs',
      `!cardano ${fundHex}`,
      ...common,
    ],
    { cwd: dir },
  );
  assert.equal(noColl.status, 1);
  assert.match(noColl.stderr, /Collateral UTXO is required for Cardano spells: pass --collateral-utxo txid:vout/);

  const mint = charms(
    [
      'spell',
      'prove',
      '--mock',
      '--spell',
      'mint.yaml',
      '--private-inputs',
      'private.yaml',
      '--app-bins',
      app.path,
      '--prev-txs',
      `!cardano ${fundHex}`,
      '--collateral',
      `${fundId}:1`,
      ...common,
    ],
    { cwd: dir },
  );
  assert.equal(mint.status, 0, mint.stderr);
  const env1 = JSON.parse(mint.stdout);
  assert.deepEqual(Object.keys(env1).sort(), ['cborHex', 'description', 'type']);
  assert.equal(env1.type, 'Witnessed Tx ConwayEra');
  assert.equal(env1.description, 'Ledger Cddl Format');
  assert.ok(mint.stderr.includes(CARDANO_MOCK_NOTICE), mint.stderr);
  const shown1 = charms(['tx', 'show-spell', '--chain', 'cardano', '--mock', '--json', '--tx', env1.cborHex]);
  assert.equal(shown1.status, 0, shown1.stderr);
  const s1 = JSON.parse(shown1.stdout);
  assert.equal(s1.mock, true);
  assert.deepEqual(s1.tx.ins, [in0]);
  const tx1Id = toHex(cardanoTxHash(parseCardanoTx(fromHex(env1.cborHex))));

  // spend through a mock server
  const { child: server, port } = await startCliServer(['server', '--mock', '--ip', '127.0.0.1', '--port', '0']);
  children.push(server);
  writeFileSync(
    join(dir, 'spend.yaml'),
    `version: 15\ntx:\n  ins: [${tx1Id}:0, ${fundId}:2]\n  outs:\n  - 0: {ticker: TOAD, remaining: 100000}\n  coins: [{amount: 3000000, dest: ${ADDR_HEX}}]\napp_public_inputs:\n  ${nft}: ~\n`,
  );

  const spend = charms(
    [
      'spell',
      'prove',
      '--spell',
      'spend.yaml',
      '--prev-txs',
      `!cardano ${env1.cborHex}`,
      '--prev-txs',
      `!cardano ${fundHex}`,
      '--collateral-utxo',
      `${fundId}:1`,
      ...common,
    ],
    {
      cwd: dir,
      env: { SVC_PROVE_API_URL: `http://127.0.0.1:${port}/spells/prove` },
    },
  );
  assert.equal(spend.status, 0, spend.stderr);
  assert.ok(spend.stderr.includes(CARDANO_MOCK_NOTICE), spend.stderr);
  const env2 = JSON.parse(spend.stdout);
  const s2 = JSON.parse(charms(['tx', 'show-spell', '--chain', 'cardano', '--mock', '--json', '--tx', env2.cborHex]).stdout);
  assert.deepEqual(s2.tx.ins, [`${tx1Id}:0`, `${fundId}:2`]);
  assert.equal(s2.mock, true);
  // without --mock the mock spell is not valid
  assert.equal(
    charms(['tx', 'show-spell', '--chain', 'cardano', '--json', '--tx', env2.cborHex]).stderr,
    'No spell found in the transaction: it carries a spell with a MOCK proof (not valid on chain); pass --mock to show it\n',
  );
});
