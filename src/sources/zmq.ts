/**
 * Bitcoin Core's ZMQ notifications (`-zmqpubhashblock`, `-zmqpubsequence`): a hint that the chain
 * or the mempool changed, so the follower reacts within milliseconds instead of at its next poll.
 * Never the only signal: ZMQ drops messages (high-water marks, reconnects), so the follower polls
 * anyway, and this subscriber says when it may have missed something: each topic's messages carry
 * a 4-byte little-endian sequence number, and a skipped number, a (re)connection or a message we
 * cannot read is reported as a `resync` event, after which the follower re-reads the node.
 *
 * Frames: [topic, body, sequence]. `hashblock` body: the 32-byte block hash (display order).
 * `sequence` body: a 32-byte hash (display order), a label (`C` block connected, `D` block
 * disconnected, `A` tx added to the mempool, `R` tx removed for a reason other than a block) and,
 * for `A`/`R`, the 8-byte little-endian mempool sequence number.
 *
 * The `zeromq` package (prebuilt N-API binaries in the package) is loaded only when a subscriber
 * starts, so nothing else pays for it.
 */
import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { CharmsError } from '../errors.js';
import { redactText } from '../util/redact.js';

const ZMQ_TOPICS = ['hashblock', 'sequence'] as const;
type ZmqTopic = (typeof ZMQ_TOPICS)[number];

export interface ZmqHashBlock {
  hash: string;
  seq: number;
}

export interface ZmqSequence {
  hash: string;
  label: 'C' | 'D' | 'A' | 'R';
  /** The mempool sequence number (A and R only). */
  mempoolSeq: bigint | undefined;
  seq: number;
}

type ZmqResyncReason = 'connected' | 'gap' | 'malformed';

export interface ZmqResync {
  reason: ZmqResyncReason;
  topic: string | undefined;
  /** For a gap: the number expected and the one received. */
  expected?: number;
  got?: number;
}

export interface ZmqSubscriberEvents {
  hashblock: [ZmqHashBlock];
  sequence: [ZmqSequence];
  resync: [ZmqResync];
  /** The socket failed (the subscriber stops; the follower goes on polling). */
  error: [Error];
}

export interface ZmqSubscriberOptions {
  topics?: readonly ZmqTopic[];
  /** Reconnect interval after a lost connection, ms (ZeroMQ reconnects by itself; default 500). */
  reconnectMs?: number;
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/** Reads one notification; undefined when its frames are not Bitcoin Core's. */
export function decodeZmqMessage(
  frames: readonly Uint8Array[],
): { topic: 'hashblock'; msg: ZmqHashBlock } | { topic: 'sequence'; msg: ZmqSequence } | undefined {
  if (frames.length !== 3 || frames[2]!.length !== 4) return undefined;
  const topic = Buffer.from(frames[0]!).toString('utf8');
  const body = frames[1]!;
  const seq = Buffer.from(frames[2]!).readUInt32LE(0);
  if (topic === 'hashblock') return body.length === 32 ? { topic, msg: { hash: hex(body), seq } } : undefined;
  if (topic === 'sequence') {
    if (body.length < 33) return undefined;
    const label = String.fromCharCode(body[32]!);
    if (label === 'C' || label === 'D')
      return body.length === 33 ? { topic, msg: { hash: hex(body.subarray(0, 32)), label, mempoolSeq: undefined, seq } } : undefined;
    if (label === 'A' || label === 'R')
      return body.length === 41
        ? { topic, msg: { hash: hex(body.subarray(0, 32)), label, mempoolSeq: Buffer.from(body).readBigUInt64LE(33), seq } }
        : undefined;
  }
  return undefined;
}

/** Tracks each topic's sequence numbers; says when one was skipped (u32, wrapping). */
export class SequenceTracker {
  private readonly last = new Map<string, number>();
  /** The gap, if `seq` does not follow the last number seen on `topic`. */
  next(topic: string, seq: number): { expected: number; got: number } | undefined {
    const prev = this.last.get(topic);
    this.last.set(topic, seq);
    if (prev === undefined) return undefined;
    const expected = (prev + 1) >>> 0;
    return seq === expected ? undefined : { expected, got: seq };
  }
  /** Forget what was seen (after a reconnection the publisher may have restarted from 0). */
  reset(): void {
    this.last.clear();
  }
}

export class ZmqSubscriber extends EventEmitter<ZmqSubscriberEvents> {
  private sock: import('zeromq').Subscriber | undefined;
  private readonly tracker = new SequenceTracker();
  private stopped = false;
  private loop: Promise<void> | undefined;

  constructor(
    readonly url: string,
    private readonly o: ZmqSubscriberOptions = {},
  ) {
    super();
  }

  /** Connects and subscribes (resolves once the socket is set up; messages arrive as events). */
  async start(): Promise<void> {
    let zmq: typeof import('zeromq');
    try {
      // require, not import(): the CLI runs from a CommonJS bundle in a vm script, where a
      // dynamic import() has no loader
      zmq = createRequire(import.meta.url)('zeromq') as typeof import('zeromq');
    } catch (e) {
      throw new CharmsError(
        'CONFIG',
        `ZMQ notifications need the zeromq package, which did not load (${(e as Error).message}); run without --zmq-url (the index polls)`,
        { cause: e },
      );
    }
    const sock = new zmq.Subscriber({ linger: 0, reconnectInterval: this.o.reconnectMs ?? 500 });
    // a (re)connection may follow missed messages: the follower re-reads the node
    sock.events.on('connect', () => {
      this.tracker.reset();
      this.emit('resync', { reason: 'connected', topic: undefined });
    });
    try {
      sock.connect(this.url);
    } catch (e) {
      sock.close();
      throw new CharmsError('CONFIG', redactText(`ZMQ endpoint ${this.url}: ${(e as Error).message}`), { cause: e });
    }
    for (const t of this.o.topics ?? ZMQ_TOPICS) sock.subscribe(t);
    this.sock = sock;
    this.loop = this.receive(sock);
  }

  private async receive(sock: import('zeromq').Subscriber): Promise<void> {
    try {
      for await (const frames of sock) {
        const d = decodeZmqMessage(frames);
        if (!d) {
          this.emit('resync', { reason: 'malformed', topic: frames[0] ? Buffer.from(frames[0]).toString('utf8').slice(0, 32) : undefined });
          continue;
        }
        const gap = this.tracker.next(d.topic, d.msg.seq);
        if (gap) this.emit('resync', { reason: 'gap', topic: d.topic, ...gap });
        if (d.topic === 'hashblock') this.emit('hashblock', d.msg);
        else this.emit('sequence', d.msg);
      }
    } catch (e) {
      if (!this.stopped && this.listenerCount('error') > 0) this.emit('error', e as Error);
    }
  }

  async close(): Promise<void> {
    this.stopped = true;
    this.sock?.close();
    await this.loop;
  }
}
