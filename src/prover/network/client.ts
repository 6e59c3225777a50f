/**
 * The Prover Network RPCs the SP1 SDK 6.3.0 uses, over one gRPC channel, with the SDK's retry
 * policy (exponential backoff from 1 s, at most 120 s in total, for transient gRPC codes; signed
 * calls fetch a fresh nonce on every attempt) and the artifact store's presigned URLs.
 */
import { CharmsError } from '../../errors.js';
import { redactText } from '../../util/redact.js';
import { GrpcChannel, GrpcCode, GrpcError, isTransient, type ChannelOptions } from './grpc.js';
import {
  ArtifactType,
  ProtoFields,
  decodeParams,
  decodeProgram,
  decodeStatus,
  encodeAddressRequest,
  encodeCancelBody,
  encodeCreateArtifactRequest,
  encodeParamsRequest,
  encodeProversByUptimeRequest,
  encodeRequestProofBody,
  encodeSigned,
  encodeStatusRequest,
  encodeVkHashRequest,
  type ProgramInfo,
  type ProofModeValue,
  type ProofRequestParams,
  type ProofStatus,
  type RequestProofBody,
} from './proto.js';
import type { NetworkSigner } from './signer.js';
import { zstdRawFrame } from './zstd.js';

const NET = '/network.ProverNetwork/';
const ARTIFACT = '/artifact.ArtifactStore/';

export interface RetryPolicy {
  initialMs: number;
  maxDelayMs: number;
  totalMs: number;
}

/** The SDK's policy (retry.rs). */
const SDK_RETRY: RetryPolicy = { initialMs: 1000, maxDelayMs: 120_000, totalMs: 120_000 };

