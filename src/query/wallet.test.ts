/**
 * `wallet list` against a fake `bitcoin-cli` answering from fixtures, and the wallet page in
 * headless Chromium (Debian's chromium, driven by playwright-core) against the loopback service
 * with an Esplora fixture serving real transactions.
 */
import { chromiumPath, skipOrFail } from '../testing/require.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';
import http from 'node:http';
import { readSharedText, sharedOrSkip } from '../testing/shared.js';
import { startQueryServer } from './service.js';
import { EsploraSource } from '../sources/tx-sources.js';

const bin = fileURLToPath(new URL('../cli/charms.js', import.meta.url));
const NFT_MINT = '1acee7fb7c922b205e7c63abffe39a53527d4d7bbb0e5327a9b72350115a7ebb'; // v2: NFT {ticker: CHARMS-6, remaining}
const CHEX = '55777ba206bf747724a4e96586f2d912a77baa8a15a4c63a0b510531ad5fa65e'; // v2: token 420000 + NFT with CHIP-0420 image
const NFT_TOKEN = '9c048eca509e609f81a5024930f1e793b3ab82ce953b025e0d4d0a0c342a5b1a'; // v4: NFT CHARMS-19 + token 998
const BRO = '283559062cb6b651eb4a5f557ba4f67efa9aae55ba2278d4f10f35cbefaa84a5'; // v12: BRO token, two outputs, a b/ app
const PLAIN = '4125a400a51213b256b3b8087717e429712787d943e65f045063f4ea011bfe36';
const UNKNOWN = 'ff'.repeat(32);
const CHEX_IMAGE = 'https://iili.io/3cOsqaj.png';

// page-side code in waitForFunction callbacks (no DOM lib in this project's tsconfig)
declare const document: any;

const hexOf = (id: string) => readSharedText('vectors', 'chain', `${id}.bitcoin.hex`).trim();

