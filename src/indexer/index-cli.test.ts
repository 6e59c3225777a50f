import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scriptToAddress } from '../bitcoin/address.js';
import { parseTx } from '../bitcoin/tx.js';
import { FakeBitcoind } from '../testing/fake-bitcoind.js';
import { charmsBin, runCli, startCliIndex as startIndex, stopChild as stop } from '../testing/cli.js';
import { h1 } from '../testing/http.js';
import { sharedOrSkip } from '../testing/shared.js';
import { waitFor } from '../testing/wait.js';
import { skipOrFail } from '../testing/require.js';
import { bitcoinVectors, burnTx, VECTOR_BLOCKS } from '../testing/index-vectors.js';
import { startPostgres } from '../testing/postgres.js';
import { DEFAULT_MAX_REORG_DEPTH } from './follower.js';
import { CARDANO_MAX_REORG_DEPTH } from './cardano-follow.js';
import { defaultIndexDb, indexSettings } from '../settings/settings.js';
import { indexOptions } from '../cli/options.js';
import { BITCOIN_NETWORKS } from '../model/network.js';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tmpDb = () => {
  const d = mkdtempSync(join(tmpdir(), 'charms-index-cli-'));
  dirs.push(d);
  return join(d, 'index.sqlite');
};

/** Polls /v1/status until the index reaches `height` (bounded). */
async function untilHeight(port: number, height: number): Promise<Record<string, any>> {
  let last: Record<string, any> = {};
  for (let i = 0; i < 300; i++) {
    const r = await h1(port, 'GET', '/v1/status');
    last = JSON.parse(r.body.toString());
    if (last.index?.height === height && last.lag_blocks === 0) return last;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`the index did not reach ${height}: ${JSON.stringify(last)}`);
}

test('charms index follows the fake Bitcoin Core over RPC and over Esplora to the same answers', async (t) => {
  if (!sharedOrSkip(t)) return;
  const v = bitcoinVectors();
  const fake = await FakeBitcoind.start();
  const children: ChildProcess[] = [];
  try {
    for (const names of VECTOR_BLOCKS) fake.mine(names.map((n) => v.get(n)!.raw));
    const nft = v.get('1acee7fb')!;
    fake.mine([burnTx(nft.txid, 0, 1)]);
    const rpc = await startIndex(['--rpc-url', fake.rpcUrl, '--rpc-cookie', fake.cookieFile!, '--db', tmpDb(), '--poll-interval', '1']);
    children.push(rpc.child);
    const esp = await startIndex(['--esplora-url', fake.esploraUrl, '--network', 'regtest', '--db', tmpDb(), '--poll-interval', '1']);
    children.push(esp.child);
    const s = await untilHeight(rpc.port, fake.height);
    assert.equal(s.network, 'regtest');
    assert.equal(s.node.height, fake.height);
    await untilHeight(esp.port, fake.height);

    const token = v.get('28355906')!;
    const addr = scriptToAddress(parseTx(token.raw).outputs[0]!.script, BITCOIN_NETWORKS.regtest)!;
    for (const path of [`/v1/addresses/${addr}/balances`, `/v1/addresses/${addr}/history`, `/v1/outputs/${nft.txid}:0`, `/v1/txs/${token.txid}`]) {
      const [a, b] = [await h1(rpc.port, 'GET', path), await h1(esp.port, 'GET', path)];
      assert.equal(a.status, 200, path);
      assert.equal(a.body.toString(), b.body.toString(), `${path}: RPC and Esplora give the same bytes`);
    }
    assert.equal(JSON.parse((await h1(rpc.port, 'GET', `/v1/outputs/${nft.txid}:0`)).body.toString()).spent.height, 5);

    // a reorg on the node: the burn is orphaned, the NFT unspent again
    fake.reorg(1, [[], []]);
    await untilHeight(rpc.port, fake.height);
    assert.equal(JSON.parse((await h1(rpc.port, 'GET', `/v1/outputs/${nft.txid}:0`)).body.toString()).spent, null);
    // the spell-query routes answer on the same port (the RPC node is their source)
    assert.equal((await h1(rpc.port, 'GET', `/spells/${token.txid}`)).status, 200);
  } finally {
    await Promise.all(children.map(stop));
    await fake.stop();
  }
});

/** Polls /v1/status until the follower has asked the node for its tip once (bounded). */
async function afterFirstPoll(port: number): Promise<Record<string, any>> {
  let last: Record<string, any> = {};
  for (let i = 0; i < 300; i++) {
    last = JSON.parse((await h1(port, 'GET', '/v1/status')).body.toString());
    if (last.node) return last;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`no poll of the node: ${JSON.stringify(last)}`);
}

