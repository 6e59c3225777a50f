/**
 * Following Cardano through Ogmios (JSON-RPC 2.0 over WebSocket beside the operator's own
 * cardano-node): the chain-sync client of the Cardano index.
 *
 * - `OgmiosSession`: one connection. Opening it checks the network (the Shelley genesis'
 *   `networkMagic` against the one asked for; a mismatch is a CONFIG error, never followed).
 *   `findIntersection(points)` places the node's cursor; `next()` answers the roll forwards and
 *   roll backwards in order, with up to `pipeline` `nextBlock` requests in flight (how Ogmios is
 *   fast: the node streams while we write). At most `pipeline` answers are ever buffered, each
 *   frame at most `maxPayload` bytes (ws refuses a longer one and closes): memory is bounded.
 *   A ping every `pingIntervalMs` unanswered by the next one ends the connection (a dead or
 *   silent Ogmios shows as an error, not a hang).
 * - `OgmiosFollower`: sessions one after another. When a connection fails it waits (exponential
 *   backoff, capped), reconnects, intersects again with the caller's latest committed points
 *   (`points()`), and goes on; the first answer after an intersection is a roll backward to it,
 *   which the caller applies like any other. CONFIG errors (wrong network, no transaction CBOR)
 *   are not retried: the operator must change something.
 *
 * Trust: the operator's cardano-node chooses the chain (as Bitcoin Core does for the Bitcoin
 * index). Ogmios sends no block CBOR, so what is checked is each transaction (its id against its
 * body, ogmios-protocol.ts; its spell against its proof, later), not the block body hash.
 */
import { WebSocket } from 'ws';
import { CharmsError } from '../errors.js';
import type { Logger } from '../infra/log.js';
import { CARDANO_NETWORKS, type CardanoNetwork } from '../model/network.js';
import { redactUrl } from '../util/redact.js';
import {
  decodeFrame,
  decodeIntersection,
  decodeNextBlock,
  decodeShelleyGenesis,
  type CardanoTip,
  type ChainSyncEvent,
  type PointOrOrigin,
  type RpcAnswer,
  type ShelleyGenesis,
} from './ogmios-protocol.js';

export interface OgmiosOptions {
  /** `ws://host:1337` (or `wss://`). */
  url: string;
  network: CardanoNetwork;
  /** `nextBlock` requests in flight (default 32; 1 = no pipelining). */
  pipeline?: number;
  /** The largest frame accepted, bytes (default 64 MiB: a block's JSON with every transaction's CBOR). */
  maxPayload?: number;
  /** Ping interval; a ping not answered before the next one ends the connection (default 15 s). */
  pingIntervalMs?: number;
  /** Bound on connecting and on the answer to a query or `findIntersection` (default 30 s). */
  requestTimeoutMs?: number;
  log?: Logger;
}

const DEFAULT_PIPELINE = 32;
const DEFAULT_MAX_PAYLOAD = 64 * 1024 * 1024;
const MAX_PIPELINE = 1000;

const unavailable = (name: string, m: string, cause?: unknown) =>
  new CharmsError('UPSTREAM_UNAVAILABLE', `Ogmios at ${name}: ${m}`, cause === undefined ? undefined : { cause });

interface Pending {
  method: string;
  resolve: (a: RpcAnswer) => void;
  reject: (e: unknown) => void;
}

/** One WebSocket connection to Ogmios. */
export class OgmiosSession {
  readonly name: string;
  /** The node's Shelley genesis (network magic, security parameter k), read when opened. */
  genesis!: ShelleyGenesis;
  private readonly pipeline: number;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  /** Ids of the `nextBlock` requests in flight, oldest first. */
  private readonly inFlight: number[] = [];
  /** `nextBlock` answers not yet taken, oldest first (with in-flight ones, at most `pipeline`). */
  private readonly ready: (ChainSyncEvent | CharmsError)[] = [];
  private waiter: { resolve: (e: ChainSyncEvent) => void; reject: (e: unknown) => void } | undefined;
  private failure: CharmsError | undefined;
  private syncing = false;
  private pingTimer: NodeJS.Timeout | undefined;
  private lastTip: CardanoTip | 'origin' | undefined;

  private constructor(
    private readonly ws: WebSocket,
    private readonly opts: OgmiosOptions,
  ) {
    this.name = redactUrl(opts.url);
    this.pipeline = Math.min(MAX_PIPELINE, Math.max(1, Math.floor(opts.pipeline ?? DEFAULT_PIPELINE)));
  }

  /** Connects and checks the network. */
  static open(opts: OgmiosOptions): Promise<OgmiosSession> {
    return OgmiosSession.connect(opts);
  }

