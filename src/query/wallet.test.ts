/**
 * `wallet list` against a fake `bitcoin-cli` answering from fixtures, and the wallet page in
 * headless Chromium (Debian's chromium, driven by playwright-core).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import http from 'node:http';
import { readSharedJson, readSharedText, sharedOrSkip } from '../testing/shared.js';
import { startQueryServer } from './service.js';
import { EsploraSource } from './sources.js';

const bin = fileURLToPath(new URL('../cli/charms.js', import.meta.url));
const SPELL_TX = '1acee7fb7c922b205e7c63abffe39a53527d4d7bbb0e5327a9b72350115a7ebb'; // v2: an NFT {ticker, remaining}
const PLAIN_TX = '4125a400a51213b256b3b8087717e429712787d943e65f045063f4ea011bfe36';

test('wallet list: one YAML document per UTXO with charms, or pretty JSON; progress on stderr', (t) => {
  if (!sharedOrSkip(t)) return;
  const dir = mkdtempSync(join(tmpdir(), 'fake-cli-'));
  const txs: Record<string, string> = {};
  for (const id of [SPELL_TX, PLAIN_TX]) txs[id] = readSharedText('vectors', 'chain', `${id}.bitcoin.hex`).trim();
  writeFileSync(join(dir, 'txs.json'), JSON.stringify(txs));
  const unspent = [
    { txid: SPELL_TX, vout: 0, amount: 0.00001, confirmations: 12 },
    { txid: SPELL_TX, vout: 1, amount: 0.5, confirmations: 12 },
    { txid: PLAIN_TX, vout: 0, amount: 1.25, confirmations: 3 },
  ];
  writeFileSync(join(dir, 'unspent.json'), JSON.stringify(unspent));
  const cli = join(dir, 'bitcoin-cli');
  writeFileSync(
    cli,
    `#!/usr/bin/env node
const fs = require('fs'); const path = require('path');
const args = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const d = ${JSON.stringify(dir)};
if (args[0] === 'listunspent') { process.stdout.write(fs.readFileSync(path.join(d, 'unspent.json'))); process.exit(0); }
if (args[0] === 'getrawtransaction') { const t = JSON.parse(fs.readFileSync(path.join(d, 'txs.json')))[args[1]]; if (!t) { process.stderr.write('error code: -5\\n'); process.exit(5); } process.stdout.write(t + '\\n'); process.exit(0); }
process.exit(1);
`,
  );
  chmodSync(cli, 0o755);
  const env = { ...process.env, PATH: `${dir}:${process.env.PATH}` };
  const yaml = spawnSync(process.execPath, [bin, 'wallet', 'list'], { encoding: 'utf8', env });
  assert.equal(yaml.status, 0, yaml.stderr);
  const expected = JSON.parse(readSharedText('vectors', 'chain', 'expected', `${SPELL_TX}.json`)).spell;
  const app = Object.keys(expected.app_public_inputs)[0]!;
  assert.equal(
    yaml.stdout,
    `---\nutxo_id: ${SPELL_TX}:0\nconfirmations: 12\nsats: 1000\ncharms:\n  ? ${app}\n  : ticker: CHARMS-6\n    remaining: 100000\n`,
  );
  assert.match(yaml.stderr, /checking 3\/3/);
  const json = spawnSync(process.execPath, [bin, 'wallet', 'list', '--json'], { encoding: 'utf8', env });
  const parsed = JSON.parse(json.stdout);
  assert.equal(parsed.utxo_id, `${SPELL_TX}:0`);
  assert.equal(parsed.charms[app].ticker, 'CHARMS-6');
  const missing = spawnSync(process.execPath, [bin, 'wallet', 'list'], { encoding: 'utf8', env: { ...env, BITCOIN_CLI: join(dir, 'nope') } });
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /^Error: cannot run .*nope/);
});

const CHROMIUM = '/usr/bin/chromium';

test('wallet page in headless Chromium shows NFTs and token amounts', { skip: existsSync(CHROMIUM) ? false : 'Debian chromium not installed (CI installs it)' }, async (t) => {
  if (!sharedOrSkip(t)) return;
  const { chromium } = await import('playwright-core');
  const v12 = readSharedJson('vectors', 'bitcoin-v12-spell-tx-decoded.json');
  const txs = new Map([
    [SPELL_TX, readSharedText('vectors', 'chain', `${SPELL_TX}.bitcoin.hex`).trim()],
    [v12.txid as string, v12.tx_hex as string],
  ]);
  const upstream = http.createServer((req, res) => {
    const id = /\/tx\/([0-9a-f]{64})\/hex/.exec(req.url ?? '')?.[1];
    const hex = id && txs.get(id);
    if (!hex) return void res.writeHead(404).end();
    res.end(hex);
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const server = await startQueryServer({ host: '127.0.0.1', port: 0, source: new EsploraSource(`http://127.0.0.1:${(upstream.address() as { port: number }).port}`) });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1000, height: 800 } });
    await page.goto(`http://127.0.0.1:${server.port}/`);
    await page.fill('#utxos', `${SPELL_TX}:0\n${v12.txid}`);
    await page.click('#show');
    await page.waitForFunction("/charm\\(s\\)/.test(document.getElementById('status').textContent)");
    const cards = await page.$$eval('.card', (els) => els.map((e) => ({ tag: e.getAttribute('data-tag'), text: e.textContent ?? '' })));
    const nft = cards.find((c) => c.tag === 'n');
    assert.ok(nft && /CHARMS-6/.test(nft.text), JSON.stringify(cards));
    const tokens = cards.filter((c) => c.tag === 't');
    assert.deepEqual(tokens.map((c) => /11,600,000,000|94,200,000,000/.test(c.text)), [true, true]);
    // an NFT with CHIP-0420 metadata (image) renders its image
    const img = 'data:image/svg+xml;base64,' + Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><rect width="40" height="40" fill="red"/></svg>').toString('base64');
    const meta = JSON.stringify({ name: 'Panoramix #1', image: img, description: 'a druid' });
    await page.evaluate(`document.getElementById('charms').insertAdjacentHTML('beforeend', card('n/${'a'.repeat(64)}/${'b'.repeat(64)}', ${meta}, 'x:0', { apps: {}, outs: [] }))`);
    await page.waitForFunction('[...document.images].some((i) => i.complete && i.naturalWidth > 0)');
    assert.match(await page.textContent('#charms') ?? '', /Panoramix #1/);
    const shot = join(mkdtempSync(join(tmpdir(), 'wallet-')), 'wallet.png');
    await page.screenshot({ path: shot, fullPage: true });
    assert.ok(statSync(shot).size > 5000, 'screenshot is not blank');
  } finally {
    await browser.close();
    await server.close();
    upstream.close();
  }
});
