/**
 * Unary gRPC calls over HTTP/2 with `node:http2`: TLS (ALPN h2) for `https://`, plaintext h2c for
 * `http://` (self-hosted gateways, loopback tests). The Prover Network needs only unary calls with
 * opaque protobuf bodies and no metadata, so the framing (5-byte length prefix, `grpc-status`
 * trailers, `grpc-timeout`) is done here rather than through @grpc/grpc-js: no dependency, and
 * full control of deadlines and response-size bounds.
 */
import http2 from 'node:http2';
import { CharmsError } from '../../errors.js';
import { redactText } from '../../util/redact.js';

export const GrpcCode = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

const CODE_NAMES = Object.fromEntries(Object.entries(GrpcCode).map(([k, v]) => [v, k])) as Record<number, string>;

/** A gRPC call that ended with a non-OK status. */
export class GrpcError extends Error {
  override name = 'GrpcError';
  constructor(
    readonly code: number,
    readonly details: string,
    readonly path: string,
  ) {
    super(`${path}: ${CODE_NAMES[code] ?? `status ${code}`}${details ? `: ${details}` : ''}`);
  }
}

/** The SDK's transient codes (crates/sdk/src/network/retry.rs): retried with backoff. */
const TRANSIENT_CODES: ReadonlySet<number> = new Set([
  GrpcCode.UNAVAILABLE,
  GrpcCode.DEADLINE_EXCEEDED,
  GrpcCode.INTERNAL,
  GrpcCode.ABORTED,
  GrpcCode.CANCELLED,
]);

export const isTransient = (e: unknown): boolean => e instanceof GrpcError && TRANSIENT_CODES.has(e.code);

export interface ChannelOptions {
  /** Per-call deadline when the caller gives none (the SDK's tonic endpoint: 60 s). */
  defaultTimeoutMs?: number;
  /** Connection timeout (the SDK: 15 s). */
  connectTimeoutMs?: number;
  /** Largest response message accepted by any call (each method has its own, smaller cap: client.ts). */
  maxResponseBytes?: number;
}

