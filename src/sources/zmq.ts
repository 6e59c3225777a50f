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
 * A hostile or broken publisher cannot grow our memory or stop us: every frame is capped at
 * `maxMessageSize` bytes (ZeroMQ's `ZMQ_MAXMSGSIZE`: a peer sending a larger frame is disconnected
 * before the frame is read, and ZeroMQ reconnects), a message that is not Bitcoin Core's is
 * dropped and logged by its sizes and the topic's first bytes in hex (never the frame as text),
 * and a socket that fails is closed and opened again. Each of these is logged and reported as a
 * `resync`, so the follower re-reads the node.
 *
 * The `zeromq` package (prebuilt N-API binaries in the package) is loaded only when a subscriber
 * starts, so nothing else pays for it.
 */
import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { CharmsError } from '../errors.js';
import { redactText } from '../util/redact.js';
import { silentLogger, type Logger } from '../infra/log.js';

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

type ZmqResyncReason = 'connected' | 'gap' | 'malformed' | 'reopened';

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
}

export interface ZmqSubscriberOptions {
  topics?: readonly ZmqTopic[];
  /** Reconnect interval after a lost connection, ms (ZeroMQ reconnects by itself; default 500). */
  reconnectMs?: number;
  /** The largest frame accepted, bytes (default DEFAULT_ZMQ_MAX_MESSAGE; a larger one drops the connection). */
  maxMessageSize?: number;
  /** Where connections, drops, malformed messages and socket failures are said. */
  log?: Logger;
}

/** Bitcoin Core's subscribed notifications are at most 41 bytes a frame (a `sequence` A/R body). */
const DEFAULT_ZMQ_MAX_MESSAGE = 1024;
/** A malformed message is logged at once, then at most once per this long (with a count). */
const MALFORMED_LOG_MS = 60_000;

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

/** What a malformed message is logged as: bounded whatever its frames (the topic's first 16 bytes in hex). */
export function describeMalformed(frames: readonly Uint8Array[]): { topic_hex: string; frames: number; sizes: number[] } {
  const t = frames[0];
  return {
    topic_hex: t ? hex(t.subarray(0, 16)) + (t.length > 16 ? '…' : '') : '',
    frames: frames.length,
    sizes: frames.slice(0, 4).map((f) => f.length),
  };
}

export class ZmqSubscriber extends EventEmitter<ZmqSubscriberEvents> {
  private sock: import('zeromq').Subscriber | undefined;
  private readonly tracker = new SequenceTracker();
  private stopped = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  /** The socket closed on its disconnection (already logged). */
  private dropped: import('zeromq').Subscriber | undefined;
  private malformed = { count: 0, loggedAt: -Infinity };

  constructor(
    readonly url: string,
    private readonly o: ZmqSubscriberOptions = {},
  ) {
    super();
  }

  private get log(): Logger {
    return this.o.log ?? silentLogger;
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
    const sock = this.open(zmq);
    this.loop = this.run(zmq, sock);
  }

  /** A connected, subscribed socket (throws CONFIG for an endpoint ZeroMQ refuses). */
  private open(zmq: typeof import('zeromq')): import('zeromq').Subscriber {
    const sock = new zmq.Subscriber({
      linger: 0,
      reconnectInterval: this.o.reconnectMs ?? 500,
      maxMessageSize: this.o.maxMessageSize ?? DEFAULT_ZMQ_MAX_MESSAGE,
    });
    const url = redactText(this.url);
    // a (re)connection may follow missed messages: the follower re-reads the node
    sock.events.on('connect', () => {
      this.tracker.reset();
      this.log.info('ZMQ connected', { event: 'zmq_connected', url });
      this.emit('resync', { reason: 'connected', topic: undefined });
    });
    // the publisher went away, or sent a frame above the cap: ZeroMQ reconnects after the first but
    // gives up after the second (a protocol error ends its session), so we open a new socket either way
    sock.events.on('disconnect', () => {
      if (this.stopped || this.sock !== sock) return;
      this.log.warn('ZMQ disconnected; reconnecting (polling goes on)', { event: 'zmq_disconnected', url });
      this.dropped = sock;
      setImmediate(() => sock.close());
    });
    try {
      sock.connect(this.url);
    } catch (e) {
      sock.close();
      throw new CharmsError('CONFIG', redactText(`ZMQ endpoint ${this.url}: ${(e as Error).message}`), { cause: e });
    }
    for (const t of this.o.topics ?? ZMQ_TOPICS) sock.subscribe(t);
    this.sock = sock;
    return sock;
  }

  /** Receives until close(); a socket that fails is closed and opened again after `reconnectMs`. */
  private async run(zmq: typeof import('zeromq'), first: import('zeromq').Subscriber): Promise<void> {
    let sock: import('zeromq').Subscriber | undefined = first;
    while (!this.stopped) {
      if (sock) {
        try {
          for await (const frames of sock)
            try {
              this.handle(frames);
            } catch (e) {
              this.log.error('ZMQ notification handler failed', { event: 'zmq_handler_failed', error: String((e as Error)?.message ?? e).slice(0, 200) });
            }
          if (this.stopped) break;
          throw new Error('the socket stopped receiving');
        } catch (e) {
          if (this.stopped) break;
          if (this.dropped !== sock)
            this.log.warn('ZMQ socket failed; opening it again (polling goes on)', {
              event: 'zmq_reopen',
              error: String((e as Error)?.message ?? e).slice(0, 200),
            });
          this.dropped = undefined;
          sock.close();
          sock = undefined;
          this.sock = undefined;
        }
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.o.reconnectMs ?? 500);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
      if (this.stopped) break;
      try {
        sock = this.open(zmq);
        this.emit('resync', { reason: 'reopened', topic: undefined });
      } catch (e) {
        this.log.warn('ZMQ socket could not be opened again; retrying', {
          event: 'zmq_reopen_failed',
          error: String((e as Error)?.message ?? e).slice(0, 200),
        });
      }
    }
  }

  /** One message: an event, or dropped and logged (bounded) if it is not Bitcoin Core's. */
  private handle(frames: readonly Uint8Array[]): void {
    const d = decodeZmqMessage(frames);
    if (!d) {
      const m = this.malformed;
      m.count++;
      const t = Date.now();
      if (t - m.loggedAt >= MALFORMED_LOG_MS) {
        this.log.warn('ZMQ message dropped: not a Bitcoin Core notification', { event: 'zmq_malformed', ...describeMalformed(frames), dropped: m.count });
        m.loggedAt = t;
        m.count = 0;
      }
      this.emit('resync', { reason: 'malformed', topic: undefined });
      return;
    }
    const gap = this.tracker.next(d.topic, d.msg.seq);
    if (gap) this.emit('resync', { reason: 'gap', topic: d.topic, ...gap });
    if (d.topic === 'hashblock') this.emit('hashblock', d.msg);
    else this.emit('sequence', d.msg);
  }

  async close(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    this.sock?.close();
    await this.loop;
  }
}