  /** Connects; with `opts.network`, checks the node follows it. */
  private static async connect(opts: Omit<OgmiosOptions, 'network'> & { network?: CardanoNetwork | undefined }): Promise<OgmiosSession> {
    const name = redactUrl(opts.url);
    const timeout = opts.requestTimeoutMs ?? 30_000;
    let ws: WebSocket;
    try {
      ws = new WebSocket(opts.url, { maxPayload: opts.maxPayload ?? DEFAULT_MAX_PAYLOAD, handshakeTimeout: timeout, perMessageDeflate: false });
    } catch (e) {
      throw new CharmsError('CONFIG', `Ogmios URL ${JSON.stringify(name)} is not a ws:// or wss:// URL`, { cause: e });
    }
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', (e) => reject(unavailable(name, `cannot connect (${(e as Error).message}); is Ogmios running there?`, e)));
    });
    const s = new OgmiosSession(ws, opts as OgmiosOptions);
    s.listen();
    try {
      s.genesis = decodeShelleyGenesis(await s.request('queryNetwork/genesisConfiguration', { era: 'shelley' }));
      if (opts.network && s.genesis.networkMagic !== opts.network.networkMagic)
        throw new CharmsError(
          'CONFIG',
          `Ogmios at ${name} follows the network with magic ${s.genesis.networkMagic}, not Cardano ${opts.network.name} (magic ${opts.network.networkMagic}): point --ogmios-url at a node of ${opts.network.name} or change --network`,
        );
    } catch (e) {
      s.close();
      throw e;
    }
    return s;
  }

  private listen(): void {
    this.ws.on('message', (data, isBinary) => {
      if (isBinary) return this.fail(new CharmsError('UPSTREAM_FAILED', `Ogmios at ${this.name} sent a binary frame`));
      try {
        this.onAnswer(decodeFrame(data.toString()));
      } catch (e) {
        this.fail(e instanceof CharmsError ? e : new CharmsError('UPSTREAM_FAILED', `Ogmios at ${this.name} sent a frame we cannot read`, { cause: e }));
      }
    });
    this.ws.on('error', (e) => {
      const tooBig = (e as { code?: string }).code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH';
      this.fail(
        tooBig
          ? new CharmsError('UPSTREAM_FAILED', `Ogmios at ${this.name} sent a frame over ${this.opts.maxPayload ?? DEFAULT_MAX_PAYLOAD} bytes`, { cause: e })
          : unavailable(this.name, `connection failed (${(e as Error).message})`, e),
      );
    });
    this.ws.on('close', (code) => this.fail(unavailable(this.name, `connection closed (code ${code})`)));
    let answered = true;
    this.ws.on('pong', () => {
      answered = true;
    });
    const interval = this.opts.pingIntervalMs ?? 15_000;
    this.pingTimer = setInterval(() => {
      if (!answered) {
        this.fail(unavailable(this.name, `no answer to a ping for ${interval} ms: the connection is dead`));
        this.ws.terminate();
        return;
      }
      answered = false;
      this.ws.ping();
    }, interval);
    this.pingTimer.unref();
  }

  private onAnswer(a: RpcAnswer): void {
    const id = typeof a.id === 'number' ? a.id : Number.NaN;
    const p = this.pending.get(id);
    if (p === undefined) throw new CharmsError('UPSTREAM_FAILED', `Ogmios at ${this.name} answered a request we did not make (id ${JSON.stringify(a.id)})`);
    this.pending.delete(id);
    p.resolve(a);
  }

  /** Ends the session with `e`: every waiter and later call gets it. */
  private fail(e: CharmsError): void {
    if (this.failure !== undefined) return;
    this.failure = e;
    clearInterval(this.pingTimer);
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
    this.waiter?.reject(e);
    this.waiter = undefined;
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.terminate();
  }

  private send(method: string, params: unknown, p: Omit<Pending, 'method'>): number {
    const id = this.nextId++;
    this.pending.set(id, { method, ...p });
    const msg: Record<string, unknown> = { jsonrpc: '2.0', method, id };
    if (params !== undefined) msg.params = params;
    this.ws.send(JSON.stringify(msg), (e) => {
      if (e) this.fail(unavailable(this.name, `cannot send ${method} (${e.message})`, e));
    });
    return id;
  }

  /** One request and its result (an Ogmios error is UPSTREAM_FAILED, with its code and data). */
  async request(method: string, params?: unknown): Promise<unknown> {
    if (this.failure) throw this.failure;
    const timeout = this.opts.requestTimeoutMs ?? 30_000;
    const a = await new Promise<RpcAnswer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(unavailable(this.name, `no answer to ${method} in ${timeout} ms`));
      }, timeout);
      const done =
        <T>(f: (x: T) => void) =>
        (x: T) => {
          clearTimeout(timer);
          f(x);
        };
      this.send(method, params, { resolve: done(resolve), reject: done(reject) });
    });
    if (a.error) throw new OgmiosRpcError(method, a.error, this.name);
    return a.result;
  }

  /**
   * Places the node's cursor on the first of `points` it knows (give the newest first, `origin`
   * last). None known: UPSTREAM_FAILED with the node's tip. The next `next()` is a roll backward
   * to the intersection.
   */
  async findIntersection(points: PointOrOrigin[]): Promise<{ intersection: PointOrOrigin; tip: CardanoTip | 'origin' }> {
    if (this.syncing) throw new CharmsError('INTERNAL', 'findIntersection while nextBlock requests are in flight');
    if (points.length === 0) throw new CharmsError('INVALID_INPUT', 'findIntersection needs at least one point');
    try {
      const r = decodeIntersection(await this.request('findIntersection', { points }));
      this.lastTip = r.tip;
      return r;
    } catch (e) {
      if (e instanceof OgmiosRpcError && e.rpcCode === 1000)
        throw new CharmsError(
          'UPSTREAM_FAILED',
          `the Cardano node at ${this.name} knows none of the points ${points.map(pointText).join(', ')} (its tip: ${tipText(e.data)}): it follows another chain, or is still syncing below them`,
          { cause: e },
        );
      throw e;
    }
  }

  /** The next roll forward or backward, keeping `pipeline` requests in flight. */
  next(): Promise<ChainSyncEvent> {
    if (this.waiter) return Promise.reject(new CharmsError('INTERNAL', 'OgmiosSession.next called again before its last answer'));
    this.syncing = true;
    const ready = this.ready.shift();
    this.topUp();
    if (ready instanceof CharmsError) return Promise.reject(ready);
    if (ready !== undefined) return Promise.resolve(ready);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  private topUp(): void {
    while (!this.failure && this.inFlight.length + this.ready.length < this.pipeline) {
      const id = this.send('nextBlock', undefined, {
        resolve: (a) => this.onNextBlock(id, a),
        reject: () => {}, // the failure reaches the waiter through fail()
      });
      this.inFlight.push(id);
    }
  }

  private onNextBlock(id: number, a: RpcAnswer): void {
    if (this.inFlight[0] !== id) return this.fail(new CharmsError('UPSTREAM_FAILED', `Ogmios at ${this.name} answered nextBlock requests out of order`));
    this.inFlight.shift();
    let ev: ChainSyncEvent | CharmsError;
    try {
      if (a.error) throw new OgmiosRpcError('nextBlock', a.error, this.name);
      ev = decodeNextBlock(a.result);
      this.lastTip = ev.tip;
    } catch (e) {
      // a CONFIG error (no transaction CBOR) is kept as it is: the follower must not retry it
      const err = e instanceof CharmsError ? e : new CharmsError('UPSTREAM_FAILED', `Ogmios at ${this.name}: bad nextBlock answer`, { cause: e });
      return this.fail(err);
    }
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w.resolve(ev);
      this.topUp();
    } else this.ready.push(ev);
  }

  /** The node's tip as last reported (an intersection or a nextBlock answer). */
  get tip(): CardanoTip | 'origin' | undefined {
    return this.lastTip;
  }

  /** `nextBlock` requests in flight plus answers buffered (never more than `pipeline`). */
  get outstanding(): number {
    return this.inFlight.length + this.ready.length;
  }

  close(): void {
    this.fail(new CharmsError('UPSTREAM_UNAVAILABLE', `Ogmios session to ${this.name} closed`));
  }

  /**
   * The Cardano network the node behind Ogmios at `url` follows, by its Shelley genesis' network
   * magic; CONFIG for a magic that is none of mainnet, preprod, preview.
   */
  static async network(url: string, o: { requestTimeoutMs?: number } = {}): Promise<CardanoNetwork> {
    const s = await OgmiosSession.connect({ url, ...o });
    s.close();
    const magic = s.genesis.networkMagic;
    const net = Object.values(CARDANO_NETWORKS).find((n) => n.networkMagic === magic);
    if (!net)
      throw new CharmsError(
        'CONFIG',
        `Ogmios at ${s.name} follows a network with magic ${magic}, none of Cardano mainnet, preprod, preview (magics 764824073, 1, 2)`,
      );
    return net;
  }
}

