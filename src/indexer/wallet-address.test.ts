/**
 * The wallet page's address view in headless Chromium (Debian's chromium, driven by
 * playwright-core) against a real index over the fake node: holdings with CHIP-0420 metadata,
 * NFTs, pending changes, history; and hidden when the page is served by query-server (no index).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { scriptToAddress } from '../bitcoin/address.js';
import { parseTx } from '../bitcoin/tx.js';
import { indexOverFakeNode } from '../testing/index-fake-node.js';
import { TestEngines } from '../testing/index-stores.js';
import { sharedOrSkip } from '../testing/shared.js';
import { chromiumPath, skipOrFail } from '../testing/require.js';
import { spendTx } from '../testing/vector-chain.js';
import { bitcoinVectors } from '../testing/index-vectors.js';
import { startQueryServer } from '../query/service.js';
import { BITCOIN_NETWORKS } from '../model/network.js';

// page-side code in waitForFunction callbacks (no DOM lib in this project's tsconfig)
declare const document: any; // eslint-disable-line @typescript-eslint/no-explicit-any

const engines = new TestEngines();
after(() => engines.close());
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
const CHEX_IMAGE = 'https://iili.io/3cOsqaj.png';

test('wallet page address view in Chromium over a real index: holdings, NFTs, pending changes, history; hidden without an index', async (t) => {
  const CHROMIUM = chromiumPath();
  if (!CHROMIUM) return skipOrFail(t, 'Chromium not found (CHROMIUM_PATH, /usr/bin/chromium; Debian package chromium, CI installs it)');
  if (!sharedOrSkip(t)) return;
  const e = await engines.engine('sqlite', t);
  if (!e) return;
  const { chromium } = await import('playwright-core');
  const v = bitcoinVectors();
  const chex = v.get('55777ba2')!; // out 0: 420000 CHEX, out 1: the CHEX reference NFT
  const pendingTx = v.get('9c048eca')!; // a pending receive: token 998 + NFT CHARMS-19
  const addrOf = (raw: Uint8Array, vout: number) => scriptToAddress(parseTx(raw).outputs[vout]!.script, BITCOIN_NETWORKS.regtest)!;
  const chexAddr = addrOf(chex.raw, 0);
  const nftAddr = addrOf(chex.raw, 1);
  const pendAddr = addrOf(pendingTx.raw, 0);
  const node = await indexOverFakeNode(e, { except: ['9c048eca'] });
  const { fake, svc } = node;
  const query = await startQueryServer({ host: '127.0.0.1', port: 0 });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    fake.mempoolAdd(pendingTx.raw);
    fake.mempoolAdd(spendTx([{ txid: chex.txid, vout: 0 }], { tag: 9 }).bytes); // CHEX tokens spent in the mempool
    await svc.follower!.syncOnce();

    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    const offLoopback: string[] = [];
    await page.route(
      (url) => url.hostname !== '127.0.0.1',
      (route) => (offLoopback.push(route.request().url()), route.abort()),
    );
    const pageErrors: string[] = [];
    page.on('pageerror', (x) => pageErrors.push(x.message));
    page.on('console', (m) => void (m.type() === 'error' && !/Failed to load resource/.test(m.text()) && pageErrors.push(m.text())));
    const base = `http://127.0.0.1:${svc.server.port}`;
    const loaded = () =>
      page.waitForFunction(
        () => /holding\(s\)|: /.test(document.getElementById('addr-status').textContent + document.getElementById('addr-errors').textContent),
        undefined,
        { timeout: 20_000 },
      );

    // the CHEX holder: token with CHIP-0420 name, ticker and image; pending out; history
    await page.goto(`${base}/wallet?address=${chexAddr}`);
    await loaded();
    assert.equal(await page.isVisible('#addr-section'), true);
    const tokens = await page.$$eval('#addr-tokens .card', (els) =>
      els.map((x) => ({
        title: x.querySelector('h3')?.textContent,
        amount: x.querySelector('.amount')?.textContent,
        img: x.querySelector('img')?.getAttribute('src'),
        pending: x.querySelector('.pending')?.textContent ?? null,
      })),
    );
    assert.deepEqual(tokens, [{ title: 'CHEX Token', amount: '420,000CHEX', img: CHEX_IMAGE, pending: '+0 pending in, −420,000 pending out' }]);
    const pendingRows = await page.$$eval('#addr-pending tr', (els) => els.map((x) => `${x.getAttribute('data-dir')} ${x.querySelector('.num')?.textContent}`));
    assert.deepEqual(pendingRows, ['out −420,000']);
    const hist = await page.$$eval('#addr-history tr', (els) => els.map((x) => ({ txid: x.getAttribute('data-txid'), text: x.textContent })));
    assert.equal(hist.length, 1);
    assert.equal(hist[0]!.txid, chex.txid);
    assert.match(hist[0]!.text!, /received.*CHEX 420,000.*height 3/);

    // the reference NFT's holder: an NFT card with its image and name
    await page.goto(`${base}/wallet?address=${nftAddr}`);
    await loaded();
    const nfts = await page.$$eval('#addr-nfts .card', (els) =>
      els.map((x) => ({ title: x.querySelector('h3')?.textContent, img: x.querySelector('img')?.getAttribute('src') })),
    );
    assert.deepEqual(nfts, [{ title: 'CHEX Token', img: CHEX_IMAGE }]);

    // a pending receive only: pending in, history shows it as pending
    await page.fill('#address', pendAddr);
    await page.click('#addr-show');
    await page.waitForFunction(
      (a) => document.getElementById('addr-status').textContent.includes('holding') && document.getElementById('address').value === a,
      pendAddr,
      { timeout: 20_000 },
    );
    const pin = await page.$$eval('#addr-pending tr', (els) => els.map((x) => x.getAttribute('data-dir')));
    assert.ok(pin.length > 0 && pin.every((d) => d === 'in'), JSON.stringify(pin));
    assert.match((await page.textContent('#addr-history')) ?? '', /pending/);

    // a bad address: an error line, no crash
    await page.fill('#address', 'not-an-address');
    await page.click('#addr-show');
    await page.waitForFunction(() => document.getElementById('addr-errors').textContent.length > 0, undefined, { timeout: 20_000 });
    assert.match((await page.textContent('#addr-errors')) ?? '', /not a valid regtest address/);

    // served by query-server (no index): the view stays hidden, the rest of the page works
    await page.goto(`http://127.0.0.1:${query.port}/wallet?address=${chexAddr}`);
    await page.waitForFunction(() => document.readyState === 'complete');
    assert.equal(await page.title(), 'Charms wallet view');
    // the page marks the end of its index probe on <html data-index>
    await page.waitForFunction(() => document.documentElement.getAttribute('data-index') === 'no', undefined, { timeout: 20_000 });
    assert.equal(await page.isVisible('#addr-section'), false);
    assert.deepEqual(
      offLoopback.filter((u) => u !== CHEX_IMAGE),
      [],
    );
    assert.deepEqual(pageErrors, []);
  } finally {
    await browser.close();
    await query.close();
    await node.close();
  }
});
