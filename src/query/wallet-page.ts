/**
 * A small wallet view served by the spell-query service: paste txids or UTXOs (`txid:vout`), it
 * asks `/spells/<txid>` and shows NFTs (image, name) and fungible tokens (amount, ticker/name),
 * following CHIP-0420 metadata where present, with details on demand.
 */
export const WALLET_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Charms wallet view</title>
<style>
  body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; color: #222; }
  textarea { width: 100%; height: 5rem; font-family: monospace; }
  .grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(16rem, 1fr)); gap: 1rem; margin-top: 1rem; }
  .card { border: 1px solid #ccc; border-radius: 8px; padding: .8rem; }
  .card img { width: 100%; max-height: 14rem; object-fit: contain; background: #f4f4f4; }
  .amount { font-size: 1.6rem; font-weight: 600; }
  .muted { color: #777; font-size: .8rem; word-break: break-all; }
  .error { color: #b00; }
  pre { white-space: pre-wrap; word-break: break-all; font-size: .75rem; }
</style>
</head>
<body>
<h1>Charms wallet view</h1>
<p>Enter transaction ids or UTXOs (<code>txid:vout</code>), one per line.</p>
<textarea id="utxos" placeholder="txid or txid:vout"></textarea>
<p><button id="show">Show charms</button> <span id="status"></span></p>
<div id="charms" class="grid"></div>
<script>
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
const safeUrl = (u) => (typeof u === 'string' && /^(https?:|data:image\\/|ipfs:)/.test(u) ? u : '');
function card(app, data, utxo, spell) {
  const [tag, identity] = app.split('/');
  const meta = data && typeof data === 'object' ? data : {};
  let title = meta.name || meta.ticker || '';
  let body = '';
  if (tag === 't') {
    // token metadata usually lives in the NFT with the same identity
    for (const [ref, a] of Object.entries(spell.apps)) {
      const [t2, id2] = a.split('/');
      if (t2 === 'n' && id2 === identity) {
        for (const o of spell.outs) { const d = o.charms && o.charms[ref]; if (d && typeof d === 'object') { title = d.ticker || d.name || title; } }
      }
    }
    body = '<div class="amount" data-kind="token">' + esc(typeof data === 'number' ? data.toLocaleString('en-US') : JSON.stringify(data)) + '</div>';
  } else {
    const img = safeUrl(meta.image);
    body = (img ? '<img alt="' + esc(meta.name || 'NFT') + '" src="' + esc(img) + '">' : '') +
      (meta.description ? '<p>' + esc(meta.description) + '</p>' : '');
  }
  return '<div class="card" data-tag="' + esc(tag) + '"><h3>' + esc(title || ((tag === 'n' ? 'NFT ' : tag === 't' ? 'Token ' : 'Charm ') + identity.slice(0, 8) + '…')) + '</h3>' + body +
    '<div class="muted">' + esc(utxo) + '</div><details><summary>Details</summary><pre>' + esc(JSON.stringify({ app, data }, null, 2)) + '</pre></details></div>';
}
async function show() {
  const out = document.getElementById('charms');
  const status = document.getElementById('status');
  out.innerHTML = '';
  const lines = document.getElementById('utxos').value.split(/\\s+/).filter(Boolean);
  let n = 0;
  for (const line of lines) {
    const [txid, vout] = line.split(':');
    status.textContent = 'loading ' + txid.slice(0, 12) + '…';
    const res = await fetch('/spells/' + encodeURIComponent(txid));
    if (res.status === 204) continue;
    if (!res.ok) { out.insertAdjacentHTML('beforeend', '<div class="card error">' + esc(txid) + ': ' + esc((await res.json()).error) + '</div>'); continue; }
    const spell = await res.json();
    spell.outs.forEach((o, i) => {
      if (vout !== undefined && Number(vout) !== i) return;
      for (const [ref, data] of Object.entries(o.charms || {})) { out.insertAdjacentHTML('beforeend', card(spell.apps[ref], data, txid + ':' + i, spell)); n++; }
    });
  }
  status.textContent = n + ' charm(s)';
}
document.getElementById('show').addEventListener('click', show);
const q = new URLSearchParams(location.search).get('utxos');
if (q) { document.getElementById('utxos').value = q.split(',').join('\\n'); show(); }
</script>
</body>
</html>
`;