/** An error Ogmios answered a request with. */
class OgmiosRpcError extends CharmsError {
  constructor(
    method: string,
    e: { code: number; message: string; data?: unknown },
    name: string,
    readonly rpcCode = e.code,
    readonly data = e.data,
  ) {
    super('UPSTREAM_FAILED', `Ogmios at ${name} refused ${method}: ${e.message} (code ${e.code})`);
  }
}

const pointText = (p: PointOrOrigin): string => (p === 'origin' ? 'origin' : `${p.slot}.${p.id}`);
const tipText = (d: unknown): string => {
  const t = (d as { tip?: unknown } | undefined)?.tip;
  if (t === 'origin') return 'origin';
  const o = t as { slot?: unknown; id?: unknown } | undefined;
  return o && typeof o.slot === 'number' && typeof o.id === 'string' ? `${o.slot}.${o.id}` : 'unknown';
};

/**
 * The heights whose committed points to offer `findIntersection`, newest first: the tip, then
 * exponentially spaced below it (tip-1, tip-2, tip-4, …) down to `floor` (the lowest height still
 * kept, e.g. tip - k, or the start block), so that a rollback of any depth the store can undo
 * still intersects in a few dozen points.
 */
export function intersectionHeights(tip: number, floor: number): number[] {
  const out: number[] = [];
  if (tip < floor) return out;
  out.push(tip);
  for (let step = 1; tip - step > floor; step *= 2) out.push(tip - step);
  if (out[out.length - 1] !== floor) out.push(floor);
  return out;
}

