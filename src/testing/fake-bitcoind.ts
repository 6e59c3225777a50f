/**
 * A fake Bitcoin Core for tests (modelled on ord's mockcore): one in-memory chain served as
 * - JSON-RPC over node:http (`getblockchaininfo`, `getblockcount`, `getbestblockhash`,
 *   `getblockhash`, `getblockheader` verbose/raw with `confirmations` −1 for stale blocks,
 *   `getblock` 0/1/2, `getrawtransaction` (optionally in a given block), `getrawmempool`,
 *   `getmempoolentry`, `sendrawtransaction`, `estimatesmartfee`, `gettxoutproof` (one txid),
 *   `gettxout`; batches too), with cookie or
 *   user/password Basic auth;
 * - REST `/rest/chaininfo.json`, `/rest/block/<hash>.bin` (switchable off, as without `-rest`);
 * - an Esplora facade under `/esplora` (`/blocks/tip/hash|height`, `/block-height/:h`,
 *   `/block/:hash`, `/block/:hash/header|status|raw`, `/mempool/txids`, `/tx/:txid` (with `fee`), `/tx/:txid/hex`,
 *   `/tx/:txid/outspend/:vout`, `/tx/:txid/merkleblock-proof`, `/address/:a/utxo`, `/fee-estimates`, `POST /tx`);
 * - a ZMQ publisher (`hashblock`, `sequence`, Bitcoin Core's framing) with a switch to drop messages.
 *
 * Nothing checks scripts, amounts or proof of work: a test mines whatever transactions it wants
 * (the vector transactions spend outputs that never existed here). Headers are regtest (bits
 * 0x207fffff) with increasing times and merkle roots from `serializeBlock`; block 0 is the real
 * regtest genesis block (or mainnet's, testnet3's, signet's: `network`), so sources recognise the
 * network. Listens on 127.0.0.1, port 0.
 *
 * Faults: garbage answers, oversize answers, stalled answers (held until `stallMs` or stop), a
 * wrong block for a hash, a block stripped of witnesses, a block that does not link to the tip, disappearing (the HTTP server
 * closes and its port refuses) and coming back on the same port.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseBlock, serializeBlock, type Block } from '../bitcoin/block.js';
import { parseTx, serializeTx, txidHex, txVsize, txWeight, type BitcoinTx } from '../bitcoin/tx.js';
import { addressToScript } from '../bitcoin/address.js';
import { stripWitnesses } from './strip-witness.js';
import { equalBytes, fromHex, toHex } from '../util/bytes.js';
import { sha256 } from '../util/sha256.js';

const dsha = (b: Uint8Array): Uint8Array => sha256(sha256(b));

/** The real regtest genesis coinbase ("The Times 03/Jan/2009 …"). */
const GENESIS_COINBASE =
  '01000000010000000000000000000000000000000000000000000000000000000000000000ffffffff4d04ffff001d0104455468652054696d65732030332f4a616e2f32303039204368616e63656c6c6f72206f6e206272696e6b206f66207365636f6e64206261696c6f757420666f722062616e6b73ffffffff0100f2052a01000000434104678afdb0fe5548271967f1a67130b7105cd6a828e03909a67962e0ea1f61deb649f6bc3f4cef38c4f35504e51ec112de5c384df7ba0b8d578a4c702b6bf11d5fac00000000';
const GENESIS_TIME = 1296688602;
/**
 * The real genesis headers of the networks whose genesis coinbase is the one above (testnet4's
 * is not), and the chain name `getblockchaininfo` gives on each.
 */
const GENESIS_HEADERS = {
  regtest: { chain: 'regtest', time: GENESIS_TIME, bits: 0x207fffff, nonce: 2 },
  mainnet: { chain: 'main', time: 1231006505, bits: 0x1d00ffff, nonce: 2083236893 },
  testnet: { chain: 'test', time: 1296688602, bits: 0x1d00ffff, nonce: 414098458 },
  signet: { chain: 'signet', time: 1598918400, bits: 0x1e0377ae, nonce: 52613770 },
} as const;
const ZERO_HASH = '0'.repeat(64);

export type TxLike = Uint8Array | string;

export interface FakeBlock {
  hash: string;
  height: number;
  bytes: Uint8Array;
  block: Block;
}

interface MempoolTx {
  raw: Uint8Array;
  tx: BitcoinTx;
  time: number;
  /** The mempool sequence number when it entered (ZMQ `sequence` A). */
  seq: bigint;
}

export interface FakeBitcoindOptions {
  /** RPC authentication: a cookie file written in a temp dir (default), user/password, or none. */
  auth?: 'cookie' | { user: string; password: string } | 'none';
  /** Serve REST (`-rest`); default true. */
  rest?: boolean;
  /** Start a ZMQ publisher (needs the zeromq package); default false. */
  zmq?: boolean;
  /** How long a stalled request is held before its socket is destroyed (default 30 s). */
  stallMs?: number;
  /** Whose genesis block is block 0 (and the chain `getblockchaininfo` names); default regtest. */
  network?: keyof typeof GENESIS_HEADERS;
}

