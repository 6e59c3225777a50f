import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CharmsError } from '../errors.js';
import { RpcNode } from './bitcoin-node.js';
import { EsploraClient } from './esplora.js';

/**
 * A server that closes the connection of the first `drops` requests without answering (what a
 * server dropping an idle keep-alive connection looks like to the request sent on it), then
 * answers the rest.
 */
async function droppingServer(drops: number, answer: (req: http.IncomingMessage) => string) {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push(`${req.method} ${req.url}`);
      if (seen.length <= drops) return void req.socket.destroy();
      res.writeHead(200, { 'content-type': 'application/json' }).end(answer(req));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return { url, seen, close: () => new Promise<void>((r) => server.close(() => r())) };
}

test('RPC reads are sent once more when the connection closes before an answer; broadcasts are not', async (t) => {
  const s = await droppingServer(1, () => JSON.stringify({ result: 7, error: null, id: 'charms' }));
  t.after(() => s.close());
  const node = new RpcNode(s.url, () => undefined, 5_000);
  assert.equal(await node.call('getblockcount', []), 7);
  assert.equal(s.seen.length, 2, 'one drop, one answered retry');

  const once = await droppingServer(1, () => JSON.stringify({ result: 'ab', error: null, id: 'charms' }));
  t.after(() => once.close());
  const sender = new RpcNode(once.url, () => undefined, 5_000);
  await assert.rejects(sender.call('sendrawtransaction', ['00']), (e: unknown) => e instanceof CharmsError && e.code === 'UPSTREAM_UNAVAILABLE');
  assert.equal(once.seen.length, 1, 'a broadcast is never repeated');

  // only known reads are repeated: any other method (a package broadcast, a wallet call) is sent once
  const write = await droppingServer(2, () => JSON.stringify({ result: {}, error: null, id: 'charms' }));
  t.after(() => write.close());
  const writer = new RpcNode(write.url, () => undefined, 5_000);
  for (const method of ['submitpackage', 'sendtoaddress'])
    await assert.rejects(writer.call(method, []), (e: unknown) => e instanceof CharmsError && e.code === 'UPSTREAM_UNAVAILABLE');
  assert.equal(write.seen.length, 2, 'each sent once');

  const twice = await droppingServer(2, () => JSON.stringify({ result: 1, error: null, id: 'charms' }));
  t.after(() => twice.close());
  const stubborn = new RpcNode(twice.url, () => undefined, 5_000);
  await assert.rejects(stubborn.call('getblockcount', []), (e: unknown) => e instanceof CharmsError && e.code === 'UPSTREAM_UNAVAILABLE');
  assert.equal(twice.seen.length, 2, 'one retry only');
});

test('Esplora GETs are sent once more when the connection closes before an answer; POSTs are not', async (t) => {
  const s = await droppingServer(1, () => '"00ff"');
  t.after(() => s.close());
  const esplora = new EsploraClient(s.url, 5_000);
  const a = await esplora.request('/blocks/tip/hash');
  assert.equal(a.status, 200);
  assert.equal(a.text(), '"00ff"');
  assert.deepEqual(s.seen, ['GET /blocks/tip/hash', 'GET /blocks/tip/hash']);

  const p = await droppingServer(1, () => 'txid');
  t.after(() => p.close());
  const poster = new EsploraClient(p.url, 5_000);
  await assert.rejects(poster.request('/tx', { method: 'POST', body: '00' }), (e: unknown) => e instanceof CharmsError && e.code === 'UPSTREAM_UNAVAILABLE');
  assert.equal(p.seen.length, 1);
});
