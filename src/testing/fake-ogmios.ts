/**
 * A fake Ogmios on loopback, written from its API schema (CardanoSolutions/ogmios
 * `docs/static/api/v6.14` and `v7.0`): JSON-RPC 2.0 over WebSocket with `findIntersection`,
 * `nextBlock` (roll forward, roll backward, waiting at the tip), and
 * `queryNetwork/genesisConfiguration`. It serves a chain the test builds and changes (extend,
 * fork at a height) and misbehaves on demand: transactions without `cbor`, a garbage, binary or
 * oversized frame, a transaction whose id is not its body hash, a dead connection (it stops
 * reading, so pings go unanswered), a dropped connection.
 *
 * Chain sync per connection follows the mini-protocol: after an intersection the first answer is
 * a roll backward to it; a connection whose last block left the chain gets a roll backward to
 * the fork point; at the tip, `nextBlock` requests wait for the chain to grow.
 */
import type { AddressInfo } from 'node:net';
import { blake2b } from '@noble/hashes/blake2.js';
import { WebSocketServer, type WebSocket } from 'ws';
import { toHex } from '../util/bytes.js';
import { CARDANO_NETWORKS } from '../model/network.js';

export type OgmiosVersion = 'v6' | 'v7';

export interface FakeTx {
  cbor: Uint8Array;
  id: string;
}

/** A block the fake serves: the fields of the schema's `Block<…>` it fills. */
export interface FakeBlock {
  type: 'ebb' | 'bft' | 'praos';
  era: string;
  id: string;
  ancestor: string;
  height: number;
  /** Undefined on an epoch-boundary block (the schema gives it none). */
  slot: number | undefined;
  txs: FakeTx[];
}

export type Misbehaviour = 'garbage' | 'binary' | 'oversized' | 'no-cbor' | 'bad-id' | 'drop';

export interface FakeOgmiosOptions {
  version?: OgmiosVersion;
  networkMagic?: number;
  securityParameter?: number;
}

interface Conn {
  ws: WebSocket;
  /** Index in `chain` of the last block sent; -1: the origin. */
  cursor: number;
  /** A roll backward owed before anything else. */
  rollback: number | undefined;
  /** nextBlock ids waiting at the tip. */
  held: unknown[];
  /** Requests received, not yet handled (handled on the next turn, so a pipelined burst queues up). */
  queue: Record<string, unknown>[];
  scheduled: boolean;
}

const hashOf = (s: string): string => toHex(blake2b(new TextEncoder().encode(s), { dkLen: 32 }));

/** A block id for fabricated blocks: a hash of its height and a branch label. */
export const fakeBlockId = (height: number, branch = 'main'): string => hashOf(`block ${branch} ${height}`);

export class FakeOgmios {
  readonly chain: FakeBlock[] = [];
  /** The largest number of requests seen waiting together on one connection (pipelining). */
  maxQueued = 0;
  nextBlockRequests = 0;
  connections = 0;
  /** Misbehaviours to apply to the next roll-forward frames, in order. */
  readonly misbehave: Misbehaviour[] = [];
  private readonly conns = new Set<Conn>();
  private frozen = false;

  private constructor(
    private readonly server: WebSocketServer,
    readonly version: OgmiosVersion,
    private readonly magic: number,
    private readonly k: number,
  ) {}

