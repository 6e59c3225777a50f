/**
 * A fake SP1 Prover Network on 127.0.0.1 for tests: an h2c gRPC server (`network.ProverNetwork`,
 * `artifact.ArtifactStore`) and an HTTP presigned-URL store. It checks what a real network checks —
 * the signature over its own re-encoding of each signed body, the account's nonce — plus what a
 * test wants to assert (every RequestProof field, the zstd/bincode stdin), and answers each proof
 * request with a scripted outcome.
 */
import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { equalBytes, toHex, utf8 } from '../util/bytes.js';
import {
  ExecutionStatus,
  FulfillmentStatus,
  ProtoFields,
  ProtoWriter,
  encodeCancelBody,
  encodeRequestProofBody,
  type NetworkVariant,
  type ProofRequestParams,
  type RequestProofBody,
} from '../prover/network/proto.js';
import { decodeRequestProofBody, encodeParams, encodeProgramResponse, encodeStatus } from './proto-server.js';
import { recoverAddress } from '../prover/network/signer.js';
import { readZstdRawFrame } from '../prover/network/zstd.js';

export type Outcome =
  | { kind: 'fulfilled'; proof: Uint8Array; afterPolls?: number /** A proof URL of the test's choosing instead of the store's. */; proofUri?: string }
  | { kind: 'unexecutable' }
  | { kind: 'unfulfillable' }
  | { kind: 'stuck' } // stays REQUESTED: the client must cancel
  | { kind: 'expired' }; // ASSIGNED with a deadline in the past

export interface RecordedRequest {
  id: Uint8Array;
  body: RequestProofBody;
  stdin: Uint8Array;
  outcome: Outcome;
  polls: number;
  cancelled: boolean;
}

export interface FakeNetworkOptions {
  variant: NetworkVariant;
  /** The only account allowed to sign. */
  account: Uint8Array;
  /** Registered programs by hex vk hash. */
  programs: Set<string>;
  /** Decides each request's outcome (throw to fail the test from inside the fake). */
  script: (r: { body: RequestProofBody; stdin: Uint8Array; attempt: number }) => Outcome;
  params?: ProofRequestParams;
}

const grpcFrame = (msg: Uint8Array): Buffer => {
  const b = Buffer.alloc(5 + msg.length);
  b.writeUInt32BE(msg.length, 1);
  b.set(msg, 5);
  return b;
};

/** `msg` followed by `n` bytes of unknown fields: tag 1000 as a varint, value 0 (3 bytes each). */
export function padded(msg: Uint8Array, n: number): Uint8Array {
  if (n === 0) return msg;
  const out = new Uint8Array(msg.length + n - (n % 3));
  out.set(msg);
  for (let i = msg.length; i < out.length; i += 3) {
    out[i] = 0xc0; // (1000 << 3 | 0) = 8000 = 0xc0 0x3e
    out[i + 1] = 0x3e;
    out[i + 2] = 0;
  }
  return out;
}

export class FakeProverNetwork {
  readonly requests: RecordedRequest[] = [];
  readonly calls: string[] = [];
  readonly errors: string[] = [];
  /** Scripted gRPC failures: method → codes to answer with, one per call, before answering normally. */
  readonly failures = new Map<string, number[]>();
  /** Replies padded with this many bytes of tiny unknown fields (tag 1000, varint 0), by method. */
  readonly padding = new Map<string, number>();
  nonce = 0n;
  readonly artifacts = new Map<string, Uint8Array>();
  readonly proofs = new Map<string, Uint8Array>();
  readonly allProvers = [Uint8Array.from({ length: 20 }, (_, i) => i + 1), Uint8Array.from({ length: 20 }, (_, i) => i + 100)];
  readonly haProvers = [Uint8Array.from({ length: 20 }, (_, i) => i + 100)];
  private grpc!: http2.Http2Server;
  private store!: http.Server;
  rpcUrl = '';
  /** The presigned-URL store (same host as the gRPC server, another port). */
  storeUrl = '';
  /** Where CreateArtifact sends uploads instead of the store (a hostile network's choice). */
  uploadBase: string | undefined;
  /** Serves proof downloads instead of the plain answer (a hostile store: trickles, floods, redirects). */
  serveProof: ((res: http.ServerResponse, proof: Uint8Array) => void) | undefined;
  private attempts = 0;

  constructor(readonly opts: FakeNetworkOptions) {}