test('charms index starts a new index at the network default (mainnet, signet) unless --start-height says otherwise; a --network the chain contradicts is refused', async () => {
  // fake nodes whose block 0 is the real genesis block of regtest, mainnet and signet
  const fakes = {
    regtest: await FakeBitcoind.start(),
    mainnet: await FakeBitcoind.start({ network: 'mainnet' }),
    signet: await FakeBitcoind.start({ network: 'signet' }),
  };
  const children: ChildProcess[] = [];
  try {
    for (const fake of Object.values(fakes)) for (let i = 0; i < 3; i++) fake.mine([]);
    const esplora = (network: 'mainnet' | 'signet', more: string[] = []) =>
      startIndex(['--esplora-url', fakes[network].esploraUrl, '--network', network, '--db', tmpDb(), '--poll-interval', '1', ...more]);
    for (const [network, first] of [
      ['mainnet', 840_000],
      ['signet', 208_800],
    ] as const) {
      const idx = await esplora(network);
      children.push(idx.child);
      const s = await afterFirstPoll(idx.port);
      assert.equal(s.network, network);
      assert.equal(s.node.height, fakes[network].height);
      // nothing below the default start is read: the index waits for block `first`
      assert.deepEqual(s.index, { height: first - 1, hash: null, time: null }, network);
      await stop(idx.child);
    }
    const explicit = await esplora('mainnet', ['--start-height', '1']);
    children.push(explicit.child);
    const s = await untilHeight(explicit.port, fakes.mainnet.height);
    assert.equal(s.index.hash, fakes.mainnet.hashAt(fakes.mainnet.height));
    // a mainnet Esplora or node given as testnet4: refused, nothing indexed
    const wrong = await runCli(['index', '--port', '0', '--esplora-url', fakes.mainnet.esploraUrl, '--network', 'testnet4', '--db', tmpDb()]);
    assert.equal(wrong.status, 1);
    assert.match(wrong.stderr, /--network testnet4, but esplora .* serves mainnet \(its genesis block/);
    const node = ['--rpc-url', fakes.mainnet.rpcUrl, '--rpc-cookie', fakes.mainnet.cookieFile!, '--db', tmpDb()];
    const wrongNode = await runCli(['index', '--port', '0', ...node, '--network', 'testnet4']);
    assert.equal(wrongNode.status, 1);
    assert.match(wrongNode.stderr, /--network testnet4, but bitcoind .* serves mainnet/);
    // regtest starts at 0 without the option
    const reg = await startIndex(['--rpc-url', fakes.regtest.rpcUrl, '--rpc-cookie', fakes.regtest.cookieFile!, '--db', tmpDb(), '--poll-interval', '1']);
    children.push(reg.child);
    await untilHeight(reg.port, fakes.regtest.height);
  } finally {
    await Promise.all(children.map(stop));
    for (const fake of Object.values(fakes)) await fake.stop();
  }
});

test('charms index on a postgres:// --db: syncs, a second writer refuses, an --api-only reader serves the same bytes', async (t) => {
  if (!sharedOrSkip(t)) return;
  const pg = await startPostgres();
  if (!pg) {
    skipOrFail(t, 'PostgreSQL (/usr/lib/postgresql/<version>/bin) is not installed');
    return;
  }
  const fake = await FakeBitcoind.start();
  const children: ChildProcess[] = [];
  try {
    const v = bitcoinVectors();
    for (const names of VECTOR_BLOCKS) fake.mine(names.map((n) => v.get(n)!.raw));
    const db = await pg.createDb('index_cli');
    const node = ['--rpc-url', fake.rpcUrl, '--rpc-cookie', fake.cookieFile!, '--db', db];
    const writer = await startIndex([...node, '--poll-interval', '1']);
    children.push(writer.child);
    const s = await untilHeight(writer.port, fake.height);
    assert.deepEqual([s.db.engine, s.mode, s.network], ['postgres', 'indexer', 'regtest']);

    const token = v.get('28355906')!;
    const addr = scriptToAddress(parseTx(token.raw).outputs[0]!.script, BITCOIN_NETWORKS.regtest)!;
    const bal = JSON.parse((await h1(writer.port, 'GET', `/v1/addresses/${addr}/balances`)).body.toString());
    assert.ok(
      bal.balances.some((b: { app: string; confirmed: string }) => b.app.startsWith('t/') && BigInt(b.confirmed) > 0n),
      JSON.stringify(bal),
    );

    const second = await runCli(['index', '--port', '0', ...node]);
    assert.notEqual(second.status, 0);
    assert.match(second.stderr, /another indexer is writing this index/);
    assert.doesNotMatch(second.stderr, /postgres:\/\/postgres@/, 'the URL is redacted');

    const reader = await startIndex(['--db', db, '--api-only', '--network', 'regtest']);
    children.push(reader.child);
    const rs = JSON.parse((await h1(reader.port, 'GET', '/v1/status')).body.toString());
    assert.deepEqual([rs.mode, rs.index.height, rs.index.hash], ['api-only', s.index.height, s.index.hash]);
    const nft = v.get('1acee7fb')!;
    for (const path of [
      `/v1/addresses/${addr}/balances`,
      `/v1/addresses/${addr}/utxos`,
      `/v1/addresses/${addr}/history`,
      `/v1/outputs/${nft.txid}:0`,
      `/v1/txs/${token.txid}`,
      `/v1/wallet/charms/${addr}`,
    ]) {
      const [a, b] = [await h1(writer.port, 'GET', path), await h1(reader.port, 'GET', path)];
      assert.equal(a.status, 200, path);
      assert.equal(b.body.toString(), a.body.toString(), `${path}: the reader serves the writer's bytes`);
    }
  } finally {
    await Promise.all(children.map(stop));
    await fake.stop();
    await pg.stop();
  }
});

test('charms index refuses a second indexer and a --mock index without --mock', async () => {
  const fake = await FakeBitcoind.start();
  const children: ChildProcess[] = [];
  try {
    const db = tmpDb();
    const first = await startIndex(['--rpc-url', fake.rpcUrl, '--rpc-cookie', fake.cookieFile!, '--db', db, '--mock']);
    children.push(first.child);
    const second = await runCli(['index', '--port', '0', '--rpc-url', fake.rpcUrl, '--rpc-cookie', fake.cookieFile!, '--db', db, '--mock']);
    assert.notEqual(second.status, 0);
    assert.match(second.stderr, /another indexer is writing this index/);
    await stop(first.child);
    const noMock = await runCli(['index', '--port', '0', '--rpc-url', fake.rpcUrl, '--rpc-cookie', fake.cookieFile!, '--db', db]);
    assert.notEqual(noMock.status, 0);
    assert.match(noMock.stderr, /built with --mock/);
    // another --start-height than the one stored (0, regtest's default) is refused with what to do
    const otherStart = await runCli([
      'index',
      '--port',
      '0',
      '--rpc-url',
      fake.rpcUrl,
      '--rpc-cookie',
      fake.cookieFile!,
      '--db',
      db,
      '--mock',
      '--start-height',
      '5',
    ]);
    assert.notEqual(otherStart.status, 0);
    assert.match(otherStart.stderr, /--start-height 5, but the index at .* starts at 0: drop --start-height to keep it, or index into a new --db/);
    const badCache = await runCli(['index', '--port', '0', '--db', db, '--api-only', '--network', 'regtest', '--mock', '--answer-cache-mb', '-1']);
    assert.notEqual(badCache.status, 0);
    assert.match(badCache.stderr, /answer-cache-mb/);
    const badRecent = await runCli([
      'index',
      '--port',
      '0',
      '--rpc-url',
      fake.rpcUrl,
      '--rpc-cookie',
      fake.cookieFile!,
      '--db',
      db,
      '--mock',
      '--recent-tx-blocks',
      '1009',
    ]);
    assert.notEqual(badRecent.status, 0);
    assert.match(badRecent.stderr, /--recent-tx-blocks: expected an integer from 0 to 1008/);
    const apiOnly = await startIndex(['--db', db, '--api-only', '--network', 'regtest', '--mock']);
    children.push(apiOnly.child);
    const st = await h1(apiOnly.port, 'GET', '/v1/status');
    assert.equal(JSON.parse(st.body.toString()).mode, 'api-only');
  } finally {
    await Promise.all(children.map(stop));
    await fake.stop();
  }
});

test('charms index with --zmq-url applies a new block on the notification, without waiting for a poll', async (t) => {
  let fake: FakeBitcoind;
  try {
    fake = await FakeBitcoind.start({ zmq: true });
  } catch (e) {
    skipOrFail(t, `the zeromq package does not load here (${(e as Error).message})`);
    return;
  }
  const children: ChildProcess[] = [];
  try {
    fake.mine([]);
    // polling once an hour: only ZMQ can bring the next block in time
    const idx = await startIndex([
      '--rpc-url',
      fake.rpcUrl,
      '--rpc-cookie',
      fake.cookieFile!,
      '--db',
      tmpDb(),
      '--zmq-url',
      fake.zmqUrl!,
      '--poll-interval',
      '3600',
    ]);
    children.push(idx.child);
    await untilHeight(idx.port, 1);
    await fake.zmqSubscribed('hashblock');
    fake.mine([]);
    fake.mine([]);
    await untilHeight(idx.port, 3);
  } finally {
    await Promise.all(children.map(stop));
    await fake.stop();
  }
});

test('INDEX_DB_URL and BITCOIN_ZMQ_URL are read, flags win, the default database is per network in the data directory; option defaults are the library’s', () => {
  const env = { INDEX_DB_URL: 'postgres://idx@db/charms', BITCOIN_ZMQ_URL: 'tcp://127.0.0.1:28332', XDG_DATA_HOME: '/data', HOME: '/home/u' };
  assert.deepEqual([indexSettings(env).db, indexSettings(env).zmqUrl], ['postgres://idx@db/charms', 'tcp://127.0.0.1:28332']);
  assert.equal(indexSettings(env, { db: '/tmp/x.sqlite' }).db, '/tmp/x.sqlite');
  assert.equal(defaultIndexDb(indexSettings({ XDG_DATA_HOME: '/data' }), 'testnet4'), '/data/charms-ts/index-testnet4.sqlite');
  assert.equal(defaultIndexDb(indexSettings({ HOME: '/home/u' }), 'mainnet'), '/home/u/.local/share/charms-ts/index-mainnet.sqlite');
  assert.throws(() => defaultIndexDb(indexSettings({}), 'mainnet'), /give --db or INDEX_DB_URL/);
  const opt = (name: string) => indexOptions.find((o) => o.name === name) as { default?: string; help: string } | undefined;
  assert.equal(opt('port')?.default, '17786');
  // the default depends on the chain: the help says both, the library has them
  assert.equal(opt('max-reorg-depth')?.default, undefined);
  assert.match(opt('max-reorg-depth')!.help, new RegExp(`default ${DEFAULT_MAX_REORG_DEPTH} on Bitcoin, ${CARDANO_MAX_REORG_DEPTH} = k on Cardano`));
  assert.equal(DEFAULT_MAX_REORG_DEPTH, 100);
  assert.equal(CARDANO_MAX_REORG_DEPTH, 2160);
  assert.equal(opt('poll-interval')?.default, '5');
});

test('charms index --mock says MOCK MODE even at LOG_LEVEL=error', async () => {
  const fake = await FakeBitcoind.start();
  const child = spawn(
    process.execPath,
    [charmsBin, 'index', '--ip', '127.0.0.1', '--port', '0', '--mock', '--rpc-url', fake.rpcUrl, '--rpc-cookie', fake.cookieFile!, '--db', tmpDb()],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LOG_LEVEL: 'error' } },
  );
  let buf = '';
  try {
    const line = await new Promise<string>((resolve, reject) => {
      child.stderr!.on('data', (d: Buffer) => {
        buf += d.toString();
        const l = buf.split('\n').find((x) => x.includes('MOCK MODE'));
        if (l) resolve(l);
      });
      child.once('exit', () => reject(new Error(`charms index exited: ${buf}`)));
    });
    const j = JSON.parse(line);
    assert.deepEqual([j.level, j.event], ['warn', 'mock_mode']);
  } finally {
    await stop(child);
    await fake.stop();
  }
});

test('charms index against a node below --start-height: the waiting line on stderr, synced:false in status', async () => {
  const fake = await FakeBitcoind.start();
  let child: ChildProcess | undefined;
  try {
    for (let i = 0; i < 3; i++) fake.mine([]);
    const db = tmpDb();
    const ix = await startIndex(['--rpc-url', fake.rpcUrl, '--rpc-cookie', fake.cookieFile!, '--db', db, '--start-height', '50', '--poll-interval', '1']);
    child = ix.child;
    const line = `waiting for the node to reach the start height 50 (node at ${fake.height})`;
    await waitFor(() => ix.stderr().includes(line), 'the waiting line on stderr');
    const st = JSON.parse((await h1(ix.port, 'GET', '/v1/status')).body.toString());
    assert.equal(st.synced, false);
    assert.equal(st.waiting, line);
    assert.equal(st.index.height, 49);
  } finally {
    if (child) await stop(child);
    await fake.stop();
  }
});
