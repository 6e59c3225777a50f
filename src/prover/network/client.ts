/**
 * The Prover Network RPCs the SP1 SDK 6.3.0 uses, over one gRPC channel, with the SDK's retry
 * policy (exponential backoff from 1 s, at most 120 s in total, for transient gRPC codes; signed
 * calls fetch a fresh nonce on every attempt) and the artifact store's presigned URLs.
 */
import { CharmsError } from '../../errors.js';
import type { Logger } from '../../infra/log.js';
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
  tagsUpTo,
  type ProgramInfo,
  type ProofModeValue,
  type ProofRequestParams,
  type ProofStatus,
  type RequestProofBody,
} from './proto.js';
import type { NetworkSigner } from './signer.js';
import { zstdRawFrame } from './zstd.js';
import { DEFAULT_ARTIFACT_LIMITS, transfer, type ArtifactLimits, type ArtifactPolicy } from './artifact-http.js';
import type { ArtifactHost } from '../../settings/settings.js';
import { networkRequests, outcomeOf } from '../../util/metrics.js';

/** Counts one request to the network (a gRPC method or an artifact transfer) by its outcome. */
function counted<T>(method: string, p: Promise<T>): Promise<T> {
  return p.then(
    (v) => {
      networkRequests.inc({ method, outcome: 'ok' });
      return v;
    },
    (e: unknown) => {
      networkRequests.inc({ method, outcome: outcomeOf(e) });
      throw e;
    },
  );
}

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
  /** Per-method reply caps instead of REPLY_CAPS (tests). */
  replyCaps?: Partial<Record<string, number>>;
  /** Largest proof download accepted when the caller names no limit. */
  maxDownloadBytes?: number;
  /** Stall and total time of one upload or download, and the byte budget of downloads in flight. */
  artifacts?: Partial<ArtifactLimits>;
  /** Artifact hosts allowed besides public https ones and the gateway's own (`SVC_ARTIFACT_HOSTS`). */
  artifactHosts?: readonly ArtifactHost[];
  sleep?: (ms: number) => Promise<void>;
  log?: Logger;
}

/**
 * The largest reply each method may send. The network's replies are tiny (a nonce, a status with
 * a proof URL, auction parameters): a padded one is refused as it arrives, before it is decoded.
 */