export interface FakeFaults {
  /** Every HTTP answer is 200 with a body that is neither JSON nor hex. */
  garbage: boolean;
  /** Every HTTP answer streams 16 MB. */
  oversize: boolean;
  /** Requests get no answer (held until `stallMs`, or until the fake stops or comes back). */
  stall: boolean;
  /** Block hash → hash of the block served instead (RPC getblock, REST, Esplora raw). */
  wrongBlock: Map<string, string>;
  /**
   * Block hash → which transactions (by index) are served with their witnesses stripped (same
   * header, txids and merkle root: only the witness commitment tells).
   */
  stripWitness: Map<string, (index: number) => boolean>;
}

const TOPIC_HASHBLOCK = 'hashblock';
const TOPIC_SEQUENCE = 'sequence';

const toBytes = (t: TxLike): Uint8Array => (typeof t === 'string' ? fromHex(t, 'transaction') : t);

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export class FakeBitcoind {
  /** JSON-RPC endpoint (no credentials in it). */
  rpcUrl = '';
  /** Esplora facade base URL. */
  esploraUrl = '';
  /** ZMQ endpoint (tcp://127.0.0.1:port) when started with `zmq: true`. */
  zmqUrl: string | undefined;
  port = 0;
  /** The cookie file when `auth` is 'cookie' (removed on stop). */
  cookieFile: string | undefined;
  readonly faults: FakeFaults = { garbage: false, oversize: false, stall: false, wrongBlock: new Map(), stripWitness: new Map() };
  /** Serve REST (as a node started with `-rest`). */
  rest: boolean;
  /**
   * As `-txindex`: JSON-RPC `getrawtransaction` finds confirmed transactions without a block hash
   * (default true); false: only mempool ones, or in the block named (the Esplora facade is unchanged).
   */
  txindex = true;
  /** Fee rate `estimatesmartfee` answers (BTC/kvB); undefined → "insufficient data". */
  feeRate: number | undefined = 0.00002;
  /** JSON-RPC calls received, by method (tests count upstream calls). */
  readonly calls = new Map<string, number>();
  /** Paths of REST and Esplora requests received. */
  readonly requests: string[] = [];
  /** Txid → merkle block served by `gettxoutproof` and `/tx/:txid/merkleblock-proof` instead of the one built from its block. */
  readonly txOutProofs = new Map<string, Uint8Array>();

  private readonly blocks = new Map<string, FakeBlock>();
  /** Best chain: hashes by height. */
  private best: string[] = [];
  private readonly mempool = new Map<string, MempoolTx>();
  private mempoolSeq = 0n;
  private counter = 0;
  private server: http.Server | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly stalled = new Set<http.ServerResponse>();
  private readonly stallMs: number;
  private auth: string | undefined;
  private cookieDir: string | undefined;
  private zmq: ZmqPublisher | undefined;
  /** What `getblockchaininfo` names the chain. */
  private readonly chainName: string;

  private constructor(o: FakeBitcoindOptions) {
    this.rest = o.rest ?? true;
    this.stallMs = o.stallMs ?? 30_000;
    const genesis = fromHex(GENESIS_COINBASE);
    const g = GENESIS_HEADERS[o.network ?? 'regtest'];
    this.chainName = g.chain;
    this.connect(serializeBlock({ version: 1, prevHash: ZERO_HASH, time: g.time, bits: g.bits, nonce: g.nonce }, [genesis]), false);
  }

  static async start(o: FakeBitcoindOptions = {}): Promise<FakeBitcoind> {
    const f = new FakeBitcoind(o);
    const auth = o.auth ?? 'cookie';
    if (auth === 'cookie') {
      f.cookieDir = mkdtempSync(join(tmpdir(), 'fake-bitcoind-'));
      f.cookieFile = join(f.cookieDir, '.cookie');
      f.auth = `__cookie__:${randomBytes(32).toString('hex')}`;
      writeFileSync(f.cookieFile, f.auth, { mode: 0o600 });
    } else if (auth !== 'none') f.auth = `${auth.user}:${auth.password}`;
    await f.listen(0);
    if (o.zmq) {
      f.zmq = await ZmqPublisher.bind();
      f.zmqUrl = f.zmq.url;
    }
    return f;
  }

  // ------------------------------------------------------------------ chain state

  get height(): number {
    return this.best.length - 1;
  }
  get tipHash(): string {
    return this.best[this.height]!;
  }
  hashAt(height: number): string | undefined {
    return this.best[height];
  }
  blockByHash(hash: string): FakeBlock | undefined {
    return this.blocks.get(hash);
  }
  inBestChain(hash: string): boolean {
    const b = this.blocks.get(hash);
    return b !== undefined && this.best[b.height] === hash;
  }
  mempoolTxids(): string[] {
    return [...this.mempool.keys()];
  }

  /** A coinbase unique to this block (height and a counter in its scriptSig), paying 50 BTC to OP_TRUE. */
  private coinbase(height: number): Uint8Array {
    const h = new Uint8Array(4);
    new DataView(h.buffer).setUint32(0, height, true);
    const c = new Uint8Array(4);
    new DataView(c.buffer).setUint32(0, ++this.counter, true);
    const tx: BitcoinTx = {
      version: 2,
      inputs: [{ txid: new Uint8Array(32), vout: 0xffffffff, scriptSig: Uint8Array.from([4, ...h, 4, ...c]), sequence: 0xffffffff, witness: [] }],
      outputs: [{ value: 5_000_000_000n, script: Uint8Array.of(0x51) }],
      locktime: 0,
    };
    return serializeTx(tx, { witness: false });
  }

  /** Builds a block on `prevHash` (the tip by default) from the given transactions after a coinbase. */
  private build(txs: TxLike[], prevHash = this.tipHash, height = this.height + 1): Uint8Array {
    const prev = this.blocks.get(prevHash);
    const time = Math.max(prev?.block.header.time ?? GENESIS_TIME, GENESIS_TIME + 600 * height) + 1 + (this.counter % 60);
    return serializeBlock({ prevHash, time }, [this.coinbase(height), ...txs.map(toBytes)]);
  }

  /** Adds a block to the store and, when `asTip`, makes it the tip (no link check: the fault path uses it too). */
  private connect(bytes: Uint8Array, asTip = true, height = this.best.length): FakeBlock {
    const block = parseBlock(bytes);
    const fb: FakeBlock = { hash: block.header.hash, height, bytes, block };
    this.blocks.set(fb.hash, fb);
    if (asTip || this.best.length === 0) {
      this.best.length = height;
      this.best.push(fb.hash);
    }
    return fb;
  }

  private afterConnect(fb: FakeBlock): void {
    // as Core: a transaction leaving the mempool because a block confirms it is not announced as R
    for (const t of fb.block.txs) this.mempool.delete(t.txid);
    // mempool transactions that conflict with the block's spends leave too (announced)
    const spent = new Set(fb.block.txs.flatMap((t) => (t.index === 0 ? [] : parseTx(t.raw).inputs.map((i) => `${toHex(i.txid)}:${i.vout}`))));
    for (const [txid, m] of this.mempool) if (m.tx.inputs.some((i) => spent.has(`${toHex(i.txid)}:${i.vout}`))) this.mempoolDrop(txid);
    this.publish(TOPIC_SEQUENCE, Buffer.concat([Buffer.from(fb.hash, 'hex'), Buffer.from('C')]));
    this.publish(TOPIC_HASHBLOCK, Buffer.from(fb.hash, 'hex'));
  }

  /** Mines a block with a synthetic coinbase and `txs` on the tip; they leave the mempool. Returns it. */
  mine(txs: TxLike[] = []): FakeBlock {
    const fb = this.connect(this.build(txs));
    this.afterConnect(fb);
    return fb;
  }

  /** Mines `n` blocks with only a coinbase. */
  mineEmpty(n: number): FakeBlock[] {
    return Array.from({ length: n }, () => this.mine());
  }

  /**
   * Disconnects the top `depth` blocks and connects `newBranchTxs.length` new ones (each array the
   * transactions of one block) from the fork point. As Bitcoin Core does, transactions of the
   * disconnected blocks go back to the mempool unless the new branch confirms them.
   */
  reorg(depth: number, newBranchTxs: TxLike[][]): FakeBlock[] {
    if (depth < 1 || depth > this.height) throw new Error(`reorg depth ${depth} out of range 1..${this.height}`);
    const gone = this.best.slice(this.height - depth + 1).map((h) => this.blocks.get(h)!);
    this.best.length = this.height - depth + 1;
    for (const b of gone.reverse()) {
      this.publish(TOPIC_SEQUENCE, Buffer.concat([Buffer.from(b.hash, 'hex'), Buffer.from('D')]));
      for (const t of b.block.txs) if (t.index > 0) this.mempoolAdd(t.raw);
    }
    return newBranchTxs.map((txs) => this.mine(txs));
  }

  /** Replaces the tip with another block at the same height (a one-block reorg with no new height). */
  replaceTip(txs: TxLike[] = []): FakeBlock {
    return this.reorg(1, [txs])[0]!;
  }

  /** Mines a block at tip height + 1 whose previous hash is NOT the tip (a node that does not link). */
  mineUnlinked(txs: TxLike[] = []): FakeBlock {
    const fb = this.connect(this.build(txs, randomBytes(32).toString('hex')));
    this.afterConnect(fb);
    return fb;
  }

  /** Puts a transaction in the mempool (no checks beyond parsing); returns its txid. */
  mempoolAdd(tx: TxLike): string {
    const raw = toBytes(tx);
    const parsed = parseTx(raw);
    const txid = txidHex(parsed);
    if (!this.mempool.has(txid) && !this.confirmed(txid)) {
      this.mempool.set(txid, { raw, tx: parsed, time: Math.floor(Date.now() / 1000), seq: ++this.mempoolSeq });
      this.publishMempool(txid, 'A');
    }
    return txid;
  }

  /** Removes a transaction from the mempool (evicted, expired); true when it was there. */
  mempoolDrop(txid: string): boolean {
    if (!this.mempool.delete(txid)) return false;
    this.publishMempool(txid, 'R');
    return true;
  }

  /** Replaces `oldTxid` by `tx` (RBF); returns the new txid. */
  mempoolReplace(oldTxid: string, tx: TxLike): string {
    this.mempoolDrop(oldTxid);
    return this.mempoolAdd(tx);
  }

  private confirmed(txid: string): FakeBlock | undefined {
    for (const h of this.best) {
      const b = this.blocks.get(h)!;
      if (b.block.txs.some((t) => t.txid === txid)) return b;
    }
    return undefined;
  }

  /**
   * Bitcoin Core's `gettxoutproof` for one transaction of `b` (a CMerkleBlock: the header, the
   * transaction count, then BIP37's partial merkle tree: hashes depth first, flag bits LSB first).
   */
  private merkleBlock(b: FakeBlock, txid: string): Uint8Array {
    const canned = this.txOutProofs.get(txid);
    if (canned) return canned;
    const ids = b.block.txs.map((t) => Uint8Array.from(fromHex(t.txid)).reverse());
    const n = ids.length;
    const match = b.block.txs.findIndex((t) => t.txid === txid);
    const width = (h: number) => (n + (1 << h) - 1) >> h;
    const node = (h: number, i: number): Uint8Array => {
      if (h === 0) return ids[i]!;
      const left = node(h - 1, 2 * i);
      const right = 2 * i + 1 < width(h - 1) ? node(h - 1, 2 * i + 1) : left;
      return dsha(Buffer.concat([left, right]));
    };
    let height = 0;
    while (width(height) > 1) height++;
    const bits: boolean[] = [];
    const hashes: Uint8Array[] = [];
    const walk = (h: number, i: number): void => {
      const parent = match >= i << h && match < (i + 1) << h;
      bits.push(parent);
      if (h === 0 || !parent) return void hashes.push(node(h, i));
      walk(h - 1, 2 * i);
      if (2 * i + 1 < width(h - 1)) walk(h - 1, 2 * i + 1);
    };
    walk(height, 0);
    const flags = new Uint8Array(Math.ceil(bits.length / 8));
    bits.forEach((x, k) => x && (flags[k >> 3]! |= 1 << (k & 7)));
    const count = Buffer.alloc(4);
    count.writeUInt32LE(n);
    // both counts stay below 0xfd here (a one-byte compact size)
    return Buffer.concat([b.block.header.raw, count, Buffer.from([hashes.length]), ...hashes, Buffer.from([flags.length]), flags]);
  }

  /** Whether output `txid:vout` is unspent (mempool spends count, as `gettxout … true`); undefined when it does not exist. */
  private unspentOut(txid: string, vout: number): boolean | undefined {
    const t = this.rawTxIn(txid);
    if (!t || vout >= parseTx(t.raw).outputs.length) return undefined;
    for (const s of this.allTxs()) for (const i of s.tx.inputs) if (i.vout === vout && toHex(Uint8Array.from(i.txid).reverse()) === txid) return false;
    return true;
  }

  /** Inputs minus outputs, from the previous transactions this node holds; undefined when one is missing. */
  private feeOf(tx: BitcoinTx): bigint | undefined {
    let sum = 0n;
    for (const i of tx.inputs) {
      const prev = this.rawTxIn(toHex(Uint8Array.from(i.txid).reverse()));
      const v = prev && parseTx(prev.raw).outputs[i.vout]?.value;
      if (v === undefined) return undefined;
      sum += v;
    }
    return sum - tx.outputs.reduce((a, x) => a + x.value, 0n);
  }

  private rawTxInMempool(txid: string): { raw: Uint8Array; block: undefined } | undefined {
    const m = this.mempool.get(txid);
    return m && { raw: m.raw, block: undefined };
  }

  private rawTxIn(txid: string, blockHash?: string): { raw: Uint8Array; block: FakeBlock | undefined } | undefined {
    if (blockHash !== undefined) {
      const b = this.blocks.get(blockHash);
      const t = b?.block.txs.find((x) => x.txid === txid);
      return t && { raw: t.raw, block: b };
    }
    const m = this.mempool.get(txid);
    if (m) return { raw: m.raw, block: undefined };
    const b = this.confirmed(txid);
    const t = b?.block.txs.find((x) => x.txid === txid);
    return t && { raw: t.raw, block: b };
  }

  /** Best-chain and mempool transactions in order, for spends and UTXOs. */
  private *allTxs(): Generator<{ txid: string; tx: BitcoinTx; height: number | undefined; blockHash: string | undefined }> {
    for (const h of this.best) {
      const b = this.blocks.get(h)!;
      for (const t of b.block.txs) yield { txid: t.txid, tx: parseTx(t.raw), height: b.height, blockHash: b.hash };
    }
    for (const [txid, m] of this.mempool) yield { txid, tx: m.tx, height: undefined, blockHash: undefined };
  }

  // ------------------------------------------------------------------ ZMQ

  /** Drop ZMQ messages (their sequence numbers are used up, so a subscriber sees the gap). */
  set zmqDrop(on: boolean) {
    if (this.zmq) this.zmq.drop = on;
  }
  /** Resolves once a subscriber has subscribed to `topic` (bounded by `timeoutMs`). */
  async zmqSubscribed(topic: string, timeoutMs = 5000): Promise<void> {
    if (!this.zmq) throw new Error('fake bitcoind started without zmq');
    await this.zmq.subscribed(topic, timeoutMs);
  }
  /** The ZMQ publisher restarts on the same endpoint (as a restarted node): sequence numbers start again at 0. */
  async zmqRestart(): Promise<void> {
    if (!this.zmq) throw new Error('fake bitcoind started without zmq');
    await this.zmq.close();
    this.zmq = await ZmqPublisher.bind(this.zmqUrl);
  }
  /** Resolves when every ZMQ message published so far has been handed to the socket. */
  async zmqFlushed(): Promise<void> {
    await this.zmq?.flushed();
  }

  private publish(topic: string, body: Uint8Array): void {
    this.zmq?.publish(topic, body);
  }
  private publishMempool(txid: string, label: 'A' | 'R'): void {
    if (!this.zmq) return;
    const seq = Buffer.alloc(8);
    seq.writeBigUInt64LE(label === 'A' ? this.mempoolSeq : ++this.mempoolSeq);
    this.publish(TOPIC_SEQUENCE, Buffer.concat([Buffer.from(txid, 'hex'), Buffer.from(label), seq]));
  }

  // ------------------------------------------------------------------ HTTP

  private listen(port: number): Promise<void> {
    const server = http.createServer((req, res) => {
      this.handle(req, res).catch((e: unknown) => {
        if (!res.headersSent) res.writeHead(500);
        res.end(String(e));
      });
    });
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        this.port = (server.address() as AddressInfo).port;
        this.rpcUrl = `http://127.0.0.1:${this.port}/`;
        this.esploraUrl = `http://127.0.0.1:${this.port}/esplora`;
        resolve();
      });
    });
  }

  private async closeHttp(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    for (const r of this.stalled) r.destroy();
    this.stalled.clear();
    if (!s) return;
    const closed = new Promise<void>((resolve) => s.close(() => resolve()));
    for (const sock of this.sockets) sock.destroy();
    await closed;
  }

  /** The node vanishes: its HTTP port closes (connections refused) until `comeBack`. */
  async disappear(): Promise<void> {
    await this.closeHttp();
  }

  /** The node returns on the same port. */
  async comeBack(): Promise<void> {
    if (!this.server) await this.listen(this.port);
  }

  async stop(): Promise<void> {
    await this.closeHttp();
    await this.zmq?.close();
    if (this.cookieDir) rmSync(this.cookieDir, { recursive: true, force: true });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > 16 * 1024 * 1024) return void res.writeHead(413).end();
      chunks.push(c as Buffer);
    }
    const body = Buffer.concat(chunks).toString('utf8');
    if (this.faults.stall) {
      this.stalled.add(res);
      const t = setTimeout(() => res.destroy(), this.stallMs);
      res.on('close', () => {
        clearTimeout(t);
        this.stalled.delete(res);
      });
      return;
    }
    if (this.faults.garbage) return void res.writeHead(200, { 'content-type': 'application/json' }).end('<html>garbage{{');
    if (this.faults.oversize) return this.streamOversize(res);
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname.startsWith('/esplora/')) {
      this.requests.push(url.pathname);
      return this.esplora(req.method ?? 'GET', url.pathname.slice('/esplora'.length), body, res);
    }
    if (url.pathname.startsWith('/rest/')) {
      this.requests.push(url.pathname);
      return this.restAnswer(url.pathname, res);
    }
    if (req.method !== 'POST') return void res.writeHead(405).end();
    if (this.auth !== undefined) {
      const given = /^Basic (.*)$/.exec(req.headers.authorization ?? '');
      if (!given || Buffer.from(given[1]!, 'base64').toString('utf8') !== this.auth)
        return void res.writeHead(401, { 'www-authenticate': 'Basic realm="jsonrpc"' }).end();
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return void this.json(res, 500, { result: null, error: { code: -32700, message: 'Parse error' }, id: null });
    }
    if (Array.isArray(parsed))
      return void this.json(
        res,
        200,
        parsed.map((r) => this.rpcOne(r).body),
      );
    const one = this.rpcOne(parsed);
    this.json(res, one.status, one.body);
  }

  private streamOversize(res: http.ServerResponse): void {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let left = 256; // 16 MB
    const write = (): void => {
      while (left > 0) {
        left--;
        if (!res.write(chunk)) return void res.once('drain', write);
      }
      res.end();
    };
    res.on('close', () => (left = 0));
    write();
  }

  private json(res: http.ServerResponse, status: number, v: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(v));
  }

  private rpcOne(r: unknown): { status: number; body: unknown } {
    const req = (r ?? {}) as { method?: unknown; params?: unknown; id?: unknown };
    const id = req.id ?? null;
    const method = typeof req.method === 'string' ? req.method : '';
    this.calls.set(method, (this.calls.get(method) ?? 0) + 1);
    try {
      const result = this.rpc(method, Array.isArray(req.params) ? req.params : []);
      return { status: 200, body: { result, error: null, id } };
    } catch (e) {
      if (!(e instanceof RpcError)) throw e;
      return { status: e.code === -32601 ? 404 : 500, body: { result: null, error: { code: e.code, message: e.message }, id } };
    }
  }

  private servedBlock(hash: string): FakeBlock | undefined {
    const instead = this.faults.wrongBlock.get(hash);
    const b = this.blocks.get(instead ?? hash);
    const strip = this.faults.stripWitness.get(hash);
    return b && strip ? { ...b, bytes: stripWitnesses(b.bytes, strip) } : b;
  }

  private headerJson(b: FakeBlock): Record<string, unknown> {
    const h = b.block.header;
    const inBest = this.inBestChain(b.hash);
    return {
      hash: b.hash,
      confirmations: inBest ? this.height - b.height + 1 : -1,
      height: b.height,
      version: h.version,
      merkleroot: toHex(Uint8Array.from(h.merkleRoot).reverse()),
      time: h.time,
      mediantime: h.time,
      nonce: h.nonce,
      bits: h.bits.toString(16).padStart(8, '0'),
      nTx: b.block.txs.length,
      ...(b.height > 0 ? { previousblockhash: h.prevHash } : {}),
      ...(inBest && this.best[b.height + 1] ? { nextblockhash: this.best[b.height + 1] } : {}),
    };
  }

  private rpc(method: string, p: unknown[]): unknown {
    const str = (i: number): string => {
      const v = p[i];
      if (typeof v !== 'string') throw new RpcError(-1, `param ${i} must be a string`);
      return v.toLowerCase();
    };
    const blockOf = (hash: string): FakeBlock => {
      const b = this.blocks.get(hash);
      if (!b) throw new RpcError(-5, 'Block not found');
      return b;
    };
    switch (method) {
      case 'getblockchaininfo':
        return {
          chain: this.chainName,
          blocks: this.height,
          headers: this.height,
          bestblockhash: this.tipHash,
          time: this.blocks.get(this.tipHash)!.block.header.time,
          initialblockdownload: false,
          pruned: false,
          warnings: '',
        };
      case 'getblockcount':
        return this.height;
      case 'getbestblockhash':
        return this.tipHash;
      case 'getblockhash': {
        const h = p[0];
        if (typeof h !== 'number' || !Number.isInteger(h) || h < 0 || h > this.height) throw new RpcError(-8, 'Block height out of range');
        return this.best[h];
      }
      case 'getblockheader': {
        const b = blockOf(str(0));
        return p[1] === false ? toHex(b.block.header.raw) : this.headerJson(b);
      }
      case 'getblock': {
        const hash = str(0);
        blockOf(hash);
        const b = this.servedBlock(hash)!;
        const verbosity = p[1] === undefined ? 1 : p[1];
        if (verbosity === 0 || verbosity === false) return toHex(b.bytes);
        const txs = b.block.txs.map((t) => (verbosity === 1 ? t.txid : { txid: t.txid, hex: toHex(t.raw) }));
        return { ...this.headerJson(b), size: b.bytes.length, tx: txs };
      }
      case 'getrawtransaction': {
        const txid = str(0);
        const blockHash = typeof p[2] === 'string' ? p[2].toLowerCase() : undefined;
        const found = blockHash === undefined && !this.txindex ? this.rawTxInMempool(txid) : this.rawTxIn(txid, blockHash);
        if (!found) throw new RpcError(-5, 'No such mempool or blockchain transaction. Use gettransaction for wallet transactions.');
        if (!p[1]) return toHex(found.raw);
        return {
          txid,
          hex: toHex(found.raw),
          ...(found.block
            ? {
                blockhash: found.block.hash,
                confirmations: this.inBestChain(found.block.hash) ? this.height - found.block.height + 1 : 0,
                in_active_chain: this.inBestChain(found.block.hash),
              }
            : {}),
        };
      }
      case 'gettxoutproof': {
        const ids = p[0];
        if (!Array.isArray(ids) || ids.length !== 1 || typeof ids[0] !== 'string') throw new RpcError(-8, 'one txid expected (the fake proves one)');
        const txid = ids[0].toLowerCase();
        const b = typeof p[1] === 'string' ? this.blocks.get(p[1].toLowerCase()) : this.confirmed(txid);
        if (!b?.block.txs.some((t) => t.txid === txid)) throw new RpcError(-5, 'Transaction not yet in block');
        return toHex(this.merkleBlock(b, txid));
      }
      case 'gettxout': {
        const unspent = this.unspentOut(str(0), typeof p[1] === 'number' ? p[1] : -1);
        if (!unspent) return null;
        return { bestblock: this.tipHash, confirmations: 1, value: 0, scriptPubKey: {}, coinbase: false };
      }
      case 'getrawmempool':
        if (p[0] === true) return Object.fromEntries([...this.mempool].map(([t, m]) => [t, this.mempoolEntry(m)]));
        return this.mempoolTxids();
      case 'getmempoolentry': {
        const m = this.mempool.get(str(0));
        if (!m) throw new RpcError(-5, 'Transaction not in mempool');
        return this.mempoolEntry(m);
      }
      case 'sendrawtransaction':
        return this.send(str(0));
      case 'estimatesmartfee': {
        const n = typeof p[0] === 'number' ? p[0] : 6;
        return this.feeRate === undefined ? { errors: ['Insufficient data or no feerate found'], blocks: n } : { feerate: this.feeRate, blocks: n };
      }
      default:
        throw new RpcError(-32601, 'Method not found');
    }
  }

  private mempoolEntry(m: MempoolTx): Record<string, unknown> {
    const vsize = txVsize(m.tx);
    return {
      vsize,
      weight: vsize * 4,
      time: m.time,
      height: this.height,
      fees: { base: 0.00001, modified: 0.00001, ancestor: 0.00001, descendant: 0.00001 },
      depends: [],
      'bip125-replaceable': true,
    };
  }

  private send(hex: string): string {
    let raw: Uint8Array;
    let tx: BitcoinTx;
    try {
      raw = fromHex(hex);
      tx = parseTx(raw);
    } catch {
      throw new RpcError(-22, 'TX decode failed');
    }
    const txid = txidHex(tx);
    if (this.confirmed(txid)) throw new RpcError(-27, 'Transaction already in block chain');
    for (const [other, m] of this.mempool)
      if (other !== txid && m.tx.inputs.some((a) => tx.inputs.some((b) => a.vout === b.vout && equalBytes(a.txid, b.txid))))
        throw new RpcError(-26, 'txn-mempool-conflict');
    return this.mempoolAdd(raw);
  }

  private restAnswer(path: string, res: http.ServerResponse): void {
    if (!this.rest) return void res.writeHead(404).end('Not found');
    if (path === '/rest/chaininfo.json') return void this.json(res, 200, this.rpc('getblockchaininfo', []));
    const m = /^\/rest\/block\/([0-9a-f]{64})\.bin$/.exec(path);
    const b = m && this.blocks.has(m[1]!) ? this.servedBlock(m[1]!) : undefined;
    if (!b) return void res.writeHead(404).end(`${m?.[1] ?? path} not found`);
    res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(b.bytes);
  }

  private esplora(method: string, path: string, body: string, res: http.ServerResponse): void {
    const text = (s: string, status = 200) => void res.writeHead(status, { 'content-type': 'text/plain' }).end(s);
    const notFound = (what: string) => text(`${what} not found`, 404);
    let m: RegExpExecArray | null;
    if (method === 'POST' && path === '/tx') {
      try {
        return text(this.send(body.trim().toLowerCase()));
      } catch (e) {
        if (e instanceof RpcError) return text(`sendrawtransaction RPC error: ${JSON.stringify({ code: e.code, message: e.message })}`, 400);
        throw e;
      }
    }
    if (method !== 'GET') return text('method not allowed', 405);
    if (path === '/blocks/tip/hash') return text(this.tipHash);
    if (path === '/blocks/tip/height') return text(String(this.height));
    if ((m = /^\/block-height\/(\d+)$/.exec(path))) {
      const h = this.best[Number(m[1])];
      return h ? text(h) : notFound('Block');
    }
    if ((m = /^\/block\/([0-9a-f]{64})(\/header|\/status|\/raw)?$/.exec(path))) {
      const b = this.blocks.get(m[1]!);
      if (!b) return notFound('Block');
      if (m[2] === '/header') return text(toHex(b.block.header.raw));
      if (m[2] === '/raw') return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(this.servedBlock(b.hash)!.bytes);
      if (m[2] === '/status') {
        const inBest = this.inBestChain(b.hash);
        // as electrs: a stale block's status has no height
        return void this.json(
          res,
          200,
          inBest ? { in_best_chain: true, height: b.height, next_best: this.best[b.height + 1] ?? null } : { in_best_chain: false, next_best: null },
        );
      }
      const h = b.block.header;
      return void this.json(res, 200, {
        id: b.hash,
        height: b.height,
        version: h.version,
        timestamp: h.time,
        tx_count: b.block.txs.length,
        size: b.bytes.length,
        merkle_root: toHex(Uint8Array.from(h.merkleRoot).reverse()),
        previousblockhash: b.height > 0 ? h.prevHash : null,
        nonce: h.nonce,
        bits: h.bits,
      });
    }
    if (path === '/mempool/txids') return void this.json(res, 200, this.mempoolTxids());
    if ((m = /^\/tx\/([0-9a-f]{64})$/.exec(path))) {
      const t = this.rawTxIn(m[1]!);
      if (!t) return notFound('Transaction');
      const tx = parseTx(t.raw);
      const b = t.block;
      const fee = this.feeOf(tx);
      return void this.json(res, 200, {
        txid: m[1],
        version: tx.version,
        locktime: tx.locktime,
        size: t.raw.length,
        weight: txWeight(tx),
        // as electrs, the sum of the previous outputs minus the outputs; left out when the fake lacks a previous transaction
        ...(fee === undefined ? {} : { fee: Number(fee) }),
        status: b && this.inBestChain(b.hash) ? { confirmed: true, block_height: b.height, block_hash: b.hash } : { confirmed: false },
      });
    }
    if ((m = /^\/tx\/([0-9a-f]{64})\/merkleblock-proof$/.exec(path))) {
      const b = this.confirmed(m[1]!);
      return b ? text(toHex(this.merkleBlock(b, m[1]!))) : notFound('Transaction');
    }
    if ((m = /^\/tx\/([0-9a-f]{64})\/hex$/.exec(path))) {
      const t = this.rawTxIn(m[1]!);
      return t ? text(toHex(t.raw)) : notFound('Transaction');
    }
    if ((m = /^\/tx\/([0-9a-f]{64})\/outspend\/(\d+)$/.exec(path))) {
      const [txid, vout] = [m[1]!, Number(m[2])];
      for (const s of this.allTxs())
        for (const [vin, i] of s.tx.inputs.entries())
          if (i.vout === vout && toHex(Uint8Array.from(i.txid).reverse()) === txid)
            return void this.json(res, 200, {
              spent: true,
              txid: s.txid,
              vin,
              status: s.height === undefined ? { confirmed: false } : { confirmed: true, block_height: s.height, block_hash: s.blockHash },
            });
      return void this.json(res, 200, { spent: false });
    }
    if ((m = /^\/address\/([^/]+)\/utxo$/.exec(path))) {
      let script: Uint8Array;
      try {
        script = addressToScript(decodeURIComponent(m[1]!)).script;
      } catch {
        return text('Invalid Bitcoin address', 400);
      }
      const spent = new Set<string>();
      const outs: { txid: string; vout: number; value: number; height: number | undefined; blockHash: string | undefined }[] = [];
      for (const s of this.allTxs()) {
        for (const i of s.tx.inputs) spent.add(`${toHex(Uint8Array.from(i.txid).reverse())}:${i.vout}`);
        s.tx.outputs.forEach((o, vout) => {
          if (equalBytes(o.script, script)) outs.push({ txid: s.txid, vout, value: Number(o.value), height: s.height, blockHash: s.blockHash });
        });
      }
      const utxos = outs
        .filter((o) => !spent.has(`${o.txid}:${o.vout}`))
        .map((o) => ({
          txid: o.txid,
          vout: o.vout,
          value: o.value,
          status: o.height === undefined ? { confirmed: false } : { confirmed: true, block_height: o.height, block_hash: o.blockHash },
        }));
      return void this.json(res, 200, utxos);
    }
    if (path === '/fee-estimates') {
      if (this.feeRate === undefined) return void this.json(res, 200, {});
      const r = this.feeRate * 1e5; // BTC/kvB → sat/vB
      return void this.json(res, 200, { '1': r * 2, '3': r * 1.5, '6': r, '144': r / 2, '1008': r / 4 });
    }
    return notFound('Route');
  }
}