test('wallet list: txid order, one YAML document per UTXO with charms or pretty JSON, progress on stderr', (t) => {
  if (!sharedOrSkip(t)) return;
  const dir = mkdtempSync(join(tmpdir(), 'fake-cli-'));
  const txs: Record<string, string> = {};
  for (const id of [NFT_MINT, CHEX, NFT_TOKEN, PLAIN]) txs[id] = hexOf(id);
  writeFileSync(join(dir, 'txs.json'), JSON.stringify(txs));
  const unspent = [
    { txid: CHEX, vout: 1, address: 'tb1q…', amount: 0.00001, confirmations: 5, spendable: true, solvable: true },
    { txid: NFT_MINT, vout: 0, amount: 0.29, confirmations: 12, spendable: true, solvable: true },
    { txid: CHEX, vout: 0, amount: 0.00000546, confirmations: 5, spendable: true, solvable: true },
    { txid: CHEX, vout: 2, amount: 0.5, confirmations: 5, spendable: true, solvable: true }, // no charms there
    { txid: NFT_TOKEN, vout: 1, amount: 0.00001, confirmations: 1, spendable: false, solvable: false }, // watch-only: skipped
    { txid: PLAIN, vout: 0, amount: 1.25, confirmations: 3, spendable: true, solvable: true }, // no spell
    { txid: UNKNOWN, vout: 0, amount: 1, confirmations: 0, spendable: true, solvable: true }, // getrawtransaction fails: skipped
  ];
  writeFileSync(join(dir, 'unspent.json'), JSON.stringify(unspent, null, 2));
  const cli = join(dir, 'bitcoin-cli');
  writeFileSync(
    cli,
    `#!/usr/bin/env node
const fs = require('fs'); const path = require('path');
const d = ${JSON.stringify(dir)};
fs.appendFileSync(path.join(d, 'calls.log'), JSON.stringify(process.argv.slice(2)) + '\\n');
const args = process.argv.slice(2).filter((a) => !a.startsWith('-'));
if (args[0] === 'listunspent' && args[1] === '0') { process.stdout.write(fs.readFileSync(path.join(d, 'unspent.json'))); process.exit(0); }
if (args[0] === 'getrawtransaction') {
  const t = JSON.parse(fs.readFileSync(path.join(d, 'txs.json')))[args[1]];
  if (!t) { process.stderr.write('error code: -5\\nerror message:\\nNo such mempool or blockchain transaction.\\n'); process.exit(5); }
  process.stdout.write(t + '\\n'); process.exit(0);
}
process.stderr.write('unexpected call\\n'); process.exit(1);
`,
  );
  chmodSync(cli, 0o755);
  const env: Record<string, string | undefined> = { ...process.env, PATH: `${dir}:${process.env.PATH}`, BITCOIN_CLI_ARGS: '-testnet4 -rpcwallet=w' };
  delete env.BITCOIN_CLI;
  const yaml = spawnSync(process.execPath, [bin, 'wallet', 'list'], { encoding: 'utf8', env });
  assert.equal(yaml.status, 0, yaml.stderr);
  // every call carried the extra arguments first
  const calls = readFileSync(join(dir, 'calls.log'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as string[]);
  assert.deepEqual(calls[0], ['-testnet4', '-rpcwallet=w', 'listunspent', '0']);
  assert.deepEqual(
    calls.slice(1).map((c) => c.slice(0, 3)),
    [NFT_MINT, PLAIN, CHEX, NFT_TOKEN, UNKNOWN].map(() => ['-testnet4', '-rpcwallet=w', 'getrawtransaction']),
  );
  assert.deepEqual(
    calls.slice(1).map((c) => c[3]),
    [NFT_MINT, PLAIN, CHEX, NFT_TOKEN, UNKNOWN],
  );
  assert.equal(yaml.stderr, [NFT_MINT, PLAIN, CHEX, NFT_TOKEN, UNKNOWN].map((id) => `Looking at tx ${id}...\n`).join(''));
  const mintApp = 'n/578a5bafd3ac04ef36da08cbe62100cd056fc381fd3783de6e46fc74fc7c27b2/06ff5322ce2d3d23aba044182869da09429ef22b3b1da30e247c2a3d7b75d039';
  const chexVk = 'b22a36379c7c0b1e987f680e33b2263d94f86e2a75063d698ccf842ce6592840';
  const chexId = '1dc78849dc544b2d2bca6d698bb30c20f4e5894ec8d9042f1dbae5c41e997334';
  const docs = yaml.stdout.split(/^---\n/m);
  assert.equal(docs[0], '');
  assert.equal(docs.length, 4); // the mint NFT, then CHEX vout 1 and vout 0 (listunspent order)
  // serde_yaml block style with explicit keys for the 131-character app keys; println! adds an empty line
  assert.equal(docs[1], `utxo_id: ${NFT_MINT}:0\nconfirmations: 12\nsats: 29000000\ncharms:\n  ? ${mintApp}\n  : ticker: CHARMS-6\n    remaining: 100000\n\n`);
  assert.equal(
    docs[2],
    `utxo_id: ${CHEX}:1\nconfirmations: 5\nsats: 1000\ncharms:\n  ? n/${chexId}/${chexVk}\n  : ticker: CHEX\n    name: CHEX Token\n    image: ${CHEX_IMAGE}\n    url: https://charms.dev/\n    remaining: 69000000\n\n`,
  );
  assert.equal(docs[3], `utxo_id: ${CHEX}:0\nconfirmations: 5\nsats: 546\ncharms:\n  ? t/${chexId}/${chexVk}\n  : 420000\n\n`);

  const json = spawnSync(process.execPath, [bin, 'wallet', 'list', '--json'], { encoding: 'utf8', env });
  assert.equal(json.status, 0, json.stderr);
  const objs = json.stdout
    .trimEnd()
    .split(/\n(?=\{)/)
    .map((s) => JSON.parse(s));
  assert.deepEqual(
    objs.map((o) => o.utxo_id),
    [`${NFT_MINT}:0`, `${CHEX}:1`, `${CHEX}:0`],
  );
  assert.deepEqual(objs[2], { utxo_id: `${CHEX}:0`, confirmations: 5, sats: 546, charms: { [`t/${chexId}/${chexVk}`]: 420000 } });
  assert.ok(json.stdout.startsWith(`{\n  "utxo_id": "${NFT_MINT}:0",\n  "confirmations": 12,\n  "sats": 29000000,\n  "charms": {\n`));

  // BITCOIN_CLI override; a missing binary is an error; a failing listunspent too
  const viaEnv = spawnSync(process.execPath, [bin, 'wallet', 'list'], { encoding: 'utf8', env: { ...env, PATH: process.env.PATH, BITCOIN_CLI: cli } });
  assert.equal(viaEnv.stdout, yaml.stdout);
  const missing = spawnSync(process.execPath, [bin, 'wallet', 'list'], { encoding: 'utf8', env: { ...env, BITCOIN_CLI: join(dir, 'nope') } });
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /^Error: cannot run .*nope: ENOENT \(install Bitcoin Core or set BITCOIN_CLI\)\n/);
  assert.equal(missing.stderr.split('ENOENT').length, 2, 'ENOENT said once');
  const failing = spawnSync(process.execPath, [bin, 'wallet', 'list'], { encoding: 'utf8', env: { ...env, BITCOIN_CLI_ARGS: '-testnet4 bogus' } });
  assert.equal(failing.status, 1);
  assert.match(failing.stderr, /listunspent failed: unexpected call/);
});

// ------------------------------------------------------------------------------ browser

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A small real PNG (solid colour with a stripe), so the page's <img> has something to decode. */
function png(w: number, h: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (b: Buffer) => {
    let c = 0xffffffff;
    for (const x of b) c = crcTable[(c ^ x) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const c = Buffer.alloc(4);
    c.writeUInt32BE(crc(td));
    return Buffer.concat([len, td, c]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  const rows = Buffer.alloc(h * (1 + 3 * w));
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) rows.set(Math.abs(x - y) < 6 ? [250, 200, 40] : [60, 40, 160], y * (1 + 3 * w) + 1 + 3 * x);
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

test('wallet page in headless Chromium: NFT image and name, token amounts and tickers, details on demand', async (t) => {
  const CHROMIUM = chromiumPath();
  if (!CHROMIUM) return skipOrFail(t, 'Chromium not found (CHROMIUM_PATH, /usr/bin/chromium; Debian package chromium, CI installs it)');
  if (!sharedOrSkip(t)) return;
  const { chromium } = await import('playwright-core');
  const txs = new Map([NFT_MINT, CHEX, BRO, PLAIN].map((id) => [id, hexOf(id)]));
  let upstreamCalls = 0;
  const upstream = http.createServer((req, res) => {
    upstreamCalls++;
    const id = /\/tx\/([0-9a-f]{64})\/hex/.exec(req.url ?? '')?.[1];
    const hex = id && txs.get(id);
    if (!hex) return void res.writeHead(404).end('Transaction not found');
    res.end(hex);
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const server = await startQueryServer({
    host: '127.0.0.1',
    port: 0,
    source: new EsploraSource(`http://127.0.0.1:${(upstream.address() as { port: number }).port}`),
  });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    // No network: the CHIP-0420 image URL of the real CHEX NFT is answered by the test; anything
    // else off loopback is refused.
    const image = png(96, 96);
    const offLoopback: string[] = [];
    await page.route(
      (url) => url.hostname !== '127.0.0.1',
      (route) => {
        if (route.request().url() === CHEX_IMAGE) return route.fulfill({ status: 200, contentType: 'image/png', body: image });
        offLoopback.push(route.request().url());
        return route.abort();
      },
    );
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    // console errors (CSP violations among them), except the expected 404 of the unknown txid
    page.on('console', (m) => void (m.type() === 'error' && !/Failed to load resource/.test(m.text()) && pageErrors.push(m.text())));
    await page.goto(`http://127.0.0.1:${server.port}/`);
    assert.equal(await page.title(), 'Charms wallet view');
    await page.fill('#utxos', `${CHEX}\n${NFT_MINT}:0\n${BRO}:0, ${BRO}:3\n${PLAIN}\n${'ab'.repeat(32)}\nnot-a-txid`);
    await page.click('#show');
    await page.waitForFunction(() => /charm\(s\) in/.test(document.getElementById('status').textContent));
    assert.equal(await page.textContent('#status'), '5 charm(s) in 3 transaction(s) with spells, 2 without');

    // NFTs: the CHEX NFT with its image, name and link; the CHARMS-6 NFT (no image) by ticker
    const nfts = await page.$$eval('#nfts .card', (els) =>
      els.map((e) => ({ app: e.getAttribute('data-app'), title: e.querySelector('h3')?.textContent, text: e.textContent })),
    );
    assert.deepEqual(
      nfts.map((n) => n.title),
      ['CHEX Token', 'CHARMS-6'],
    );
    assert.match(nfts[0]!.text!, /https:\/\/charms\.dev\//);
    await page.waitForFunction(() => {
      const i = document.querySelector('#nfts .card img');
      return i?.complete && i.naturalWidth > 0;
    });
    const img = await page.$eval('#nfts .card img', (i) => {
      const x = i as unknown as { src: string; naturalWidth: number; alt: string };
      return { src: x.src, w: x.naturalWidth, alt: x.alt };
    });
    assert.deepEqual(img, { src: CHEX_IMAGE, w: 96, alt: 'CHEX Token' });

    // tokens: CHEX named through its reference NFT; BRO (no metadata) summed over two UTXOs, u64-exact
    const tokens = await page.$$eval('#tokens .card', (els) =>
      els.map((e) => ({ title: e.querySelector('h3')?.textContent, amount: e.querySelector('.amount')?.textContent })),
    );
    assert.deepEqual(tokens, [
      { title: 'CHEX Token', amount: '420,000CHEX' },
      { title: 'Token 3d7fe7e4…bd9b', amount: '105,800,000,000' },
    ]);
    // the b/ app of the BRO transaction has no charms in the selected outputs; errors are listed
    assert.equal(await page.$$eval('#other .card', (els) => els.length), 0);
    const errors = await page.textContent('#errors');
    assert.match(errors ?? '', /not a txid or txid:vout: not-a-txid/);
    assert.match(errors ?? '', new RegExp(`${'ab'.repeat(32)}: transaction ${'ab'.repeat(32)} not found`));

    // details on demand
    const broCard = page.locator('#tokens .card').nth(1);
    assert.equal(await broCard.locator('table').isVisible(), false);
    await broCard.locator('summary').click();
    assert.equal(await broCard.locator('table').isVisible(), true);
    assert.match((await broCard.locator('table').textContent()) ?? '', /:3.*94,200,000,000/);

    const shotPath = join(mkdtempSync(join(tmpdir(), 'wallet-page-')), 'wallet.png');
    const shot = await page.screenshot({ path: shotPath, fullPage: true });
    // non-blank: decode the screenshot in the browser and count pixels unlike the background
    const check = await browser.newPage();
    await check.setContent(`<img id="s" src="data:image/png;base64,${shot.toString('base64')}">`);
    await check.waitForFunction("document.getElementById('s').complete");
    const stats = await check.evaluate(`(() => {
      const i = document.getElementById('s'); const c = document.createElement('canvas');
      c.width = i.naturalWidth; c.height = i.naturalHeight; const g = c.getContext('2d'); g.drawImage(i, 0, 0);
      const d = g.getImageData(0, 0, c.width, c.height).data; let other = 0; const colours = new Set();
      for (let p = 0; p < d.length; p += 4) { const k = (d[p] << 16) | (d[p + 1] << 8) | d[p + 2]; colours.add(k); if (Math.abs(d[p] - d[0]) + Math.abs(d[p + 1] - d[1]) + Math.abs(d[p + 2] - d[2]) > 30) other++; }
      return { share: other / (d.length / 4), colours: colours.size, w: c.width };
    })()`);
    const s = stats as { share: number; colours: number; w: number };
    t.diagnostic(`screenshot ${shotPath}: ${shot.length} bytes, ${s.colours} colours, ${(s.share * 100).toFixed(1)}% non-background`);
    assert.equal(s.w, 1100);
    assert.ok(s.share > 0.02 && s.colours > 50, JSON.stringify(s));

    // a deep link loads by itself; each transaction was fetched from the source once
    const calls = upstreamCalls;
    await page.goto(`http://127.0.0.1:${server.port}/wallet?utxos=${CHEX}:1`);
    await page.waitForFunction(() => /charm\(s\) in/.test(document.getElementById('status').textContent));
    assert.deepEqual(await page.$$eval('.card h3', (els) => els.map((e) => e.textContent)), ['CHEX Token']);
    assert.equal(upstreamCalls, calls);
    assert.deepEqual(offLoopback, []);
    assert.deepEqual(pageErrors, []);
  } finally {
    await browser.close();
    await server.close();
    await new Promise<void>((r) => upstream.close(() => r()));
  }
});
