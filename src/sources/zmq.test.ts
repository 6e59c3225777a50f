import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeBitcoind } from '../testing/fake-bitcoind.js';
import { describeFailures, fuzz } from '../testing/fuzz/harness.js';
import { fillerTx } from '../testing/vector-chain.js';
import { createLogger } from '../infra/log.js';
import { SequenceTracker, ZmqSubscriber, decodeZmqMessage, describeMalformed, type ZmqHashBlock, type ZmqResync, type ZmqSequence } from './zmq.js';

/** Polls `cond` until it holds, at most `ms`. */
async function until(cond: () => boolean, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const frames = (topic: string, body: Uint8Array, seq: number): Uint8Array[] => {
  const s = Buffer.alloc(4);
  s.writeUInt32LE(seq);
  return [Buffer.from(topic), body, s];
};

test('decodeZmqMessage: Core framing for hashblock and sequence; anything else is undefined', () => {
  const hash = Buffer.alloc(32, 0xab);
  assert.deepEqual(decodeZmqMessage(frames('hashblock', hash, 7)), { topic: 'hashblock', msg: { hash: 'ab'.repeat(32), seq: 7 } });
  assert.deepEqual(decodeZmqMessage(frames('sequence', Buffer.concat([hash, Buffer.from('C')]), 1)), {
    topic: 'sequence',
    msg: { hash: 'ab'.repeat(32), label: 'C', mempoolSeq: undefined, seq: 1 },
  });
  const mseq = Buffer.alloc(8);
  mseq.writeBigUInt64LE(2n ** 40n + 3n);
  assert.deepEqual(decodeZmqMessage(frames('sequence', Buffer.concat([hash, Buffer.from('A'), mseq]), 2))?.msg, {
    hash: 'ab'.repeat(32),
    label: 'A',
    mempoolSeq: 2n ** 40n + 3n,
    seq: 2,
  });
  for (const bad of [
    frames('hashblock', hash.subarray(1), 0),
    frames('sequence', Buffer.concat([hash, Buffer.from('A')]), 0), // A without the mempool number
    frames('sequence', Buffer.concat([hash, Buffer.from('X')]), 0),
    frames('rawtx', hash, 0),
    [Buffer.from('hashblock'), hash],
    [Buffer.from('hashblock'), hash, Buffer.alloc(3)],
  ])
    assert.equal(decodeZmqMessage(bad), undefined);
});

test('fuzz: decodeZmqMessage answers or returns undefined on any frames, never throws', async () => {
  // input layout: [frame count, len1, frame1..., len2, frame2..., …]
  const split = (b: Uint8Array): Uint8Array[] => {
    const out: Uint8Array[] = [];
    let at = 1;
    for (let i = 0; i < (b[0] ?? 0) % 5 && at < b.length; i++) {
      const n = b[at]!;
      out.push(b.subarray(at + 1, at + 1 + n));
      at += 1 + n;
    }
    return out;
  };
  const join = (fs: Uint8Array[]): Uint8Array => Buffer.concat([Buffer.of(fs.length), ...fs.flatMap((f) => [Buffer.of(f.length), Buffer.from(f)])]);
  const hash = Buffer.alloc(32, 7);
  const stats = await fuzz(
    {
      name: 'zmq frames',
      seeds: () => [
        join(frames('hashblock', hash, 1)),
        join(frames('sequence', Buffer.concat([hash, Buffer.from('A'), Buffer.alloc(8, 1)]), 2)),
        join(frames('sequence', Buffer.concat([hash, Buffer.from('D')]), 3)),
      ],
      run: (input) => decodeZmqMessage(split(input)),
    },
    { iterations: 3000, seed: 22 },
  );
  assert.equal(stats.failures.length, 0, describeFailures(stats));
  assert.ok(stats.accepted > 3);
});

test('SequenceTracker: consecutive numbers pass, a skipped one is a gap, u32 wraps, reset forgets', () => {
  const t = new SequenceTracker();
  assert.equal(t.next('hashblock', 5), undefined);
  assert.equal(t.next('hashblock', 6), undefined);
  assert.equal(t.next('sequence', 0), undefined, 'topics are counted apart');
  assert.deepEqual(t.next('hashblock', 8), { expected: 7, got: 8 });
  assert.equal(t.next('hashblock', 0xffffffff) !== undefined, true);
  assert.equal(t.next('hashblock', 0), undefined, 'wraps');
  t.reset();
  assert.equal(t.next('hashblock', 42), undefined);
});

test('ZMQ: hashblock and sequence from the fake node; dropped messages and a restarted publisher are reported as resync', async () => {
  const fake = await FakeBitcoind.start({ zmq: true, auth: 'none' });
  const sub = new ZmqSubscriber(fake.zmqUrl!, { reconnectMs: 50 });
  const blocks: ZmqHashBlock[] = [];
  const seqs: ZmqSequence[] = [];
  const resyncs: ZmqResync[] = [];
  sub.on('hashblock', (m) => blocks.push(m));
  sub.on('sequence', (m) => seqs.push(m));
  sub.on('resync', (r) => resyncs.push(r));
  try {
    await sub.start();
    await fake.zmqSubscribed('hashblock');
    await fake.zmqSubscribed('sequence');
    await until(() => resyncs.some((r) => r.reason === 'connected'), 'the connected resync');

    const b1 = fake.mine();
    await until(() => blocks.length === 1 && seqs.length === 1, 'block 1');
    assert.deepEqual(blocks[0], { hash: b1.hash, seq: 0 });
    assert.deepEqual(seqs[0], { hash: b1.hash, label: 'C', mempoolSeq: undefined, seq: 0 });

    const [tx] = fillerTx(1, 3);
    fake.mempoolAdd(tx!.bytes);
    await until(() => seqs.length === 2, 'mempool add');
    assert.equal(seqs[1]!.label, 'A');
    assert.equal(seqs[1]!.hash, tx!.txid);
    assert.equal(seqs[1]!.mempoolSeq, 1n);

    // a reorg announces D then C, and hashblock for the new block
    const [b2] = fake.reorg(1, [[]]);
    await until(() => blocks.length === 2 && seqs.length === 4, 'the reorg');
    assert.deepEqual(
      seqs.slice(2).map((s) => [s.label, s.hash]),
      [
        ['D', b1.hash],
        ['C', b2!.hash],
      ],
    );
    assert.equal(blocks[1]!.hash, b2!.hash);
    assert.deepEqual(
      resyncs.filter((r) => r.reason !== 'connected'),
      [],
    );

    // dropped messages: the next ones skip numbers → resync for each topic
    fake.zmqDrop = true;
    fake.mine();
    fake.zmqDrop = false;
    const b4 = fake.mine();
    await until(() => blocks.some((b) => b.hash === b4.hash) && resyncs.filter((r) => r.reason === 'gap').length === 2, 'the gap');
    assert.deepEqual(
      resyncs.filter((r) => r.reason === 'gap').sort((a, b) => a.topic!.localeCompare(b.topic!)),
      [
        { reason: 'gap', topic: 'hashblock', expected: 2, got: 3 },
        { reason: 'gap', topic: 'sequence', expected: 4, got: 5 },
      ],
    );

    // the node restarts: the subscriber reconnects by itself and says so; numbering starts again without a false gap
    const connects = resyncs.filter((r) => r.reason === 'connected').length;
    await fake.zmqRestart();
    await until(() => resyncs.filter((r) => r.reason === 'connected').length > connects, 'the reconnection', 10_000);
    await fake.zmqSubscribed('hashblock', 10_000);
    const b5 = fake.mine();
    await until(() => blocks.some((b) => b.hash === b5.hash), 'a block after the restart', 10_000);
    assert.equal(blocks.at(-1)!.seq, 0);
    assert.equal(resyncs.filter((r) => r.reason === 'gap').length, 2);
  } finally {
    await sub.close();
    await fake.stop();
  }
});

test('describeMalformed: bounded whatever the frames (topic as short hex, sizes only)', () => {
  const big = Buffer.alloc(1 << 20, 0x41);
  const d = describeMalformed([big, big, big, big, big, big]);
  assert.equal(d.topic_hex, '41'.repeat(16) + '…');
  assert.deepEqual([d.frames, d.sizes.length], [6, 4]);
  assert.ok(JSON.stringify(d).length < 200);
  assert.deepEqual(describeMalformed([]), { topic_hex: '', frames: 0, sizes: [] });
});

test('ZMQ: a hostile publisher (an oversized frame, malformed messages) neither grows memory nor stops the subscriber', async () => {
  const zmq = await import('zeromq');
  // a real publisher on loopback; XPUB (verbose) so the test sees each (re)subscription
  const pub = new zmq.XPublisher({ linger: 0 });
  pub.verbosity = 'allSubs';
  await pub.bind('tcp://127.0.0.1:*');
  let subscriptions = 0;
  const reading = (async () => {
    try {
      for await (const [m] of pub) if (m && m[0] === 1) subscriptions++;
    } catch {
      // closed
    }
  })();
  const lines: string[] = [];
  const log = createLogger('info', (l) => void lines.push(l));
  const events = () => lines.map((l) => JSON.parse(l) as { event?: string; [k: string]: unknown });
  const sub = new ZmqSubscriber(pub.lastEndpoint!, { reconnectMs: 50, topics: ['hashblock'], log });
  const blocks: ZmqHashBlock[] = [];
  const resyncs: ZmqResync[] = [];
  sub.on('hashblock', (m) => blocks.push(m));
  sub.on('resync', (r) => resyncs.push(r));
  const seq = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n);
    return b;
  };
  try {
    await sub.start();
    await until(() => subscriptions === 1, 'the subscription');

    // 16 MiB in one frame: the connection is dropped before the frame is read, then reconnected
    const before = process.memoryUsage().rss;
    await pub.send(['hashblock', Buffer.alloc(16 << 20, 0xee), seq(0)]);
    await until(() => events().some((e) => e.event === 'zmq_disconnected'), 'the dropped connection', 10_000);
    await until(() => subscriptions === 2, 'the resubscription', 10_000);
    assert.equal(
      resyncs.some((r) => r.reason === 'malformed'),
      false,
      'the oversized frame never reached the subscriber',
    );
    assert.ok(process.memoryUsage().rss - before < 64 << 20, 'no frame-sized growth');

    // malformed messages (a binary topic under the subscribed prefix, a short body, two frames) are dropped and logged bounded
    await pub.send([Buffer.concat([Buffer.from('hashblock'), Buffer.alloc(900, 0xff)]), Buffer.alloc(32), seq(1)]);
    await pub.send(['hashblock', Buffer.alloc(31), seq(2)]);
    await pub.send(['hashblock', Buffer.alloc(32)]);
    const hash = Buffer.alloc(32, 0x5a);
    await pub.send(['hashblock', hash, seq(3)]);
    await until(() => blocks.length === 1, 'the valid notification after them');
    assert.deepEqual(blocks[0], { hash: '5a'.repeat(32), seq: 3 });
    assert.equal(resyncs.filter((r) => r.reason === 'malformed').length, 3);
    const malformed = events().filter((e) => e.event === 'zmq_malformed');
    assert.equal(malformed.length, 1, 'logged once, not per message');
    assert.equal(malformed[0]!.topic_hex, Buffer.from('hashblock').toString('hex') + 'ff'.repeat(7) + '…');
    for (const l of lines) assert.ok(l.length < 400, `a bounded log line: ${l.slice(0, 120)}…`);
    assert.ok(events().some((e) => e.event === 'zmq_connected' && e.level === 'info'));
    assert.ok(events().some((e) => e.event === 'zmq_disconnected' && e.level === 'warn'));
  } finally {
    await sub.close();
    pub.close();
    await reading;
  }
});
