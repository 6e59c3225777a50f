/**
 * `charms wallet list` against a fake `bitcoin-cli` (a local script answering listunspent and
 * getrawtransaction from the chain vectors): the batched verification lists exactly the UTXOs
 * that per-transaction verification finds charms on, and skips the transactions that fail.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { extractAndVerifySpell } from '../verify/index.js';
import { readSharedText, sharedOrSkip, sharedPath } from '../testing/shared.js';

const bin = fileURLToPath(new URL('./charms.js', import.meta.url));

test('`wallet list --json` lists the charms of every verifying transaction, skips the others', (t) => {
  if (!sharedOrSkip(t)) return;
  const txs = readdirSync(sharedPath('vectors', 'chain'))
    .filter((f) => f.endsWith('.bitcoin.hex'))
    .map((f) => readSharedText('vectors', 'chain', f).trim());
  const byId = new Map<string, string>();
  const unspent: { txid: string; vout: number; amount: number; confirmations: number }[] = [];
  let expected = 0;
  let failing = 0;
  txs.forEach((hex, n) => {
    const txid = n.toString(16).padStart(64, '0'); // the fake node's ids; the command only passes them back
    byId.set(txid, hex);
    let outs: number;
    try {
      const spell = extractAndVerifySpell({ bitcoin: hex }, false);
      outs = spell.tx.outs.length;
      expected += spell.tx.outs.filter((o) => o.size > 0).length;
    } catch {
      outs = 2;
      failing++;
    }
    for (let vout = 0; vout < outs; vout++) unspent.push({ txid, vout, amount: 0.00001, confirmations: 3 });
  });
  assert.ok(expected >= 8 && failing >= 3, `${expected} charm UTXOs, ${failing} failing txs`);
  const dir = mkdtempSync(join(tmpdir(), 'wallet-list-'));
  writeFileSync(join(dir, 'data.json'), JSON.stringify({ unspent, txs: Object.fromEntries(byId) }));
  const fake = join(dir, 'fake-bitcoin-cli.cjs');
  writeFileSync(
    fake,
    `const d = require(${JSON.stringify(join(dir, 'data.json'))});
     const [cmd, arg] = process.argv.slice(2);
     if (cmd === 'listunspent') console.log(JSON.stringify(d.unspent));
     else if (cmd === 'getrawtransaction' && d.txs[arg]) console.log(d.txs[arg]);
     else { console.error('error code: -5'); process.exit(5); }`,
  );
  const r = spawnSync(process.execPath, [bin, 'wallet', 'list', '--json'], {
    encoding: 'utf8',
    env: { ...process.env, BITCOIN_CLI: process.execPath, BITCOIN_CLI_ARGS: fake, CHARMS_DEBUG: '' },
  });
  assert.equal(r.status, 0, r.stderr);
  const docs = r.stdout
    .split(/\n(?=\{)/)
    .filter((s) => s.trim())
    .map((s) => JSON.parse(s) as { utxo_id: string; charms: object });
  assert.equal(docs.length, expected);
  for (const d of docs) assert.ok(Object.keys(d.charms).length > 0, d.utxo_id);
  assert.equal(r.stderr.match(/Looking at tx/g)?.length, txs.length);
});
