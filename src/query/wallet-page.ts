/**
 * The wallet page served by the spell-query service at `/` and `/wallet`: paste txids, UTXOs
 * (`txid:vout`) or the JSON of `bitcoin-cli listunspent` / `charms wallet list --json`; the page
 * asks `/spells/<txid>` once per transaction and shows
 * - NFTs: image and name (CHIP-0420 `name`, `ticker`, `image`, `description`, `url`),
 * - fungible tokens: the total amount per token (u64-exact, `decimals` applied) with the ticker
 *   and name of the token's reference NFT (`n/` + the token's identity and vk) when one was seen,
 * - other charms (DEX orders, …),
 * with the per-UTXO data and the app key on demand. Plain HTML and JS, no external resources
 * besides the images the metadata points to. `?utxos=a,b,c` fills the list and loads it.
 *
 * Served by `charms index`, the page also has an address view (`?address=` loads one): holdings
 * per token with the CHIP-0420 metadata of its reference NFT, NFTs, pending changes and history,
 * read from the index's explorer-compatible `/v1/wallet/...` API. Served by `charms query-server`
 * (no index: `/v1/status` is not there) the view stays hidden.
 */
import { createHash } from 'node:crypto';

export const WALLET_PAGE = String.raw`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Charms wallet view</title>
<style>
  :root { color-scheme: light; --line: #d8d8e0; --muted: #6b6b78; --accent: #5b3cc4; }
  body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 64rem; padding: 0 1rem; color: #1d1d24; background: #fafafc; }
  h1 { font-size: 1.6rem; margin-bottom: .3rem; }
  h2 { font-size: 1.1rem; margin: 1.6rem 0 .4rem; border-bottom: 1px solid var(--line); padding-bottom: .3rem; }
  textarea { width: 100%; box-sizing: border-box; height: 6rem; font-family: ui-monospace, monospace; font-size: .85rem; padding: .5rem; border: 1px solid var(--line); border-radius: 6px; }
  button { background: var(--accent); color: white; border: 0; border-radius: 6px; padding: .5rem 1.1rem; font-size: .95rem; cursor: pointer; }
  button:disabled { opacity: .6; }
  .grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(15rem, 1fr)); gap: 1rem; align-items: start; }
  .card { background: white; border: 1px solid var(--line); border-radius: 10px; padding: .8rem; overflow: hidden; }
  .card h3 { margin: .2rem 0 .4rem; font-size: 1.05rem; overflow-wrap: anywhere; }
  .card img { display: block; width: 100%; height: 12rem; object-fit: contain; background: #f1f1f5; border-radius: 6px; }
  .noimg { height: 12rem; display: flex; align-items: center; justify-content: center; background: #f1f1f5; border-radius: 6px; color: var(--muted); font-size: 2.5rem; }
  .amount { font-size: 1.3rem; font-weight: 650; font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
  td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
  .ticker { color: var(--accent); font-weight: 600; margin-left: .3rem; }
  .muted { color: var(--muted); font-size: .78rem; overflow-wrap: anywhere; }
  .error { color: #b00020; }
  details { margin-top: .5rem; font-size: .8rem; }
  summary { cursor: pointer; color: var(--accent); }
  pre { white-space: pre-wrap; overflow-wrap: anywhere; font-size: .72rem; background: #f6f6f9; padding: .4rem; border-radius: 4px; }
  table { border-collapse: collapse; width: 100%; }
  td { padding: .15rem .3rem; border-top: 1px solid #eee; overflow-wrap: anywhere; }
</style>
</head>
<body>
<h1>Charms wallet view</h1>
<p class="muted">Transaction ids or UTXOs (<code>txid:vout</code>), separated by spaces, commas or new lines — or the JSON printed by <code>bitcoin-cli listunspent</code> or <code>charms wallet list --json</code>. Spells are read through this server's <code>/spells/&lt;txid&gt;</code>.</p>
<section id="addr-section" hidden>
<h2>Address</h2>
<p class="muted">What an address holds now, its pending changes and its history, from this index's <code>/v1</code> API (tokens with their CHIP-0420 name, ticker, image and decimals).</p>
<p><input id="address" size="64" placeholder="address" spellcheck="false" aria-label="address"> <button id="addr-show">Show address</button> <span id="addr-status" role="status"></span></p>
<div id="addr-errors"></div>
<section id="addr-tokens-section" hidden><h3>Tokens</h3><div id="addr-tokens" class="grid"></div></section>
<section id="addr-nfts-section" hidden><h3>NFTs</h3><div id="addr-nfts" class="grid"></div></section>
<section id="addr-other-section" hidden><h3>Other charms</h3><div id="addr-other" class="grid"></div></section>
<section id="addr-pending-section" hidden><h3>Pending changes</h3><table id="addr-pending"></table></section>
<section id="addr-history-section" hidden><h3>History</h3><table id="addr-history"></table></section>
<h2>Transactions and UTXOs</h2>
</section>
<textarea id="utxos" placeholder="txid or txid:vout, one per line" spellcheck="false"></textarea>
<p><button id="show">Show charms</button> <span id="status" role="status"></span></p>
<div id="errors"></div>
<section id="nfts-section" hidden><h2>NFTs</h2><div id="nfts" class="grid"></div></section>
<section id="tokens-section" hidden><h2>Tokens</h2><div id="tokens" class="grid"></div></section>
<section id="other-section" hidden><h2>Other charms</h2><div id="other" class="grid"></div></section>
<script>
'use strict';
const $ = (id) => document.getElementById(id);
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') e.textContent = v; else e.setAttribute(k, v);
  }
  for (const k of kids) if (k !== null && k !== undefined) e.append(k);
  return e;
}
// JSON with integers beyond 2^53 kept exact (token amounts are u64)
function parseExact(text) {
  return JSON.parse(text, (k, v, ctx) => (typeof v === 'number' && Number.isInteger(v) && !Number.isSafeInteger(v) && ctx && ctx.source && /^-?\d+$/.test(ctx.source) ? BigInt(ctx.source) : v));
}
const show = (v) => JSON.stringify(v, (k, x) => (typeof x === 'bigint' ? x.toString() : x), 2);
const isInt = (v) => typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v) && v >= 0);
function formatAmount(v, decimals) {
  let s = BigInt(v).toString();
  const d = Number.isInteger(decimals) && decimals > 0 && decimals <= 38 ? decimals : 0;
  let frac = '';
  if (d > 0) { s = s.padStart(d + 1, '0'); frac = s.slice(s.length - d).replace(/0+$/, ''); s = s.slice(0, s.length - d); }
  s = s.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return frac ? s + '.' + frac : s;
}
// CHIP-0420 URIs: https, ipfs, ar, data (images only); http allowed for local setups
function mediaUrl(u, imageOnly) {
  if (typeof u !== 'string') return '';
  if (/^ipfs:\/\//i.test(u)) return 'https://ipfs.io/ipfs/' + u.slice(7).replace(/^ipfs\//, '');
  if (/^ar:\/\//i.test(u)) return 'https://arweave.net/' + u.slice(5);
  if (/^https?:\/\//i.test(u)) return u;
  if (imageOnly && /^data:image\/(png|jpeg|gif|webp|svg\+xml)[;,]/i.test(u)) return u;
  return '';
}
const meta = (d) => (d && typeof d === 'object' && !Array.isArray(d) ? d : {});
const short = (h) => h.slice(0, 8) + '…' + h.slice(-4);

function parseInput(text) {
  const t = text.trim();
  const out = [];
  if (t.startsWith('[') || t.startsWith('{')) {
    // listunspent JSON (array) or wallet list --json (concatenated objects)
    let items = [];
    try { items = [].concat(JSON.parse(t)); } catch { items = (t.match(/"utxo_id"\s*:\s*"([0-9a-fA-F]{64}:\d+)"/g) || []).map((m) => ({ utxo_id: m.split('"')[3] })); }
    for (const u of items) {
      if (u && typeof u.txid === 'string') out.push({ txid: u.txid.toLowerCase(), vout: Number.isInteger(u.vout) ? u.vout : undefined });
      else if (u && typeof u.utxo_id === 'string') { const [a, b] = u.utxo_id.split(':'); out.push({ txid: a.toLowerCase(), vout: Number(b) }); }
    }
    return out;
  }
  for (const w of t.split(/[\s,;]+/).filter(Boolean)) {
    const m = /^([0-9a-fA-F]{64})(?::(\d+))?$/.exec(w);
    out.push(m ? { txid: m[1].toLowerCase(), vout: m[2] === undefined ? undefined : Number(m[2]) } : { bad: w });
  }
  return out;
}

async function fetchSpell(txid) {
  const res = await fetch('/spells/' + txid);
  if (res.status === 204) return null;
  const text = await res.text();
  if (!res.ok) { let msg = res.status + ''; try { msg = JSON.parse(text).error || msg; } catch {} throw new Error(msg); }
  return parseExact(text);
}

async function mapLimit(items, n, fn) {
  const out = new Array(items.length);
  let i = 0;
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, async () => { while (i < items.length) { const k = i++; out[k] = await fn(items[k]); } }));
  return out;
}

function nftCard(c) {
  const m = meta(c.data);
  const img = mediaUrl(m.image, true);
  const title = m.name || m.ticker || 'NFT ' + short(c.identity);
  const link = mediaUrl(m.url, false);
  return el('div', { class: 'card', 'data-kind': 'nft', 'data-app': c.app },
    img ? el('img', { src: img, alt: String(title), loading: 'lazy', referrerpolicy: 'no-referrer' }) : el('div', { class: 'noimg', 'aria-hidden': 'true', text: '◆' }),
    el('h3', { text: String(title) }),
    m.ticker && m.name ? el('div', { class: 'ticker', text: String(m.ticker) }) : null,
    m.description ? el('p', { text: String(m.description) }) : null,
    link ? el('a', { href: link, rel: 'noopener noreferrer', target: '_blank', text: link }) : null,
    el('div', { class: 'muted', text: c.utxo }),
    details(c.app, [c]));
}

function details(app, entries) {
  return el('details', {}, el('summary', { text: 'Details' }),
    el('div', { class: 'muted', text: 'app ' + app }),
    ...entries.map((c) => el('div', {}, el('div', { class: 'muted' }, el('a', { href: '/spells/' + c.txid, text: c.utxo })), el('pre', { text: show(c.data) }))));
}

function tokenCard(app, list, refMeta) {
  const m = meta(refMeta);
  const decimals = Number.isInteger(m.decimals) ? m.decimals : 0;
  let total = 0n;
  for (const c of list) total += BigInt(c.data);
  const [, identity] = app.split('/');
  const name = m.name || m.ticker || 'Token ' + short(identity);
  return el('div', { class: 'card', 'data-kind': 'token', 'data-app': app },
    el('h3', { text: String(name) }),
    el('div', { class: 'amount' }, el('span', { class: 'value', text: formatAmount(total, decimals) }), m.ticker ? el('span', { class: 'ticker', text: String(m.ticker) }) : null),
    el('div', { class: 'muted', text: list.length + ' UTXO' + (list.length === 1 ? '' : 's') + (decimals ? ' · ' + decimals + ' decimals' : '') }),
    m.description ? el('p', { text: String(m.description) }) : null,
    el('details', {}, el('summary', { text: 'Details' }), el('div', { class: 'muted', text: 'app ' + app }),
      el('table', {}, ...list.map((c) => el('tr', {}, el('td', {}, el('a', { class: 'muted', href: '/spells/' + c.txid, title: c.utxo, text: short(c.txid) + ':' + c.vout })), el('td', { class: 'num', text: formatAmount(c.data, decimals) }))))));
}

async function run() {
  const btn = $('show'), status = $('status'), errors = $('errors');
  for (const id of ['nfts', 'tokens', 'other', 'errors']) $(id).replaceChildren();
  for (const id of ['nfts', 'tokens', 'other']) $(id + '-section').hidden = true;
  const wanted = parseInput($('utxos').value);
  for (const w of wanted.filter((w) => w.bad)) errors.append(el('p', { class: 'error', text: 'not a txid or txid:vout: ' + w.bad }));
  const byTx = new Map();
  for (const w of wanted.filter((w) => !w.bad)) {
    const s = byTx.get(w.txid) || { all: false, vouts: new Set() };
    if (w.vout === undefined) s.all = true; else s.vouts.add(w.vout);
    byTx.set(w.txid, s);
  }
  if (byTx.size === 0) { status.textContent = 'nothing to look up'; return; }
  btn.disabled = true;
  let done = 0;
  status.textContent = 'loading 0/' + byTx.size + '…';
  const txids = [...byTx.keys()];
  const spells = await mapLimit(txids, 4, async (txid) => {
    try { return await fetchSpell(txid); }
    catch (e) { errors.append(el('p', { class: 'error', text: txid + ': ' + e.message })); return null; }
    finally { status.textContent = 'loading ' + (++done) + '/' + byTx.size + '…'; }
  });
  // collect charms of the wanted outputs; remember every NFT seen as potential token metadata
  const charms = [], refNfts = new Map();
  txids.forEach((txid, k) => {
    const spell = spells[k];
    if (!spell) return;
    const sel = byTx.get(txid);
    (spell.outs || []).forEach((o, vout) => {
      for (const [ref, data] of Object.entries(o.charms || {})) {
        const app = spell.apps[ref];
        if (typeof app !== 'string') continue;
        const [tag, identity, vk] = app.split('/');
        if (tag === 'n' && !refNfts.has(identity + '/' + vk)) refNfts.set(identity + '/' + vk, data);
        if (tag === 'n' && !refNfts.has(identity)) refNfts.set(identity, data);
        if (sel.all || sel.vouts.has(vout)) charms.push({ app, tag, identity, vk, data, txid, vout, utxo: txid + ':' + vout });
      }
    });
  });
  const tokens = new Map();
  let n = 0;
  for (const c of charms) {
    n++;
    if (c.tag === 'n') { $('nfts').append(nftCard(c)); $('nfts-section').hidden = false; }
    else if (c.tag === 't' && isInt(c.data)) { const l = tokens.get(c.app) || []; l.push(c); tokens.set(c.app, l); }
    else {
      $('other').append(el('div', { class: 'card', 'data-kind': 'other', 'data-app': c.app }, el('h3', { text: (c.tag === 'b' ? 'Order/contract ' : 'Charm ') + c.tag + '/' + short(c.identity) }), el('div', { class: 'muted', text: c.utxo }), details(c.app, [c])));
      $('other-section').hidden = false;
    }
  }
  for (const [app, list] of tokens) {
    const [, identity, vk] = app.split('/');
    $('tokens').append(tokenCard(app, list, refNfts.get(identity + '/' + vk) || refNfts.get(identity)));
    $('tokens-section').hidden = false;
  }
  const nTx = spells.filter(Boolean).length;
  status.textContent = n + ' charm(s) in ' + nTx + ' transaction(s) with spells, ' + (byTx.size - nTx) + ' without';
  btn.disabled = false;
}
$('show').addEventListener('click', () => { run().catch((e) => { $('status').textContent = 'error: ' + e.message; $('show').disabled = false; }); });
// ---- the address view: only when this page is served by a charms index (GET /v1/status answers)
async function servedByIndex() {
  try {
    const r = await fetch('/v1/status');
    if (r.status !== 200 && r.status !== 503) return false;
    const s = await r.json();
    return !!(s && typeof s === 'object' && s.index);
  } catch { return false; }
}
async function getJson(path) {
  const res = await fetch(path);
  const text = await res.text();
  if (!res.ok) { let msg = res.status + ''; try { msg = JSON.parse(text).error || msg; } catch {} throw new Error(msg); }
  return parseExact(text);
}
function holdingCard(b) {
  const decimals = Number.isInteger(b.decimals) ? b.decimals : 0;
  const kind = b.assetType === 'token' ? 'token' : b.assetType === 'nft' ? 'nft' : 'other';
  const [tag, identity] = String(b.appId).split('/');
  const img = mediaUrl(b.image, true);
  const title = b.name || b.symbol || (kind === 'token' ? 'Token ' : kind === 'nft' ? 'NFT ' : 'Charm ' + tag + '/') + short(identity);
  const pending = BigInt(b.unconfirmed) !== 0n || BigInt(b.mempoolSpent) !== 0n;
  return el('div', { class: 'card', 'data-kind': kind, 'data-app': b.appId },
    img ? el('img', { src: img, alt: String(title), loading: 'lazy', referrerpolicy: 'no-referrer' }) : (kind === 'nft' ? el('div', { class: 'noimg', 'aria-hidden': 'true', text: '◆' }) : null),
    el('h3', { text: String(title) }),
    kind === 'token' ? el('div', { class: 'amount' }, el('span', { class: 'value', text: formatAmount(b.confirmed, decimals) }), b.symbol ? el('span', { class: 'ticker', text: String(b.symbol) }) : null) : (b.symbol ? el('div', { class: 'ticker', text: String(b.symbol) }) : null),
    pending ? el('div', { class: 'muted pending', text: '+' + formatAmount(b.unconfirmed, decimals) + ' pending in, −' + formatAmount(b.mempoolSpent, decimals) + ' pending out' }) : null,
    el('div', { class: 'muted', text: b.utxos.length + ' UTXO' + (b.utxos.length === 1 ? '' : 's') + (decimals ? ' · ' + decimals + ' decimals' : '') }),
    b.description ? el('p', { text: String(b.description) }) : null,
    el('details', {}, el('summary', { text: 'Details' }), el('div', { class: 'muted', text: 'app ' + b.appId }),
      el('table', {}, ...b.utxos.map((u) => el('tr', {}, el('td', {}, el('a', { class: 'muted', href: '/v1/txs/' + u.txid, text: short(u.txid) + ':' + u.vout })), el('td', { class: 'num', text: formatAmount(u.amount, decimals) }), el('td', { class: 'muted', text: u.confirmed ? 'height ' + u.blockHeight : 'pending' }))))));
}
async function showAddress() {
  const address = $('address').value.trim();
  const status = $('addr-status'), errors = $('addr-errors');
  for (const id of ['addr-tokens', 'addr-nfts', 'addr-other', 'addr-pending', 'addr-history', 'addr-errors']) $(id).replaceChildren();
  for (const id of ['addr-tokens', 'addr-nfts', 'addr-other', 'addr-pending', 'addr-history']) $(id + '-section').hidden = true;
  if (!address) { status.textContent = 'enter an address'; return; }
  $('addr-show').disabled = true;
  status.textContent = 'loading…';
  try {
    const enc = encodeURIComponent(address);
    const [charms, txs] = await Promise.all([getJson('/v1/wallet/charms/' + enc), getJson('/v1/wallet/transactions/' + enc + '?page_size=100')]);
    const decimalsOf = new Map();
    for (const b of charms.balances) {
      decimalsOf.set(b.appId, Number.isInteger(b.decimals) ? b.decimals : 0);
      const kind = b.assetType === 'token' ? 'tokens' : b.assetType === 'nft' ? 'nfts' : 'other';
      $('addr-' + kind).append(holdingCard(b));
      $('addr-' + kind + '-section').hidden = false;
      const d = decimalsOf.get(b.appId), name = b.symbol || b.name || b.appId;
      if (BigInt(b.unconfirmed) !== 0n) { $('addr-pending').append(el('tr', { 'data-app': b.appId, 'data-dir': 'in' }, el('td', { text: String(name) }), el('td', { class: 'num', text: '+' + formatAmount(b.unconfirmed, d) }), el('td', { class: 'muted', text: 'receive waiting for a block' }))); $('addr-pending-section').hidden = false; }
      if (BigInt(b.mempoolSpent) !== 0n) { $('addr-pending').append(el('tr', { 'data-app': b.appId, 'data-dir': 'out' }, el('td', { text: String(name) }), el('td', { class: 'num', text: '−' + formatAmount(b.mempoolSpent, d) }), el('td', { class: 'muted', text: 'spent by an unconfirmed transaction' }))); $('addr-pending-section').hidden = false; }
    }
    for (const t of txs.transactions) {
      const assets = (t.assets || []).map((a) => (a.symbol || a.name || short(String(a.appId).split('/')[1] || '')) + ' ' + formatAmount(a.amount, decimalsOf.has(a.appId) ? decimalsOf.get(a.appId) : 0)).join(', ');
      $('addr-history').append(el('tr', { 'data-txid': t.txid },
        el('td', {}, el('a', { href: '/v1/txs/' + t.txid, text: short(t.txid) })),
        el('td', { text: t.direction === 'in' ? 'received' : 'sent' }),
        el('td', { text: assets }),
        el('td', { class: 'muted', text: t.block_height === null ? 'pending' : 'height ' + t.block_height + ' · ' + t.confirmations + ' conf.' })));
      $('addr-history-section').hidden = false;
    }
    status.textContent = charms.balances.length + ' holding(s), ' + txs.total + ' transaction(s)';
  } catch (e) {
    errors.append(el('p', { class: 'error', text: address + ': ' + e.message }));
    status.textContent = '';
  } finally { $('addr-show').disabled = false; }
}
$('addr-show').addEventListener('click', () => { showAddress(); });
servedByIndex().then((yes) => {
  document.documentElement.setAttribute('data-index', yes ? 'yes' : 'no');
  if (!yes) return;
  $('addr-section').hidden = false;
  const a = new URLSearchParams(location.search).get('address');
  if (a) { $('address').value = a; showAddress(); }
});
const q = new URLSearchParams(location.search).get('utxos') || new URLSearchParams(location.search).get('txid');
if (q) { $('utxos').value = q.split(',').join('\n'); $('show').click(); }
</script>
</body>
</html>
`;

/**
 * Content-Security-Policy for the page: only its own inline script (by hash) runs, requests go
 * to this server only, images may come from anywhere the metadata points (https, http, data).
 */
export const WALLET_PAGE_CSP = (() => {
  const script = /<script>([\s\S]*?)<\/script>/.exec(WALLET_PAGE)![1]!;
  const hash = createHash('sha256').update(script, 'utf8').digest('base64');
  return [
    "default-src 'none'",
    `script-src 'sha256-${hash}'`,
    "style-src 'unsafe-inline'",
    "connect-src 'self'",
    'img-src https: http: data:',
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
})();