export interface ClientOptions extends ChannelOptions {
  retry?: RetryPolicy;
  /** Largest proof download accepted. */
  maxDownloadBytes?: number;
  sleep?: (ms: number) => Promise<void>;
  log?: (msg: string) => void;
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class NetworkClient {
  readonly channel: GrpcChannel;
  private readonly retry: RetryPolicy;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly maxDownload: number;
  private readonly log: ((msg: string) => void) | undefined;

  constructor(
    rpcUrl: string,
    readonly signer: NetworkSigner,
    opts: ClientOptions = {},
  ) {
    this.channel = new GrpcChannel(rpcUrl, opts);
    this.retry = opts.retry ?? SDK_RETRY;
    this.sleep = opts.sleep ?? defaultSleep;
    this.maxDownload = opts.maxDownloadBytes ?? 256 * 1024 * 1024;
    this.log = opts.log;
  }

  /** Runs `op`, retrying transient gRPC failures with exponential backoff. */
  async withRetry<T>(what: string, op: () => Promise<T>): Promise<T> {
    let delay = this.retry.initialMs;
    let waited = 0;
    for (;;) {
      try {
        return await op();
      } catch (e) {
        if (!isTransient(e) || waited + delay > this.retry.totalMs) throw e;
        this.log?.(`${what}: ${(e as Error).message}; retrying in ${delay} ms`);
        await this.sleep(delay);
        waited += delay;
        delay = Math.min(delay * 2, this.retry.maxDelayMs);
      }
    }
  }

  private unary(method: string, body: Uint8Array, service = NET, once = false): Promise<Uint8Array> {
    const call = () => this.channel.call(service + method, body);
    return once ? call() : this.withRetry(method, call);
  }

  async getNonce(): Promise<bigint> {
    return ProtoFields.parse(await this.unary('GetNonce', encodeAddressRequest(this.signer.address))).uint(1);
  }

  /** The account's balance in $PROVE wei (a decimal string). */
  async getBalance(opts: { once?: boolean } = {}): Promise<string> {
    return ProtoFields.parse(await this.unary('GetBalance', encodeAddressRequest(this.signer.address), NET, opts.once === true)).string(1) || '0';
  }

  /** The registered program, or undefined when the network answers NOT_FOUND. `once`: no retries (readiness probes). */
  async getProgram(vkHash: Uint8Array, opts: { once?: boolean } = {}): Promise<ProgramInfo | undefined> {
    try {
      return decodeProgram(await this.unary('GetProgram', encodeVkHashRequest(vkHash), NET, opts.once === true));
    } catch (e) {
      if (e instanceof GrpcError && e.code === GrpcCode.NOT_FOUND) return undefined;
      throw e;
    }
  }

  async getProofRequestParams(mode: ProofModeValue): Promise<ProofRequestParams> {
    return decodeParams(await this.unary('GetProofRequestParams', encodeParamsRequest(mode)));
  }

  async getProversByUptime(highAvailabilityOnly: boolean): Promise<Uint8Array[]> {
    return ProtoFields.parse(await this.unary('GetProversByUptime', encodeProversByUptimeRequest(highAvailabilityOnly))).repeatedBytes(1);
  }

  /** Signs `body(nonce)` with a fresh nonce on every attempt and sends `{format, signature, body}`. */
  private signedCall(method: string, body: (nonce: bigint) => Uint8Array): Promise<Uint8Array> {
    return this.withRetry(method, async () => {
      const nonce = await this.getNonce();
      const b = body(nonce);
      return this.channel.call(NET + method, encodeSigned(this.signer.sign(b), b));
    });
  }

  /** Sends a proof request; returns its 32-byte request id. */
  async requestProof(body: Omit<RequestProofBody, 'nonce'>): Promise<Uint8Array> {
    const res = ProtoFields.parse(await this.signedCall('RequestProof', (nonce) => encodeRequestProofBody({ ...body, nonce })));
    const id = res.message(2).bytes(1);
    if (id.length === 0) throw new GrpcError(GrpcCode.INTERNAL, 'RequestProof answered without a request id', NET + 'RequestProof');
    return id;
  }

  async cancelRequest(requestId: Uint8Array): Promise<void> {
    await this.signedCall('CancelRequest', (nonce) => encodeCancelBody(nonce, requestId));
  }

  async getProofRequestStatus(requestId: Uint8Array): Promise<ProofStatus> {
    return decodeStatus(await this.unary('GetProofRequestStatus', encodeStatusRequest(requestId)));
  }

  /** CreateArtifact + PUT of `zstd(content)` to the presigned URL; returns the artifact URI. */
  async uploadArtifact(type: number, content: Uint8Array): Promise<string> {
    const res = ProtoFields.parse(await this.unary('CreateArtifact', encodeCreateArtifactRequest(this.signer.signArtifactRequest(), type), ARTIFACT));
    const uri = res.string(1);
    const url = res.string(2);
    if (!uri || !url) throw new GrpcError(GrpcCode.INTERNAL, 'CreateArtifact answered without a URI', ARTIFACT + 'CreateArtifact');
    const body = zstdRawFrame(content);
    await this.withRetry('artifact upload', async () => {
      let r: Response;
      try {
        r = await fetch(url, { method: 'PUT', body });
      } catch (e) {
        throw new GrpcError(GrpcCode.UNAVAILABLE, `upload failed: ${(e as Error).message}`, 'PUT artifact');
      }
      await r.arrayBuffer().catch(() => undefined);
      if (!r.ok) throw new GrpcError(r.status >= 500 ? GrpcCode.UNAVAILABLE : GrpcCode.PERMISSION_DENIED, `upload answered HTTP ${r.status}`, 'PUT artifact');
    });
    return uri;
  }

  uploadStdin(stdin: Uint8Array): Promise<string> {
    return this.uploadArtifact(ArtifactType.STDIN, stdin);
  }

  /** GET of a proof artifact: raw bincode (the store does not zstd-encode downloads). */
  async download(url: string): Promise<Uint8Array> {
    return this.withRetry('proof download', async () => {
      let r: Response;
      try {
        r = await fetch(url);
      } catch (e) {
        throw new GrpcError(GrpcCode.UNAVAILABLE, `download failed: ${(e as Error).message}`, 'GET proof');
      }
      if (!r.ok || !r.body) {
        await r.arrayBuffer().catch(() => undefined);
        throw new GrpcError(r.status >= 500 ? GrpcCode.UNAVAILABLE : GrpcCode.NOT_FOUND, `proof download answered HTTP ${r.status}`, 'GET proof');
      }
      const parts: Uint8Array[] = [];
      let size = 0;
      for await (const c of r.body as unknown as AsyncIterable<Uint8Array>) {
        size += c.length;
        if (size > this.maxDownload) throw new CharmsError('PROVER_TRANSIENT', `proof download over ${this.maxDownload} bytes: refused`);
        parts.push(c);
      }
      const all = Buffer.concat(parts);
      return new Uint8Array(all.buffer, all.byteOffset, all.length);
    });
  }

  close(): void {
    this.channel.close();
  }

  toString(): string {
    return `prover network at ${redactText(this.channel.origin)}`;
  }
}
