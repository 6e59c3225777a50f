/**
 * `spell check` / `spell prove` fetch the transactions creating `tx.ins` that `--prev-txs` does
 * not give, from the configured transaction source (a loopback Esplora here), and say which.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { readSharedText, sharedOrSkip } from '../testing/shared.js';
import { funding } from '../testing/fixtures.js';
import { GENESIS } from '../sources/btc-source.js';
import { scriptToAddress } from '../bitcoin/address.js';
import { BITCOIN_NETWORKS } from '../model/network.js';
import { fromHex } from '../util/bytes.js';

const bin = fileURLToPath(new URL('./charms.js', import.meta.url));

function charms(args: string[], env: Record<string, string>, input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [bin, ...args], { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    c.on('close', (code) => resolve({ code, stdout, stderr }));
    c.stdin.end(input);
  });
}

test('missing prev txs of tx.ins are fetched from ESPLORA_URL and named on stderr; a wrong answer is refused', async (t) => {
  if (!sharedOrSkip(t)) return;
  const f = funding(readSharedText);
  const other = readSharedText('vectors', 'chain', '4125a400a51213b256b3b8087717e429712787d943e65f045063f4ea011bfe36.bitcoin.hex').trim();
  let lie = false;
  const asked: string[] = [];
  let genesis: string | undefined;
  const esplora = http.createServer((req, res) => {
    if (req.url === '/api/block-height/0' && genesis) return void res.end(genesis);
    const id = /^\/api\/tx\/([0-9a-f]{64})\/hex$/.exec(req.url ?? '')?.[1];
    if (id) asked.push(id);
    if (id !== f.txid) return void res.writeHead(404).end('Transaction not found');
    res.end(lie ? other : f.hex);
  });
  await new Promise<void>((r) => esplora.listen(0, '127.0.0.1', r));
  try {
    const env = { ESPLORA_URL: `http://127.0.0.1:${(esplora.address() as { port: number }).port}/api` };
    const spell = `{"version":15,"tx":{"ins":["${f.txid}:0"],"outs":[{}],"coins":[{"amount":1000,"dest":"${f.dest}"}]},"app_public_inputs":{}}`;
    const checked = await charms(['spell', 'check'], env, spell);
    assert.equal(checked.code, 0, checked.stderr);
    assert.match(checked.stderr, new RegExp(`fetched prev tx ${f.txid} from `));
    assert.deepEqual(asked, [f.txid]);
    const proved = await charms(['spell', 'prove', '--mock', '--change-address', f.changeAddress], env, spell);
    assert.equal(proved.code, 0, proved.stderr);
    assert.match(proved.stderr, /fetched prev tx/);
    assert.ok(JSON.parse(proved.stdout)[0].bitcoin);
    // inputs from a testnet4 source and a mainnet change address (the same script): refused before any contract runs
    genesis = GENESIS.testnet4;
    const main = scriptToAddress(fromHex(f.dest), BITCOIN_NETWORKS.mainnet)!;
    const wrong = await charms(['spell', 'prove', '--mock', '--change-address', main], env, spell);
    assert.equal(wrong.code, 1);
    assert.match(
      wrong.stderr,
      new RegExp(
        `Error: --change-address ${main}: a mainnet address, but the inputs are on testnet4 \\(their transactions came from .*\\): give a testnet4 change address \\(tb1…\\)`,
      ),
    );
    assert.doesNotMatch(wrong.stderr, /spell checked/);
    const right = await charms(['spell', 'prove', '--mock', '--change-address', f.changeAddress], env, spell);
    assert.equal(right.code, 0, right.stderr);
    genesis = undefined;
    // given with --prev-txs: nothing is fetched
    asked.length = 0;
    const given = await charms(['spell', 'check', '--prev-txs', f.hex], env, spell);
    assert.equal(given.code, 0, given.stderr);
    assert.doesNotMatch(given.stderr, /fetched/);
    assert.deepEqual(asked, []);
    // a source answering another transaction is refused
    lie = true;
    const lied = await charms(['spell', 'check'], env, spell);
    assert.equal(lied.code, 1);
    assert.match(lied.stderr, /answered a different transaction for/);
    // without a source the reference's rule stands: prev_txs must be given
    const none = await charms(['spell', 'check'], {}, spell);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /prev_txs/);
  } finally {
    esplora.close();
  }
});