/** Parses a gateway URL; only the origin is used (gRPC paths are absolute). */
function grpcOrigin(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new CharmsError('CONFIG', `not a URL: ${redactText(url)}`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:')
    throw new CharmsError('CONFIG', `prover network URL must be https:// (or http:// for a self-hosted gateway), got ${u.protocol}`);
  return u.origin;
}

function httpStatusToGrpc(status: number): number {
  if (status === 400) return GrpcCode.INTERNAL;
  if (status === 401) return GrpcCode.UNAUTHENTICATED;
  if (status === 403) return GrpcCode.PERMISSION_DENIED;
  if (status === 404) return GrpcCode.UNKNOWN;
  if (status === 429 || status === 502 || status === 503 || status === 504) return GrpcCode.UNAVAILABLE;
  return GrpcCode.UNKNOWN;
}

export class GrpcChannel {
  private session: http2.ClientHttp2Session | undefined;
  readonly origin: string;
  private readonly timeoutMs: number;
  private readonly connectTimeoutMs: number;
  private readonly maxResponse: number;

  constructor(url: string, opts: ChannelOptions = {}) {
    this.origin = grpcOrigin(url);
    this.timeoutMs = opts.defaultTimeoutMs ?? 60_000;
    this.connectTimeoutMs = opts.connectTimeoutMs ?? 15_000;
    this.maxResponse = opts.maxResponseBytes ?? 4 * 1024 * 1024;
  }

  private connect(): http2.ClientHttp2Session {
    if (this.session && !this.session.closed && !this.session.destroyed) return this.session;
    const s = http2.connect(this.origin);
    s.on('error', () => {}); // surfaced on the streams
    s.setTimeout(15_000, () => {
      // keepalive while idle, as the SDK's 15 s
      if (!s.closed && !s.destroyed) s.ping(() => {});
    });
    s.unref();
    this.session = s;
    return s;
  }

  /** One unary call; resolves with the response message or rejects with a GrpcError. */
  call(path: string, request: Uint8Array, opts: { timeoutMs?: number; maxResponseBytes?: number } = {}): Promise<Uint8Array> {
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    const maxResponse = Math.min(opts.maxResponseBytes ?? this.maxResponse, this.maxResponse);
    return new Promise<Uint8Array>((resolve, reject) => {
      let session: http2.ClientHttp2Session;
      try {
        session = this.connect();
      } catch (e) {
        reject(new GrpcError(GrpcCode.UNAVAILABLE, (e as Error).message, path));
        return;
      }
      const frame = new Uint8Array(5 + request.length);
      new DataView(frame.buffer).setUint32(1, request.length, false);
      frame.set(request, 5);
      const stream = session.request({
        ':method': 'POST',
        ':path': path,
        'content-type': 'application/grpc+proto',
        te: 'trailers',
        'grpc-timeout': `${Math.max(1, Math.ceil(timeoutMs))}m`,
      });
      let done = false;
      const finish = (err: GrpcError | undefined, value?: Uint8Array) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        clearTimeout(connectTimer);
        if (err) {
          if (!stream.closed) stream.close(http2.constants.NGHTTP2_CANCEL);
          reject(err);
        } else resolve(value!);
      };
      const timer = setTimeout(() => finish(new GrpcError(GrpcCode.DEADLINE_EXCEEDED, `no answer within ${timeoutMs} ms`, path)), timeoutMs);
      const connectTimer = setTimeout(() => {
        if (!session.connecting) return;
        finish(new GrpcError(GrpcCode.UNAVAILABLE, `cannot connect within ${this.connectTimeoutMs} ms`, path));
        session.destroy();
      }, this.connectTimeoutMs);
      const chunks: Buffer[] = [];
      let size = 0;
      let httpStatus = 0;
      let statusFromHeaders: { code: number; msg: string } | undefined;
      const readStatus = (h: http2.IncomingHttpHeaders) => {
        const s = h['grpc-status'];
        if (s === undefined) return undefined;
        let msg = String(h['grpc-message'] ?? '');
        try {
          msg = decodeURIComponent(msg);
        } catch {
          /* keep as sent */
        }
        return { code: Number(s), msg: msg.slice(0, 2000) };
      };
      stream.on('response', (h) => {
        httpStatus = Number(h[':status'] ?? 0);
        statusFromHeaders = readStatus(h); // trailers-only response
      });
      stream.on('data', (c: Buffer) => {
        size += c.length;
        if (size > maxResponse + 5) finish(new GrpcError(GrpcCode.RESOURCE_EXHAUSTED, `response over ${maxResponse} bytes`, path));
        else chunks.push(c);
      });
      let trailerStatus: { code: number; msg: string } | undefined;
      stream.on('trailers', (t) => {
        trailerStatus = readStatus(t);
      });
      stream.on('error', (e) => finish(new GrpcError(GrpcCode.UNAVAILABLE, e.message, path)));
      stream.on('close', () => {
        if (done) return;
        const st = trailerStatus ?? statusFromHeaders;
        if (httpStatus !== 200 && !st)
          return finish(
            new GrpcError(
              httpStatus ? httpStatusToGrpc(httpStatus) : GrpcCode.UNAVAILABLE,
              httpStatus ? `HTTP ${httpStatus}` : 'stream closed without a response',
              path,
            ),
          );
        if (!st) return finish(new GrpcError(GrpcCode.INTERNAL, 'no grpc-status in the response', path));
        if (st.code !== GrpcCode.OK) return finish(new GrpcError(st.code, st.msg, path));
        const body = Buffer.concat(chunks);
        if (body.length < 5) return finish(new GrpcError(GrpcCode.INTERNAL, 'missing response message', path));
        if (body[0] !== 0) return finish(new GrpcError(GrpcCode.INTERNAL, 'compressed response messages are not supported', path));
        const len = body.readUInt32BE(1);
        if (len !== body.length - 5) return finish(new GrpcError(GrpcCode.INTERNAL, 'response message length mismatch', path));
        finish(undefined, new Uint8Array(body.subarray(5)));
      });
      stream.end(frame);
    });
  }

  close(): void {
    this.session?.close();
    this.session = undefined;
  }
}
