/**
 * `listWalletCharms` over both transports of the one node client: a Bitcoin Core JSON-RPC fake on
 * loopback and a fake `bitcoin-cli` program, both answering from the chain vectors. The two give
 * the same list; the node's errors map the same way (-5 → NOT_FOUND, missing program → 503).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { CharmsError } from '../errors.js';
import { CliNode, rpcNodeFromConfig, walletNodeOf } from '../sources/bitcoin-node.js';
import { listWalletCharms } from './wallet-list.js';
import { extractAndVerifySpell } from '../verify/index.js';
import { readSharedText, sharedOrSkip, sharedPath } from '../testing/shared.js';

interface Wallet {
  unspent: { txid: string; vout: number; amount: number; confirmations: number; solvable?: boolean }[];
  txs: Record<string, string>;
  /** charm-carrying, solvable UTXOs per-transaction verification finds */
  expected: string[];
}

function walletFromVectors(): Wallet {
  const txs: Record<string, string> = {};
  const unspent: Wallet['unspent'] = [];
  const expected: string[] = [];
  readdirSync(sharedPath('vectors', 'chain'))
    .filter((f) => f.endsWith('.bitcoin.hex'))
    .forEach((f, n) => {
      const hex = readSharedText('vectors', 'chain', f).trim();
      const txid = n.toString(16).padStart(64, '0');
      txs[txid] = hex;
      let outs: Map<number, unknown>[] = [];
      try {
        outs = extractAndVerifySpell({ bitcoin: hex }, false).tx.outs;
      } catch {
        /* no valid spell: listed, then skipped */
      }
      for (let vout = 0; vout < Math.max(2, outs.length); vout++) {
        const solvable = vout !== 1; // every second output is not the wallet's to spend
        unspent.push({ txid, vout, amount: 0.29, confirmations: n, solvable });
        if (solvable && (outs[vout]?.size ?? 0) > 0) expected.push(`${txid}:${vout}`);
      }
    });
  // a UTXO whose transaction the node cannot give: skipped
  unspent.push({ txid: 'ff'.repeat(32), vout: 0, amount: 1, confirmations: 1 });
  return { unspent, txs, expected: expected.sort() };
}

test('wallet list: RPC and bitcoin-cli transports give the same charms, exactly the verifying solvable UTXOs', async (t) => {
  if (!sharedOrSkip(t)) return;
  const w = walletFromVectors();
  assert.ok(w.expected.length >= 5, `${w.expected.length} charm UTXOs`);
  const calls: string[] = [];
  const rpc = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const { method, params } = JSON.parse(body) as { method: string; params: unknown[] };
      calls.push(method);
      const answer =
        method === 'listunspent'
          ? { result: w.unspent, error: null }
          : w.txs[params[0] as string]
            ? { result: w.txs[params[0] as string], error: null }
            : { result: null, error: { code: -5, message: 'No such mempool or blockchain transaction' } };
      res.writeHead(answer.error ? 500 : 200, { 'content-type': 'application/json' }); // bitcoind answers RPC errors with 500
      res.end(JSON.stringify({ ...answer, id: 'charms' }));
    });
  });
  await new Promise<void>((r) => rpc.listen(0, '127.0.0.1', r));
  const dir = mkdtempSync(join(tmpdir(), 'wallet-node-'));
  writeFileSync(join(dir, 'wallet.json'), JSON.stringify(w));
  const fake = join(dir, 'fake-bitcoin-cli.cjs');
  writeFileSync(
    fake,
    `const d = require(${JSON.stringify(join(dir, 'wallet.json'))});
     const [net, cmd, arg] = process.argv.slice(2);
     if (net !== '-testnet4') { console.error('error: wrong network'); process.exit(1); }
     if (cmd === 'listunspent' && arg === '0') console.log(JSON.stringify(d.unspent));
     else if (cmd === 'getrawtransaction' && d.txs[arg]) console.log(d.txs[arg]);
     else { console.error('error code: -5\\nerror message:\\nNo such mempool or blockchain transaction.'); process.exit(5); }`,
  );
  try {
    const url = `http://127.0.0.1:${(rpc.address() as AddressInfo).port}`;
    const viaRpc = walletNodeOf({ rpcUrl: url, rpcUser: 'u', rpcPassword: 'p' }, { bin: 'bitcoin-cli', args: [] }, {});
    const viaCli = walletNodeOf({}, { bin: process.execPath, args: [fake, '-testnet4'] }, {});
    assert.equal(viaCli.name, process.execPath);
    const seen: string[] = [];
    const a = await listWalletCharms(viaRpc, { mock: false, onTx: (id) => seen.push(id) });
    const b = await listWalletCharms(viaCli, { mock: false });
    assert.deepEqual(a.map((x) => x.utxoId).sort(), w.expected);
    assert.deepEqual(b, a);
    assert.deepEqual(seen, [...new Set(w.unspent.map((u) => u.txid))].sort(), 'every transaction visited, in txid order');
    assert.ok(
      a.every((x) => x.sats === 29_000_000n && x.charms.length > 0),
      'sats rounded, not truncated (0.29 BTC)',
    );
    assert.equal(calls.filter((c) => c === 'listunspent').length, 1);
    // the same error mapping on both transports
    for (const node of [viaRpc, viaCli])
      await assert.rejects(node.call('getrawtransaction', ['ee'.repeat(32)]), (e: unknown) => e instanceof CharmsError && e.code === 'NOT_FOUND');
  } finally {
    rpc.close();
  }
});

test('wallet list: a node that is not there is a 503-class error, never an empty list', async () => {
  const missing = new CliNode({ bin: '/nonexistent/bitcoin-cli', args: [] });
  await assert.rejects(
    listWalletCharms(missing, { mock: false }),
    (e: unknown) => e instanceof CharmsError && e.code === 'UPSTREAM_UNAVAILABLE' && /BITCOIN_CLI/.test(e.message),
  );
  const closed = rpcNodeFromConfig({ rpcUrl: 'http://127.0.0.1:9', timeoutMs: 2000 })!;
  await assert.rejects(listWalletCharms(closed, { mock: false }), (e: unknown) => e instanceof CharmsError && e.code === 'UPSTREAM_UNAVAILABLE');
});

test('wallet list: a node error names the node once (RPC without credentials, a missing bitcoin-cli)', async () => {
  const rpc = createServer((req, res) => {
    req.resume();
    res.writeHead(401).end();
  });
  await new Promise<void>((r) => rpc.listen(0, '127.0.0.1', r));
  try {
    const node = rpcNodeFromConfig({ rpcUrl: `http://127.0.0.1:${(rpc.address() as AddressInfo).port}` })!;
    await assert.rejects(listWalletCharms(node, { mock: false }), (e: unknown) => {
      const m = (e as CharmsError).fullMessage;
      return (
        /^listunspent failed: bitcoind http:\/\/127\.0\.0\.1:\d+\/? asks for RPC credentials \(401\) and none were given: /.test(m) &&
        m.split(node.name).length === 2
      );
    });
  } finally {
    rpc.close();
  }
  const missing = new CliNode({ bin: '/nonexistent/bitcoin-cli', args: [] });
  await assert.rejects(
    listWalletCharms(missing, { mock: false }),
    (e: unknown) => (e as CharmsError).fullMessage === 'cannot run /nonexistent/bitcoin-cli: ENOENT (install Bitcoin Core or set BITCOIN_CLI)',
  );
});