  async start(): Promise<this> {
    this.grpc = http2.createServer();
    this.grpc.on('stream', (stream, headers) => {
      const path = String(headers[':path']);
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const body = Buffer.concat(chunks);
        const method = path.split('/').pop() ?? '';
        this.calls.push(method);
        const reply = (code: number, msg?: Uint8Array, details = '') => {
          if (stream.destroyed) return;
          stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
          stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': String(code), 'grpc-message': encodeURIComponent(details) }));
          stream.end(msg ? grpcFrame(msg) : undefined);
        };
        const failing = this.failures.get(method);
        if (failing && failing.length > 0) return reply(failing.shift()!, undefined, 'scripted failure');
        if (body.length < 5 || body.readUInt32BE(1) !== body.length - 5) return reply(13, undefined, 'bad framing');
        try {
          const out = this.handle(method, new Uint8Array(body.subarray(5)));
          if (typeof out === 'number') reply(out, undefined, `${method} refused`);
          else reply(0, padded(out, this.padding.get(method) ?? 0));
        } catch (e) {
          this.errors.push(`${method}: ${(e as Error).message}`);
          reply(3, undefined, (e as Error).message);
        }
      });
    });
    this.store = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const key = (req.url ?? '').split('?')[0]!;
        if (req.method === 'PUT' && key.startsWith('/put/')) {
          if (req.headers['content-type']) this.errors.push(`upload sent a Content-Type: ${req.headers['content-type']}`);
          this.artifacts.set(key.slice(5), Buffer.concat(chunks));
          res.writeHead(200).end();
        } else if (req.method === 'GET' && key.startsWith('/proof/') && this.proofs.has(key.slice(7))) {
          if (this.serveProof) this.serveProof(res, this.proofs.get(key.slice(7))!);
          else res.writeHead(200).end(this.proofs.get(key.slice(7)));
        } else res.writeHead(404).end();
      });
    });
    await new Promise<void>((r) => this.grpc.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => this.store.listen(0, '127.0.0.1', r));
    this.rpcUrl = `http://127.0.0.1:${(this.grpc.address() as AddressInfo).port}`;
    this.storeUrl = `http://127.0.0.1:${(this.store.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((r) => this.grpc.close(() => r()));
    this.store.closeAllConnections();
    await new Promise<void>((r) => this.store.close(() => r()));
  }

  /** The stdin behind an artifact URI, decompressed (raw-block zstd). */
  stdinOf(uri: string): Uint8Array {
    const frame = this.artifacts.get(uri.replace('artifact://', ''));
    if (!frame) throw new Error(`no artifact uploaded for ${uri}`);
    return readZstdRawFrame(frame);
  }

  /** Checks `{1 format, 2 signature, 3 body}`: the body re-encoded must be what was signed, by the account, with the current nonce. */
  private checkSigned(msg: Uint8Array, reencode: (body: Uint8Array) => Uint8Array, nonceOf: (body: Uint8Array) => bigint): Uint8Array {
    const f = ProtoFields.parse(msg);
    if (f.uint(1) !== 1n) throw new Error('format is not BINARY');
    const body = f.bytes(3);
    const canonical = reencode(body);
    if (!equalBytes(canonical, body)) throw new Error('body is not canonically encoded');
    const signer = recoverAddress(canonical, f.bytes(2));
    if (!equalBytes(signer, this.opts.account)) throw new Error(`signature recovers to 0x${toHex(signer)}, not the account`);
    const nonce = nonceOf(body);
    if (nonce !== this.nonce) throw new Error(`wrong nonce ${nonce}, expected ${this.nonce}`);
    this.nonce++;
    return body;
  }

  private handle(method: string, msg: Uint8Array): Uint8Array | number {
    const f = ProtoFields.parse(msg);
    const w = new ProtoWriter();
    switch (method) {
      case 'GetNonce':
        if (!equalBytes(f.bytes(1), this.opts.account)) throw new Error('GetNonce for another address');
        return w.uint(1, this.nonce).finish();
      case 'GetBalance':
        return w.bytes(1, '1500000000000000000').finish();
      case 'GetProgram': {
        const vk = f.bytes(1);
        if (!this.opts.programs.has(toHex(vk))) return 5; // NOT_FOUND
        return encodeProgramResponse({ vkHash: vk, vk: new Uint8Array(104), programUri: 'artifact://program', owner: new Uint8Array(20), createdAt: 1n });
      }
      case 'GetProofRequestParams':
        if (this.opts.variant !== 'auction') return 12; // UNIMPLEMENTED on base gateways
        return encodeParams(
          this.opts.params ?? {
            domain: new Uint8Array(32).fill(1),
            auctioneer: new Uint8Array(20).fill(2),
            executor: new Uint8Array(20).fill(3),
            verifier: new Uint8Array(20).fill(4),
            maxPricePerPgu: '200000001',
            baseFee: '0',
            treasury: new Uint8Array(20).fill(5),
            tickSize: 1000n,
          },
        );
      case 'GetProversByUptime':
        return w.repeatedBytes(1, f.bool(1) ? this.haProvers : this.allProvers).finish();
      case 'CreateArtifact': {
        const sig = Uint8Array.from(f.bytes(1));
        if (sig[64] !== 54 && sig[64] !== 55) throw new Error(`create_artifact signature ends in ${sig[64]}, not 54/55 as the SDK's`);
        sig[64] = sig[64]! - 27;
        if (!equalBytes(recoverAddress(utf8('create_artifact'), sig), this.opts.account)) throw new Error('artifact signature is not the account');
        const n = String(this.artifacts.size + 1);
        this.artifacts.set(n, new Uint8Array());
        return w
          .bytes(1, `artifact://${n}`)
          .bytes(2, `${this.uploadBase ?? this.storeUrl}/put/${n}`)
          .finish();
      }
      case 'RequestProof': {
        const bodyBytes = this.checkSigned(
          msg,
          (b) => encodeRequestProofBody(decodeRequestProofBody(b, this.opts.variant)),
          (b) => decodeRequestProofBody(b, this.opts.variant).nonce,
        );
        const body = decodeRequestProofBody(bodyBytes, this.opts.variant);
        const stdin = this.stdinOf(body.stdinUri);
        const outcome = this.opts.script({ body, stdin, attempt: this.attempts++ });
        const id = new Uint8Array(32);
        new DataView(id.buffer).setUint32(28, this.requests.length + 1);
        this.requests.push({ id, body, stdin, outcome, polls: 0, cancelled: false });
        return w.bytes(1, new Uint8Array(32).fill(0xee)).present(2, new ProtoWriter().bytes(1, id).finish()).finish();
      }
      case 'CancelRequest': {
        const body = this.checkSigned(
          msg,
          (b) => {
            const c = ProtoFields.parse(b);
            return encodeCancelBody(c.uint(1), c.bytes(2));
          },
          (b) => ProtoFields.parse(b).uint(1),
        );
        if (this.opts.variant !== 'auction') return 12;
        const r = this.requests.find((x) => equalBytes(x.id, ProtoFields.parse(body).bytes(2)));
        if (!r) return 5;
        r.cancelled = true;
        return new Uint8Array();
      }
      case 'GetProofRequestStatus': {
        const r = this.requests.find((x) => equalBytes(x.id, f.bytes(1)));
        if (!r) return 5;
        r.polls++;
        const st = (fs: number, es: number, extra: { proofUri?: string; deadline?: bigint } = {}) =>
          encodeStatus({
            fulfillmentStatus: fs,
            executionStatus: es,
            requestTxHash: new Uint8Array(32).fill(0xee),
            deadline: extra.deadline ?? r.body.deadline,
            ...(extra.proofUri ? { proofUri: extra.proofUri } : {}),
          });
        const o = r.outcome;
        if (r.cancelled) return st(FulfillmentStatus.UNFULFILLABLE, ExecutionStatus.UNEXECUTED);
        switch (o.kind) {
          case 'fulfilled': {
            if (r.polls <= (o.afterPolls ?? 1)) return st(r.polls === 1 ? FulfillmentStatus.REQUESTED : FulfillmentStatus.ASSIGNED, ExecutionStatus.UNEXECUTED);
            const key = toHex(r.id);
            this.proofs.set(key, o.proof);
            return st(FulfillmentStatus.FULFILLED, ExecutionStatus.EXECUTED, { proofUri: o.proofUri ?? `${this.storeUrl}/proof/${key}` });
          }
          case 'unexecutable':
            return st(FulfillmentStatus.UNFULFILLABLE, ExecutionStatus.UNEXECUTABLE);
          case 'unfulfillable':
            return st(FulfillmentStatus.UNFULFILLABLE, ExecutionStatus.EXECUTED);
          case 'stuck':
            return st(FulfillmentStatus.REQUESTED, ExecutionStatus.UNEXECUTED);
          case 'expired':
            return st(FulfillmentStatus.ASSIGNED, ExecutionStatus.EXECUTED, { deadline: 1n });
        }
        return 13;
      }
      default:
        return 12; // UNIMPLEMENTED
    }
  }
}