const REPLY_CAPS: Readonly<Record<string, number>> = {
  GetNonce: 4096,
  GetBalance: 4096,
  GetProofRequestStatus: 64 * 1024,
  GetProofRequestParams: 16 * 1024,
  GetProgram: 64 * 1024,
  RequestProof: 4096,
  CancelRequest: 4096,
  CreateArtifact: 16 * 1024,
  GetProversByUptime: 1024 * 1024,
};

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class NetworkClient {
  readonly channel: GrpcChannel;
  private readonly retry: RetryPolicy;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly maxDownload: number;
  private readonly log: Logger | undefined;
  private readonly artifacts: ArtifactLimits;
  private readonly policy: ArtifactPolicy;
  private readonly replyCaps: Partial<Record<string, number>>;

  constructor(
    rpcUrl: string,
    readonly signer: NetworkSigner,
    opts: ClientOptions = {},
  ) {
    this.channel = new GrpcChannel(rpcUrl, opts);
    this.retry = opts.retry ?? SDK_RETRY;
    this.sleep = opts.sleep ?? defaultSleep;
    this.maxDownload = opts.maxDownloadBytes ?? 16 * 1024 * 1024;
    this.log = opts.log;
    this.artifacts = { ...DEFAULT_ARTIFACT_LIMITS, ...opts.artifacts };
    this.replyCaps = { ...REPLY_CAPS, ...opts.replyCaps };
    this.policy = { gatewayHost: new URL(this.channel.origin).hostname, allowed: opts.artifactHosts ?? [] };
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
        this.log?.info(`${what}: ${(e as Error).message}; retrying in ${delay} ms`);
        await this.sleep(delay);
        waited += delay;
        delay = Math.min(delay * 2, this.retry.maxDelayMs);
      }
    }
  }

  private unary(method: string, body: Uint8Array, service = NET, once = false): Promise<Uint8Array> {
    const call = () => counted(method, this.channel.call(service + method, body, this.capOf(method)));
    return once ? call() : this.withRetry(method, call);
  }

  private capOf(method: string): { maxResponseBytes?: number } {
    const cap = this.replyCaps[method];
    return cap === undefined ? {} : { maxResponseBytes: cap };
  }

  async getNonce(): Promise<bigint> {
    return ProtoFields.parse(await this.unary('GetNonce', encodeAddressRequest(this.signer.address)), tagsUpTo(1)).uint(1);
  }

  /** The account's balance in $PROVE wei (a decimal string). */
  async getBalance(opts: { once?: boolean } = {}): Promise<string> {
    return ProtoFields.parse(await this.unary('GetBalance', encodeAddressRequest(this.signer.address), NET, opts.once === true), tagsUpTo(1)).string(1) || '0';
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
    return ProtoFields.parse(await this.unary('GetProversByUptime', encodeProversByUptimeRequest(highAvailabilityOnly)), tagsUpTo(1)).repeatedBytes(1);
  }

  /** Signs `body(nonce)` with a fresh nonce on every attempt and sends `{format, signature, body}`. */
  private signedCall(method: string, body: (nonce: bigint) => Uint8Array): Promise<Uint8Array> {
    return this.withRetry(method, async () => {
      const nonce = await this.getNonce();
      const b = body(nonce);
      return counted(method, this.channel.call(NET + method, encodeSigned(this.signer.sign(b), b), this.capOf(method)));
    });
  }

  /** Sends a proof request; returns its 32-byte request id. */
  async requestProof(body: Omit<RequestProofBody, 'nonce'>): Promise<Uint8Array> {
    const res = ProtoFields.parse(await this.signedCall('RequestProof', (nonce) => encodeRequestProofBody({ ...body, nonce })), tagsUpTo(2));
    const id = res.message(2, tagsUpTo(1)).bytes(1);
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
    const res = ProtoFields.parse(
      await this.unary('CreateArtifact', encodeCreateArtifactRequest(this.signer.signArtifactRequest(), type), ARTIFACT),
      tagsUpTo(2),
    );
    const uri = res.string(1);
    const url = res.string(2);
    if (!uri || !url) throw new GrpcError(GrpcCode.INTERNAL, 'CreateArtifact answered without a URI', ARTIFACT + 'CreateArtifact');
    const body = zstdRawFrame(content);
    await this.timed('stdin upload', (timeoutMs) =>
      counted(
        'artifact_upload',
        transfer(url, this.policy, { method: 'PUT', body, maxBytes: 0, timeoutMs, stallMs: this.artifacts.stallMs, what: 'stdin upload' }),
      ),
    );
    return uri;
  }

  uploadStdin(stdin: Uint8Array): Promise<string> {
    return this.uploadArtifact(ArtifactType.STDIN, stdin);
  }

  /**
   * GET of a proof artifact: raw bincode (the store does not zstd-encode downloads), at most
   * `maxBytes`, within the transfer limits (retries included).
   */
  download(url: string, maxBytes = this.maxDownload): Promise<Uint8Array> {
    return this.timed('proof download', (timeoutMs) =>
      counted(
        'proof_download',
        transfer(url, this.policy, {
          method: 'GET',
          maxBytes,
          timeoutMs,
          stallMs: this.artifacts.stallMs,
          budget: this.artifacts.budget,
          what: 'proof download',
        }),
      ),
    );
  }

  /** Retries `op` (given the time left) until the transfer's total time is spent. */
  private timed<T>(what: string, op: (timeoutMs: number) => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.artifacts.totalMs;
    return this.withRetry(what, () => {
      const left = deadline - Date.now();
      if (left <= 0) throw new CharmsError('PROVER_TRANSIENT', `the ${what} did not finish within ${this.artifacts.totalMs} ms`);
      return op(left);
    });
  }

  close(): void {
    this.channel.close();
  }

  toString(): string {
    return `prover network at ${redactText(this.channel.origin)}`;
  }
}