/**
 * Bitcoin Core's ZMQ publisher: multipart [topic, body, 4-byte little-endian sequence number per
 * topic]. An XPUB socket, so the fake knows when a subscriber is there (no lost first messages).
 */
class ZmqPublisher {
  drop = false;
  private readonly seqs = new Map<string, number>();
  private readonly subscriptions = new Set<string>();
  private chain: Promise<void> = Promise.resolve();
  private closed = false;

  private constructor(
    private readonly sock: import('zeromq').XPublisher,
    readonly url: string,
  ) {
    void this.readSubscriptions();
  }

  /** Binds a fresh port, or `url` again (a restarted node), retrying while the port is released (bounded). */
  static async bind(url?: string): Promise<ZmqPublisher> {
    const zmq = await import('zeromq');
    const sock = new zmq.XPublisher({ linger: 0 });
    for (let tries = 0; ; tries++) {
      try {
        await sock.bind(url ?? 'tcp://127.0.0.1:*');
        break;
      } catch (e) {
        if (url === undefined || tries >= 50) {
          sock.close();
          throw e;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    return new ZmqPublisher(sock, sock.lastEndpoint!);
  }

  private async readSubscriptions(): Promise<void> {
    try {
      for await (const [msg] of this.sock) {
        if (msg && msg[0] === 1) this.subscriptions.add(msg.subarray(1).toString('utf8'));
        if (msg && msg[0] === 0) this.subscriptions.delete(msg.subarray(1).toString('utf8'));
      }
    } catch {
      // closed
    }
  }

  async subscribed(topic: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.subscriptions.has(topic)) {
      if (Date.now() > deadline) throw new Error(`no ZMQ subscriber for ${topic} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  publish(topic: string, body: Uint8Array): void {
    if (this.closed) return;
    const n = this.seqs.get(topic) ?? 0;
    this.seqs.set(topic, (n + 1) >>> 0);
    if (this.drop) return;
    const seq = Buffer.alloc(4);
    seq.writeUInt32LE(n);
    this.chain = this.chain.then(() => this.sock.send([topic, Buffer.from(body), seq])).catch(() => {});
  }

  flushed(): Promise<void> {
    return this.chain;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.chain;
    this.sock.close();
  }
}