  static async start(o: FakeOgmiosOptions = {}): Promise<FakeOgmios> {
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((r) => server.once('listening', () => r()));
    const f = new FakeOgmios(server, o.version ?? 'v6', o.networkMagic ?? CARDANO_NETWORKS.preprod.networkMagic, o.securityParameter ?? 2160);
    server.on('connection', (ws) => f.accept(ws));
    return f;
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Appends blocks and wakes connections waiting at the tip. */
  extend(...blocks: FakeBlock[]): void {
    this.chain.push(...blocks);
    for (const c of this.conns) this.serve(c);
  }

  /** Replaces every block from index `from` on with `blocks` (a fork): connections past it roll back. */
  fork(from: number, blocks: FakeBlock[]): void {
    this.chain.splice(from);
    for (const c of this.conns)
      if (c.cursor >= from) {
        c.cursor = from - 1;
        c.rollback = from - 1;
      }
    this.extend(...blocks);
  }

  /** Stops reading every connection (pings go unanswered, requests pile up unread): a dead Ogmios. */
  freeze(): void {
    this.frozen = true;
    for (const c of this.conns) (c.ws as unknown as { _socket: { pause(): void } })._socket.pause();
  }

  /** Reads again (after `freeze`). */
  thaw(): void {
    this.frozen = false;
    for (const c of this.conns) (c.ws as unknown as { _socket: { resume(): void } })._socket.resume();
  }

  /** Closes every connection (the server keeps listening). */
  dropAll(): void {
    for (const c of this.conns) c.ws.terminate();
  }

  async close(): Promise<void> {
    for (const c of this.conns) c.ws.terminate();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private accept(ws: WebSocket): void {
    this.connections++;
    const c: Conn = { ws, cursor: -1, rollback: undefined, held: [], queue: [], scheduled: false };
    this.conns.add(c);
    if (this.frozen) (ws as unknown as { _socket: { pause(): void } })._socket.pause();
    ws.on('close', () => this.conns.delete(c));
    ws.on('message', (data) => {
      let req: Record<string, unknown>;
      try {
        req = JSON.parse(data.toString());
      } catch {
        return ws.send(JSON.stringify({ jsonrpc: '2.0', error: { code: -32700, message: 'Invalid JSON' } }));
      }
      c.queue.push(req);
      this.maxQueued = Math.max(this.maxQueued, c.queue.length + c.held.length);
      if (!c.scheduled) {
        c.scheduled = true;
        setImmediate(() => {
          c.scheduled = false;
          for (const r of c.queue.splice(0)) this.handle(c, r);
        });
      }
    });
  }

  private reply(c: Conn, method: string, id: unknown, body: { result: unknown } | { error: unknown }): void {
    if (c.ws.readyState === c.ws.OPEN) c.ws.send(JSON.stringify({ jsonrpc: '2.0', method, ...body, id }));
  }

  private handle(c: Conn, req: Record<string, unknown>): void {
    const { method, id } = req;
    const params = (req.params ?? {}) as Record<string, unknown>;
    switch (method) {
      case 'queryNetwork/genesisConfiguration':
        if (params.era !== 'shelley') return this.reply(c, method, id, { error: { code: -32602, message: 'only the shelley genesis here' } });
        return this.reply(c, method, id, {
          result: {
            era: 'shelley',
            startTime: '2022-06-01T00:00:00Z',
            networkMagic: this.magic,
            network: this.magic === 764824073 ? 'mainnet' : 'testnet',
            activeSlotsCoefficient: '1/20',
            securityParameter: this.k,
            epochLength: 432000,
            slotsPerKesPeriod: 129600,
            maxKesEvolutions: 62,
            slotLength: { milliseconds: 1000 },
            updateQuorum: 5,
            maxLovelaceSupply: 45000000000000000,
            initialParameters: {},
            initialDelegates: [],
            initialFunds: {},
            initialStakePools: { stakePools: {}, delegators: {} },
          },
        });
      case 'findIntersection': {
        const points = Array.isArray(params.points) ? params.points : [];
        for (const p of points) {
          const at = p === 'origin' ? -1 : this.chain.findIndex((b) => b.slot === (p as { slot?: unknown }).slot && b.id === (p as { id?: unknown }).id);
          if (p === 'origin' || at >= 0) {
            c.cursor = at;
            c.rollback = at;
            c.held = [];
            return this.reply(c, method, id, { result: { intersection: this.pointAt(at), tip: this.tip() } });
          }
        }
        return this.reply(c, method, id, { error: { code: 1000, message: 'No intersection found.', data: { tip: this.tip() } } });
      }
      case 'nextBlock':
        this.nextBlockRequests++;
        c.held.push(id);
        return this.serve(c);
      default:
        return this.reply(c, String(method), id, { error: { code: -32601, message: 'Method not found' } });
    }
  }

  private pointAt(i: number): unknown {
    if (i < 0) return 'origin';
    const b = this.chain[i]!;
    return { slot: b.slot ?? 0, id: b.id };
  }

  private tip(): unknown {
    const b = [...this.chain].reverse().find((x) => x.slot !== undefined);
    return b === undefined ? 'origin' : { slot: b.slot, id: b.id, height: b.height };
  }

  /** Answers the connection's waiting nextBlock requests while it has something to send. */
  private serve(c: Conn): void {
    while (c.held.length > 0) {
      const id = c.held[0];
      if (c.rollback !== undefined) {
        const at = c.rollback;
        c.rollback = undefined;
        c.held.shift();
        this.reply(c, 'nextBlock', id, { result: { direction: 'backward', point: this.pointAt(at), tip: this.tip() } });
        continue;
      }
      const next = this.chain[c.cursor + 1];
      if (next === undefined) return; // at the tip: wait
      c.held.shift();
      c.cursor++;
      const bad = this.misbehave.shift();
      if (bad !== undefined && this.misbehaveWith(c, bad, next, id)) return;
      this.reply(c, 'nextBlock', id, { result: { direction: 'forward', block: this.blockJson(next, bad), tip: this.tip() } });
    }
  }

  /** Sends a broken frame in place of a block; true when the connection is gone for good. */
  private misbehaveWith(c: Conn, bad: Misbehaviour, _b: FakeBlock, id: unknown): boolean {
    switch (bad) {
      case 'garbage':
        c.ws.send('{"jsonrpc":"2.0","method":"nextBlock","result":{"direction":');
        return true;
      case 'binary':
        c.ws.send(Buffer.from([0x82, 0x01, 0x02]));
        return true;
      case 'oversized':
        c.ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'nextBlock', result: { direction: 'forward', padding: 'x'.repeat(2 * 1024 * 1024) }, id }));
        return true;
      case 'drop':
        c.ws.terminate();
        return true;
      default:
        return false; // shapes of the block itself (blockJson)
    }
  }

  /** The block as the schema's version shapes it (v7 omits empty `outputs`). */
  private blockJson(b: FakeBlock, bad: Misbehaviour | undefined): Record<string, unknown> {
    const txs = b.txs.map((t, i) => {
      const tx: Record<string, unknown> = { id: bad === 'bad-id' && i === 0 ? hashOf(`not ${t.id}`) : t.id, spends: 'inputs', inputs: [], signatories: [] };
      if (this.version === 'v6') tx.outputs = [];
      if (this.version === 'v6') tx.validityInterval = {};
      if (bad !== 'no-cbor') tx.cbor = toHex(t.cbor);
      return tx;
    });
    if (b.type === 'ebb') return { type: 'ebb', era: 'byron', id: b.id, ancestor: b.ancestor, height: b.height };
    const common = { era: b.era, id: b.id, ancestor: b.ancestor, height: b.height, slot: b.slot, size: { bytes: 1000 } };
    const withTxs = txs.length > 0 || this.version === 'v6' ? { transactions: txs } : {};
    if (b.type === 'bft')
      return {
        type: 'bft',
        ...common,
        protocol: { id: 1, version: { major: 1, minor: 0, patch: 0 }, software: { appName: 'cardano-sl', number: 1 } },
        issuer: { verificationKey: '00'.repeat(64) },
        delegate: { verificationKey: '00'.repeat(64) },
        ...withTxs,
      };
    return {
      type: 'praos',
      ...common,
      protocol: { version: { major: 10, minor: 0 } },
      issuer: { verificationKey: '00'.repeat(32), vrfVerificationKey: '00'.repeat(32), operationalCertificate: {}, leaderValue: {} },
      ...withTxs,
    };
  }
}

/**
 * A linear chain of Praos (Conway) blocks, one per entry of `txsPerBlock`, from `height`/`slot`
 * on (slots 20 apart), linked to `ancestor`; `branch` makes a fork's ids differ.
 */
export function praosBlocks(txsPerBlock: FakeTx[][], o: { height: number; slot: number; ancestor: string; branch?: string }): FakeBlock[] {
  let ancestor = o.ancestor;
  return txsPerBlock.map((txs, i) => {
    const b: FakeBlock = { type: 'praos', era: 'conway', id: fakeBlockId(o.height + i, o.branch), ancestor, height: o.height + i, slot: o.slot + 20 * i, txs };
    ancestor = b.id;
    return b;
  });
}