export interface FollowerStatus {
  connected: boolean;
  /** The node's tip as last reported. */
  tip: CardanoTip | 'origin' | undefined;
  /** Date.now() of the last event delivered. */
  lastEventAt: number | undefined;
  reconnects: number;
  /** The last connection failure's message (cleared by the next delivered event). */
  lastError: string | undefined;
}

export interface FollowerOptions extends OgmiosOptions {
  /** The points to intersect with, newest first (the caller's committed blocks; `origin` or the start point last). */
  points: () => PointOrOrigin[] | Promise<PointOrOrigin[]>;
  /** First and largest wait between reconnections (default 500 ms and 30 s). */
  backoffMs?: { first: number; max: number };
}

/**
 * Chain sync that survives its connection: `next()` reconnects (with backoff) and re-intersects
 * on failure, until `close()`. CONFIG errors (network mismatch, no transaction CBOR) and
 * "no intersection" are thrown to the caller, never retried.
 */
export class OgmiosFollower {
  private session: OgmiosSession | undefined;
  private closed = false;
  private wake: (() => void) | undefined;
  private delay: number;
  private readonly st: FollowerStatus = { connected: false, tip: undefined, lastEventAt: undefined, reconnects: 0, lastError: undefined };

  constructor(private readonly opts: FollowerOptions) {
    this.delay = opts.backoffMs?.first ?? 500;
  }

  status(): FollowerStatus {
    return { ...this.st, connected: this.session !== undefined, tip: this.session?.tip ?? this.st.tip };
  }

  /** The genesis of the connected node (undefined before the first connection). */
  get genesis(): ShelleyGenesis | undefined {
    return this.session?.genesis;
  }

  async next(): Promise<ChainSyncEvent> {
    for (;;) {
      if (this.closed) throw new CharmsError('UPSTREAM_UNAVAILABLE', 'the Ogmios follower is closed');
      try {
        if (!this.session) {
          const s = await OgmiosSession.open(this.opts);
          if (this.closed) {
            s.close();
            continue;
          }
          this.session = s;
          await s.findIntersection(await this.opts.points());
        }
        const ev = await this.session.next();
        this.st.lastEventAt = Date.now();
        this.st.lastError = undefined;
        this.st.tip = ev.tip;
        this.delay = this.opts.backoffMs?.first ?? 500;
        return ev;
      } catch (e) {
        this.session?.close();
        this.session = undefined;
        if (this.closed) throw e;
        if (!(e instanceof CharmsError) || e.code === 'CONFIG' || e.code === 'INTERNAL' || e.code === 'INVALID_INPUT' || isNoIntersection(e)) throw e;
        this.st.lastError = e.fullMessage;
        this.st.reconnects++;
        this.opts.log?.warn('Ogmios connection failed; reconnecting', { error: e.fullMessage, inMs: this.delay });
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, this.delay);
          this.wake = () => {
            clearTimeout(t);
            resolve();
          };
        });
        this.wake = undefined;
        this.delay = Math.min(this.delay * 2, this.opts.backoffMs?.max ?? 30_000);
      }
    }
  }

  close(): void {
    this.closed = true;
    this.session?.close();
    this.session = undefined;
    this.wake?.();
  }
}

const isNoIntersection = (e: CharmsError): boolean => e.cause instanceof OgmiosRpcError && e.cause.rpcCode === 1000;
