/**
 * One TCP port serving HTTP/1.1 and HTTP/2 cleartext with prior knowledge (the Rust CLI client
 * speaks h2c): each connection's first bytes decide which server gets the socket. Handlers see
 * one small request/response abstraction for both.
 *
 * Every client is treated as hostile (see settings/limits.ts): a connection cap, and one per client
 * address (a trusted proxy's clients counted by its `X-Forwarded-For`); a deadline for
 * the first request's headers (h2 preface included), for each body and for idle connections, on
 * both protocols (the sockets are handed over by hand, so node's own server timeouts would not
 * apply); bodies refused with 413 as soon as their declared or received size passes the limit,
 * and a budget for all bodies in memory at once.
 */
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import { Duplex } from 'node:stream';
import { CharmsError, httpStatus, type ErrorCode } from '../errors.js';
import { publicText } from '../util/redact.js';
import { parseJson, parsePlainJson } from '../codec/json.js';
import type { Value } from '../codec/value.js';
import { DEFAULT_SERVER_LIMITS, type ServerLimits } from '../settings/limits.js';
import { silentLogger, type Logger } from './log.js';
import { registerGauge } from '../util/metrics.js';
import { ByteBudget } from '../util/byte-budget.js';

/** The body budgets of the listening servers of this process (their bytes in use are a metric). */
const liveBudgets = new Set<BodyBudget>();
registerGauge('charms_inflight_body_bytes', 'Request body bytes held in memory, all connections of all servers of the process', () => {
  let n = 0;
  for (const b of liveBudgets) n += b.inUse;
  return n;
});

/** Told of every answered request: its method, path, final status and time (metrics). */
export type RequestObserver = (req: { method: string; path: string }, status: number, seconds: number) => void;

export interface Req {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Record<string, string | string[] | undefined>;
  /**
   * The client's address: the connection's peer, or through a trusted proxy (SVC_TRUSTED_PROXIES)
   * the nearest address of `X-Forwarded-For` that is not one; absent where the transport has none.
   */
  client?: string | undefined;
  /**
   * Reads the body, refusing more than `limit` bytes (and the server's own limit) without
   * buffering them: PAYLOAD_TOO_LARGE (413), REQUEST_TIMEOUT (408), SERVER_BUSY (503). The
   * server answers these itself, whatever the handler returns.
   */
  body(limit: number): Promise<Uint8Array>;
}

export interface Res {
  status: number;
  headers: Record<string, string>;
  body?: Uint8Array | string;
}

/** A request's answer: at once (a hot read that needs no await), or a promise of it. */
export type Handler = (req: Req) => Res | Promise<Res>;

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

const CORS_HEADERS: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': '*',
  'access-control-allow-headers': '*',
  'access-control-expose-headers': '*',
  'access-control-max-age': '3600',
};

/**
 * A JSON error answer: URLs in the message lose their credentials, and this machine's file paths
 * are left out (see util/redact `publicText`); the logs keep both.
 */
export function jsonError(status: number, code: string, error: string): Res {
  return { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: publicText(error), code }) };
}

/**
 * A request's JSON body, the one way every server reads one: at most `limit` bytes (413 past
 * it), strict UTF-8, nesting bounded (127 levels, serde_json's limit) before anything walks it.
 * `lossless`: `parseJson`'s values (bigints, `ValueMap`s); `plain`: `JSON.parse`'s. Bad bytes or
 * JSON: CharmsError INVALID_INPUT saying what; the transport's own refusals (413, 408, 503) as
 * `Req.body` throws them.
 */
export async function readJsonBody(req: Req, limit: number, form: 'lossless'): Promise<Value>;
export async function readJsonBody(req: Req, limit: number, form: 'plain'): Promise<unknown>;
export async function readJsonBody(req: Req, limit: number, form: 'lossless' | 'plain'): Promise<unknown> {
  const bytes = await req.body(limit);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new CharmsError('INVALID_INPUT', 'request body is not UTF-8');
  }
  return form === 'lossless' ? parseJson(text) : parsePlainJson(text);
}

/**
 * The error answer of both servers: JSON `{error, code}` with the status of the code's row in
 * `HTTP_STATUS` (errors.ts). A 4xx carries the whole cause chain (the caller must fix the
 * request); a 5xx only the top message, details go to the log. Anything not a CharmsError is a
 * bug: logged with its stack, answered 500 INTERNAL without details.
 */
/**
 * A request node's parser refused (bad bytes in the request line, an unknown method, oversized
 * headers, broken chunked framing): answered `{error, code}` as every other refusal is, then the
 * connection closed. Node answers these itself only while no `clientError` listener is set.
 */
function answerClientError(e: NodeJS.ErrnoException, socket: net.Socket): void {
  // an answer in the middle of being written (or a dead socket): nothing can be added. As node's
  // own default: earlier answers on a kept-alive connection (node's or the fast path's) are whole.
  const inFlight = (socket as net.Socket & { _httpMessage?: { headersSent: boolean } | null })._httpMessage;
  if (!socket.writable || inFlight?.headersSent || e.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const [status, reason, body] =
    e.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', { error: 'request line or headers too large', code: 'INVALID_INPUT' }]
      : [400, 'Bad Request', { error: 'malformed HTTP request', code: 'INVALID_INPUT' }];
  const text = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
    () => socket.destroy(),
  );
}

export function errorResponse(e: unknown, log: Logger): Res {
  if (!(e instanceof CharmsError)) {
    log.error('unexpected error', { error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
    return jsonError(500, 'INTERNAL', 'internal error: the failure was logged; retry later');
  }
  const status = httpStatus(e);
  if (status < 500) return jsonError(status, e.code, e.fullMessage);
  const upstream = e.code === 'UPSTREAM_FAILED' || e.code === 'UPSTREAM_UNAVAILABLE';
  (upstream ? log.warn : log.error)('request failed', { code: e.code, error: e.fullMessage });
  return jsonError(status, e.code, e.message);
}

/** Bytes of request bodies held in memory, all connections together. */
class BodyBudget extends ByteBudget {}

/** Body failures the transport answers itself (status from HTTP_STATUS). */
const BODY_FAILURES: readonly ErrorCode[] = ['PAYLOAD_TOO_LARGE', 'REQUEST_TIMEOUT', 'SERVER_BUSY'];

interface BodyRead {
  promise: Promise<Uint8Array>;
  /** Bytes taken from the budget (given back when the request is answered). */
  taken(): number;
}

function readBody(stream: NodeJS.ReadableStream, declared: string | undefined, limit: number, timeoutMs: number, budget: BodyBudget): BodyRead {
  let taken = 0;
  const take = (n: number): boolean => {
    if (!budget.tryTake(n)) return false;
    taken += n;
    return true;
  };
  const busy = () => new CharmsError('SERVER_BUSY', 'the server is receiving too many large requests at once; retry in a moment');
  const promise = new Promise<Uint8Array>((resolve, reject) => {
    const expected = declared === undefined ? undefined : Number(declared);
    if (expected !== undefined && !(expected <= limit))
      return reject(new CharmsError('PAYLOAD_TOO_LARGE', `request body of ${declared} bytes exceeds the limit of ${limit} bytes`));
    // a declared length is taken from the budget up front: refused before a byte is read
    if (expected !== undefined && !take(expected)) return reject(busy());
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (e: Error | undefined, v?: Uint8Array) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      stream.removeListener('data', onData);
      if (e) {
        stream.pause();
        chunks.length = 0;
        reject(e);
      } else resolve(v!);
    };
    const timer = setTimeout(() => finish(new CharmsError('REQUEST_TIMEOUT', `request body not received within ${timeoutMs} ms`)), timeoutMs);
    const onData = (c: Buffer) => {
      if (done) return;
      size += c.length;
      if (size > limit) return finish(new CharmsError('PAYLOAD_TOO_LARGE', `request body exceeds the limit of ${limit} bytes`));
      if (size > taken && !take(size - taken)) return finish(busy());
      chunks.push(c);
    };
    stream.on('data', onData);
    stream.on('end', () => finish(undefined, Buffer.concat(chunks)));
    stream.on('error', (e) => finish(e as Error));
    // every request closes: the error (and its stack) only for one that closed before its end
    stream.on('close', () => done || finish(new CharmsError('INVALID_INPUT', 'the client closed the request before sending its body')));
  });
  return { promise, taken: () => taken };
}

type AnyReq = http.IncomingMessage | http2.Http2ServerRequest;
type AnyRes = http.ServerResponse | http2.Http2ServerResponse;

/** The answer to requests that arrive while the server drains, and to those cut at its end. */
const SHUTTING_DOWN = (): Res => {
  const r = jsonError(503, 'SERVER_BUSY', 'the server is shutting down: retry in a moment (or on another server)');
  r.headers['retry-after'] = '1';
  return r;
};

/** The answer to a request target URL parsing refuses (it would otherwise throw out of the server). */
const BAD_TARGET = (): Res => jsonError(400, 'INVALID_INPUT', 'the request target is not a valid path');

interface Target {
  path: string;
  query: URLSearchParams;
}

// ------------------------------------------------------------------ clients

/** A socket's peer address, IPv4-mapped IPv6 (`::ffff:1.2.3.4`) written as IPv4. */
const peerOf = (address: string | undefined): string => {
  const a = address ?? '';
  return a.startsWith('::ffff:') && net.isIPv4(a.slice(7)) ? a.slice(7) : a;
};

/** One address of an `X-Forwarded-For` entry: brackets and a port removed (`[::1]:80`, `1.2.3.4:5`). */
function forwardedAddress(entry: string): string {
  const e = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(e);
  if (bracketed) return peerOf(bracketed[1]);
  const v4port = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(e);
  return peerOf(v4port ? v4port[1] : e.slice(0, 64));
}

/**
 * Counts per client: connections by peer address, and (for a trusted proxy's requests) requests
 * in progress by the client its `X-Forwarded-For` names. Over the cap a client is refused; the
 * first refusal of each episode is logged.
 */
class ClientGate {
  private readonly connections = new Map<string, number>();
  private readonly requests = new Map<string, number>();
  private readonly refused = new Set<string>();
  private readonly proxies = new net.BlockList();
  readonly hasProxies: boolean;
  constructor(
    private readonly cap: number,
    proxies: ServerLimits['trustedProxies'],
    private readonly log: Logger,
  ) {
    for (const p of proxies) this.proxies.addSubnet(p.address, p.prefix, p.family);
    this.hasProxies = proxies.length > 0;
  }

  trusted(peer: string): boolean {
    return this.hasProxies && peer !== '' && this.proxies.check(peer, net.isIPv4(peer) ? 'ipv4' : 'ipv6');
  }

  /** A new connection from `peer`: whether it may stay (a trusted proxy's always may). */
  connect(peer: string): boolean {
    if (this.trusted(peer)) return true;
    return this.take(this.connections, peer, 'connections');
  }

  disconnect(peer: string): void {
    if (!this.trusted(peer)) this.give(this.connections, peer);
  }

  /**
   * A request on a connection from `peer`: the client to count it under (give it back with
   * `leave` when answered), `undefined` when it is not counted (not through a trusted proxy, or
   * no `X-Forwarded-For`), `false` when that client has too many requests in progress.
   */
  enter(peer: string, forwardedFor: string | string[] | undefined): string | undefined | false {
    if (forwardedFor === undefined || !this.trusted(peer)) return undefined;
    // the nearest address that is not a trusted proxy: what the proxies saw, not what the client wrote
    const chain = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor).split(',');
    let client: string | undefined;
    for (let i = chain.length - 1; i >= 0; i--) {
      const a = forwardedAddress(chain[i]!);
      if (a === '') continue;
      client = a;
      if (!this.trusted(a)) break;
    }
    if (client === undefined) return undefined;
    return this.take(this.requests, client, 'requests in progress') ? client : false;
  }

  leave(client: string | undefined | false): void {
    if (typeof client === 'string') this.give(this.requests, client);
  }

  private take(m: Map<string, number>, key: string, what: string): boolean {
    const n = m.get(key) ?? 0;
    if (n >= this.cap) {
      if (!this.refused.has(key)) {
        this.refused.add(key);
        this.log.warn('client over its connection cap: refusing it until some close', { client: key, [what.replace(/ /g, '_')]: n, cap: this.cap });
      }
      return false;
    }
    m.set(key, n + 1);
    return true;
  }

  private give(m: Map<string, number>, key: string): void {
    const n = (m.get(key) ?? 1) - 1;
    if (n > 0) m.set(key, n);
    else {
      m.delete(key);
      this.refused.delete(key);
    }
  }
}

/** The answer to a trusted proxy's request for a client that has too many in progress. */
const TOO_MANY = (cap: number): Res => {
  const r = jsonError(429, 'TOO_MANY_REQUESTS', `too many requests in progress from your address (at most ${cap}): wait for their answers, then retry`);
  r.headers['retry-after'] = '1';
  return r;
};

/** Requests in progress, and whether the server drains (shared by the connections of one server). */
class Lifecycle {
  draining = false;
  /** Each request in progress: answers it 503 now if it has not been answered. */
  readonly inflight = new Set<() => void>();
  private idle: (() => void) | undefined;
  done(cut: () => void): void {
    this.inflight.delete(cut);
    if (this.inflight.size === 0) this.idle?.();
  }
  /** Resolves when no request is in progress or after `ms`; then answers the rest 503. */
  async drain(ms: number): Promise<{ finished: number; cut: number }> {
    this.draining = true;
    const before = this.inflight.size;
    if (before > 0) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.idle = resolve;
        timer = setTimeout(resolve, ms);
      });
      clearTimeout(timer);
      this.idle = undefined;
    }
    const cut = this.inflight.size;
    for (const answer of [...this.inflight]) answer();
    return { finished: before - cut, cut };
  }
}

async function serve(
  handler: Handler,
  limits: ServerLimits,
  budget: BodyBudget,
  log: Logger,
  life: Lifecycle,
  gate: ClientGate,
  peer: string,
  req: AnyReq,
  res: AnyRes,
  observe?: RequestObserver,
) {
  const t0 = performance.now();
  const url = requestTarget(req.url ?? '/');
  // by transport, not by the version the request line claims: node's HTTP/1 parser also takes `HTTP/2.0`
  const h1 = !(req instanceof http2.Http2ServerRequest);
  if (life.draining) return void write(SHUTTING_DOWN(), req, res, h1, true);
  if (!url) return void write(BAD_TARGET(), req, res, h1, false);
  const client = gate.enter(peer, req.headers['x-forwarded-for']);
  if (client === false) return void write(TOO_MANY(limits.maxConnectionsPerClient), req, res, h1, !req.complete);
  // cut at the end of a drain: answered 503 now; the handler's late answer is dropped
  const cut = () => write(SHUTTING_DOWN(), req, res, h1, true);
  life.inflight.add(cut);
  try {
    await answer(handler, limits, budget, log, url, h1, req, res, observe, t0, typeof client === 'string' ? client : peer);
  } finally {
    gate.leave(client);
    life.done(cut);
  }
}

function write(out: Res, req: AnyReq, res: AnyRes, h1: boolean, close: boolean): void {
  if (res.destroyed || res.writableEnded || res.headersSent) return;
  const headers = { ...CORS_HEADERS, ...out.headers };
  const body = Buffer.from(out.body ?? '');
  headers['content-length'] = String(body.length);
  if (close && h1) headers['connection'] = 'close';
  res.writeHead(out.status, headers);
  res.end(body);
  if (!req.complete) req.resume();
}

async function answer(
  handler: Handler,
  limits: ServerLimits,
  budget: BodyBudget,
  log: Logger,
  url: Target,
  h1: boolean,
  req: AnyReq,
  res: AnyRes,
  observe: RequestObserver | undefined,
  t0: number,
  client: string,
) {
  let out: Res;
  let read: BodyRead | undefined;
  let bodyFailure: CharmsError | undefined;
  try {
    if (req.method === 'OPTIONS') out = { status: 204, headers: {} };
    else
      out = await handler({
        method: req.method ?? 'GET',
        path: url.path,
        query: url.query,
        headers: req.headers as Req['headers'],
        client,
        body: (limit) => {
          if (read) return read.promise;
          read = readBody(
            req as unknown as NodeJS.ReadableStream,
            req.headers['content-length'] as string | undefined,
            Math.min(limit, limits.maxBodyBytes),
            limits.bodyTimeoutMs,
            budget,
          );
          read.promise.catch((e: unknown) => {
            if (e instanceof CharmsError) bodyFailure = e;
          });
          return read.promise;
        },
      });
  } catch (e) {
    // handlers answer their own errors; one that throws is a bug: logged, answered without details
    log.error('request handler threw', { path: url.path, error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
    out = jsonError(500, 'INTERNAL', 'internal error');
  }
  // the transport answers body failures itself, whatever the handler made of them
  if (bodyFailure && BODY_FAILURES.includes(bodyFailure.code)) {
    out = jsonError(httpStatus(bodyFailure), bodyFailure.code, bodyFailure.message);
    if (bodyFailure.code === 'SERVER_BUSY') out.headers['retry-after'] = '1';
  }
  if (read) {
    const n = read.taken();
    res.once('close', () => budget.give(n));
  }
  const headers = { ...CORS_HEADERS, ...out.headers };
  const body = out.body === undefined ? undefined : typeof out.body === 'string' ? Buffer.from(out.body) : Buffer.from(out.body);
  if (body) headers['content-length'] = String(body.length);
  // A request whose body was refused or left unread: answer, then stop reading it (HTTP/1.1:
  // close the connection; h2: reset the stream once the answer is out, RFC 9113 §8.1).
  // HTTP/1 without Content-Length or Transfer-Encoding has no body to abandon, even when the
  // answer (OPTIONS) comes before the parser has marked the request complete
  const abandon = !req.complete && (!h1 || req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0');
  if (abandon && h1) headers['connection'] = 'close';
  if (res.destroyed || res.writableEnded || res.headersSent) return;
  observe?.({ method: req.method ?? 'GET', path: url.path }, out.status, (performance.now() - t0) / 1000);
  try {
    res.writeHead(out.status, headers);
  } catch (e) {
    // an invalid status or header from the handler is a bug: answered 500 as the fast path does
    // (it would otherwise reject out of the server: an unhandled rejection ends the process)
    log.error('request handler answered an invalid header', { path: url.path, error: (e as Error).message });
    write(jsonError(500, 'INTERNAL', 'internal error'), req, res, h1, abandon);
    return;
  }
  if (body) res.end(body);
  else res.end();
  if (abandon) {
    if (h1) (req as http.IncomingMessage).socket.destroySoon();
    else {
      // Discard what still arrives (a paused stream would keep the session's flow-control window
      // and stall its other streams), and reset the stream once the answer is handed to nghttp2
      // (the stream's own 'finish': the response's fires only on close).
      req.resume();
      const stream = (req as http2.Http2ServerRequest).stream;
      const rst = () => stream.close(http2.constants.NGHTTP2_NO_ERROR);
      if (stream.writableFinished) rst();
      else stream.once('finish', rst);
    }
  }
}

/** A Duplex that first yields `head`, then the socket's data; writes go to the socket. */
function replayingDuplex(socket: net.Socket, head: Buffer): Duplex {
  const d = new Duplex({
    read() {
      socket.resume();
    },
    write(chunk, enc, cb) {
      socket.write(chunk, enc, cb);
    },
    final(cb) {
      socket.end();
      cb();
    },
    destroy(err, cb) {
      socket.destroy();
      cb(err);
    },
  });
  d.push(head);
  socket.on('data', (c: Buffer) => {
    if (!d.push(c)) socket.pause();
  });
  socket.on('end', () => d.push(null));
  socket.on('close', () => d.destroy());
  return d;
}

/**
 * How long a client may take to read an answer once it is handed to the socket, `unread` bytes of
 * it still waiting there: the idle bound `base` per MiB (and one more), so a client that reads at a
 * modest rate is never cut while one that stops reading cannot hold its connection, and the
 * answer's bytes, for ever ('finish' comes only when the last byte has left).
 */
const deliveryMs = (base: number, unread: number): number => Math.ceil(base * (1 + unread / (1024 * 1024)));

/** One timer per connection: when it fires, the connection is dropped. */
class Deadline {
  private timer: NodeJS.Timeout | undefined;
  private ms = 0;
  constructor(private readonly drop: () => void) {}
  set(ms: number): void {
    this.clear();
    this.ms = ms;
    this.timer = setTimeout(this.drop, ms);
    this.timer.unref();
  }
  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
  /** Starts a running deadline over (a client that takes its answer, however slowly, keeps it). */
  extend(): void {
    if (this.timer) this.set(this.ms);
  }
}

// ------------------------------------------------------------------ HTTP/1.1 fast path
//
// node's http server costs more CPU per request than a cached answer of the index API (its
// IncomingMessage/ServerResponse streams, a writev per answer). Plain requests (HTTP/1.1, no body,
// a simple origin-form target, unique well-formed headers, a Host) are parsed and answered here
// with one write each; the first request of a connection that is anything else (a body, chunked,
// Expect, Upgrade, HTTP/1.0, a malformed or large head, ...) and everything after it go to node's
// server, bytes put back unread: node keeps the final word on all that is not plain.

interface FastContext {
  handler: Handler;
  limits: ServerLimits;
  log: Logger;
  life: Lifecycle;
  gate: ClientGate;
  observe: RequestObserver | undefined;
  /** Gives the socket to node's HTTP/1.1 server, `rest` (unread bytes) first. */
  handOver(socket: net.Socket, rest: Buffer): void;
}

const HEAD_END = Buffer.from('\r\n\r\n');
/** Heads longer than this go to node's server (its own limit, 16 KiB by default, is larger). */
const FAST_HEAD_MAX = 8 * 1024;
const FAST_HEADERS_MAX = 100;
/** Methods node's parser knows that the API uses; any other goes to node (which refuses most). */
const REQUEST_LINE = /^(GET|HEAD|OPTIONS|POST|PUT|DELETE|PATCH) (\/[\x21-\x7e]*) HTTP\/1\.1$/;
const HEADER_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+):[ \t]*([\x20-\x7e\t]*?)[ \t]*$/;
/** Targets whose path URL parsing keeps as is (no dot segments, no `//` authority, no fragment). */
const PLAIN_PATH = /^\/(?!\/)[A-Za-z0-9\-_~!$&'()*+,;=:@%/.]*$/;
const DOT_SEGMENT = /\/(\.|%2e)/i;
/** Request headers that make a request not plain. */
const NOT_PLAIN = new Set(['content-length', 'transfer-encoding', 'expect', 'upgrade', '__proto__']);
const EMPTY_BODY = Buffer.alloc(0); // what node's path reads from a request without a body
const noBody = async (): Promise<Uint8Array> => EMPTY_BODY;
const NO_BODY_STATUS = (s: number) => s === 204 || s === 304 || (s >= 100 && s < 200);

/** node's Date header, recomputed once a second like node's own. */
let dateText = '';
let dateSecond = -1;
function httpDate(): string {
  const s = Math.floor(Date.now() / 1000);
  if (s !== dateSecond) {
    dateSecond = s;
    dateText = new Date(s * 1000).toUTCString();
  }
  return dateText;
}

interface PlainRequest {
  method: string;
  target: string;
  headers: Record<string, string>;
  close: boolean;
}

/** The request in `head` (without its blank line) when it is plain; undefined otherwise. */
function parsePlain(head: string): PlainRequest | undefined {
  const lines = head.split('\r\n');
  const m = REQUEST_LINE.exec(lines[0]!);
  if (!m || lines.length - 1 > FAST_HEADERS_MAX) return undefined;
  const headers: Record<string, string> = {};
  for (let i = 1; i < lines.length; i++) {
    const h = HEADER_LINE.exec(lines[i]!);
    if (!h) return undefined;
    const name = h[1]!.toLowerCase();
    if (NOT_PLAIN.has(name) || Object.hasOwn(headers, name)) return undefined;
    headers[name] = h[2]!;
  }
  if (headers.host === undefined) return undefined;
  const connection = headers.connection?.toLowerCase();
  if (connection !== undefined && connection !== 'keep-alive' && connection !== 'close') return undefined;
  return { method: m[1]!, target: m[2]!, headers, close: connection === 'close' };
}

/**
 * A request's path and query as URL parsing gives them (dot segments resolved, escapes
 * normalised), without a URL object for plain targets; undefined when URL parsing refuses it
 * (`//[/`: an invalid authority).
 */
function requestTarget(target: string): Target | undefined {
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  if (!target.includes('#') && PLAIN_PATH.test(path) && !DOT_SEGMENT.test(path)) return { path, query: new URLSearchParams(q < 0 ? '' : target.slice(q + 1)) };
  try {
    const url = new URL(target, 'http://localhost');
    return { path: url.pathname, query: url.searchParams };
  } catch {
    return undefined;
  }
}

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAD_HEADER_VALUE = /[^\t\x20-\x7e]/;
/** The CORS headers as written on the wire (first in every answer). */
const CORS_TEXT = Object.entries(CORS_HEADERS)
  .map(([k, v]) => `${k}: ${v}\r\n`)
  .join('');
const statusLines = new Map<number, string>();
const statusLine = (status: number): string => {
  let l = statusLines.get(status);
  if (l === undefined) statusLines.set(status, (l = `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'unknown'}\r\n`));
  return l;
};
const CHUNKED_END = Buffer.from('0\r\n\r\n');

/**
 * The bytes of an answer as node's server writes them (same headers, same order): `close` is who
 * closes the connection after it (the server while it drains, or the client that asked).
 */
function encodeAnswer(out: Res, head: boolean, close: 'server' | 'client' | undefined, keepAliveSeconds: number): Buffer {
  // a text body is written into the answer's buffer as UTF-8 (no buffer of its own)
  const bodyText = typeof out.body === 'string' ? out.body : undefined;
  const bodyBytes = typeof out.body === 'string' ? undefined : out.body;
  const bodyLength = bodyText !== undefined ? Buffer.byteLength(bodyText) : bodyBytes?.byteLength;
  const hasBody = bodyLength !== undefined;
  // the headers as `{...CORS_HEADERS, ...out.headers, content-length, connection}` would order them
  let text = statusLine(out.status);
  let merged = false;
  for (const k in out.headers) if (k in CORS_HEADERS || k === 'content-length' || k === 'connection') merged = true;
  let userConnection = false;
  const line = (k: string, v: string) => {
    if (BAD_HEADER_VALUE.test(v) || !HEADER_NAME.test(k)) throw new Error(`invalid answer header ${JSON.stringify(k)}`);
    if (!userConnection && k.length === 10 && k.toLowerCase() === 'connection') userConnection = true;
    text += `${k}: ${v}\r\n`;
  };
  if (merged) {
    const headers = { ...CORS_HEADERS, ...out.headers };
    if (hasBody) headers['content-length'] = String(bodyLength);
    if (close === 'server') headers['connection'] = 'close';
    for (const k in headers) line(k, headers[k]!);
  } else {
    text += CORS_TEXT;
    for (const k in out.headers) line(k, out.headers[k]!);
    if (hasBody) text += `content-length: ${bodyLength}\r\n`;
    if (close === 'server') line('connection', 'close');
  }
  text += `Date: ${httpDate()}\r\n`;
  if (!userConnection) text += close ? 'Connection: close\r\n' : `Connection: keep-alive\r\nKeep-Alive: timeout=${keepAliveSeconds}\r\n`;
  // node frames a bodiless answer chunked, except to HEAD (no body follows, so no framing either)
  const chunked = !hasBody && !head && !NO_BODY_STATUS(out.status);
  if (chunked) text += 'Transfer-Encoding: chunked\r\n';
  text += '\r\n';
  const none = head || NO_BODY_STATUS(out.status);
  const payloadLength = none ? 0 : chunked ? CHUNKED_END.length : bodyLength!;
  const n = text.length; // latin1: one byte per character (header text is checked ASCII)
  const wire = Buffer.allocUnsafe(n + payloadLength);
  wire.write(text, 0, 'latin1');
  if (none) return wire;
  if (chunked) wire.set(CHUNKED_END, n);
  else if (bodyText !== undefined) wire.write(bodyText, n, 'utf8');
  else wire.set(bodyBytes!, n);
  return wire;
}

/** Whether an answer's own headers close the connection (node then sends no keep-alive). */
function closesConnection(out: Res): boolean {
  for (const k in out.headers) if (k.toLowerCase() === 'connection') return out.headers[k]!.toLowerCase() === 'close';
  return false;
}

/** Serves `socket`'s plain HTTP/1.1 requests, one at a time, `first` being its bytes so far. */
function serveHttp1(socket: net.Socket, first: Buffer, c: FastContext, deadline: Deadline, peer: string): void {
  let buf = first;
  /** Bytes at the start of `buf` already seen to be whole plain lines of the head in progress. */
  let checked = 0;
  let busy = false;
  let gone = false;
  const keepAliveSeconds = Math.floor(c.limits.idleTimeoutMs / 1000);
  const onData = (chunk: Buffer) => {
    buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
    // a client that sends faster than we answer waits (its bytes stay in the kernel)
    if (busy && buf.length > FAST_HEAD_MAX) socket.pause();
    if (!busy) next();
  };
  const stop = () => {
    gone = true;
    socket.removeListener('data', onData);
  };
  socket.on('data', onData);
  socket.once('close', stop);

  const handOver = () => {
    stop();
    socket.removeListener('close', stop);
    const rest = buf;
    buf = Buffer.alloc(0);
    c.handOver(socket, rest);
  };

  function next(): void {
    if (gone || busy) return;
    const end = buf.length === 0 ? -1 : buf.indexOf(HEAD_END);
    if (end < 0) {
      // a head that cannot be plain goes to node now (it answers 400 at once, not at the deadline)
      if (buf.length > FAST_HEAD_MAX || !plainSoFar()) return handOver();
      if (socket.isPaused()) socket.resume(); // more bytes needed
      return;
    }
    const req = end <= FAST_HEAD_MAX ? parsePlain(buf.toString('latin1', 0, end)) : undefined;
    if (!req) return handOver();
    buf = buf.subarray(end + 4);
    checked = 0;
    busy = true;
    deadline.clear(); // headers are in; the handler has no timer (as with node's server)
    void run(req);
  }

  /**
   * Whether the whole lines of an unfinished head are plain (a request line, then header lines,
   * each ended by CRLF). Checked as lines arrive, so a head sent a byte at a time costs O(length).
   */
  function plainSoFar(): boolean {
    for (let eol = buf.indexOf(10, checked); eol >= 0; eol = buf.indexOf(10, checked)) {
      if (buf[eol - 1] !== 13) return false; // a bare LF
      const line = buf.toString('latin1', checked, eol - 1);
      if (!(checked === 0 ? REQUEST_LINE : HEADER_LINE).test(line)) return false;
      checked = eol + 1;
    }
    return true;
  }

  async function run(r: PlainRequest): Promise<void> {
    const t0 = performance.now();
    let answered = false;
    const send = (out: Res, close: 'server' | 'client' | undefined) => {
      if (answered || socket.destroyed) return;
      answered = true;
      const closing = close !== undefined || closesConnection(out);
      let wire: Buffer;
      try {
        wire = encodeAnswer(out, r.method === 'HEAD', close, keepAliveSeconds);
      } catch (e) {
        c.log.error('request handler answered an invalid header', { error: (e as Error).message });
        wire = encodeAnswer(jsonError(500, 'INTERNAL', 'internal error'), r.method === 'HEAD', close, keepAliveSeconds);
      }
      const more = socket.write(wire);
      // from here the connection waits for the client to take the answer: bounded (each drain extends it)
      deadline.set(deliveryMs(c.limits.idleTimeoutMs + c.limits.headersTimeoutMs, socket.writableLength));
      if (closing) {
        stop();
        socket.end();
        socket.destroySoon();
        return;
      }
      const proceed = () => {
        busy = false;
        queueMicrotask(next); // not recursion: answers of pipelined requests can be synchronous
      };
      if (more) proceed();
      else socket.once('drain', proceed);
    };
    const target = requestTarget(r.target);
    if (c.life.draining) return send(SHUTTING_DOWN(), 'server');
    if (!target) return send(BAD_TARGET(), undefined);
    const { path, query } = target;
    const client = c.gate.hasProxies ? c.gate.enter(peer, r.headers['x-forwarded-for']) : undefined;
    if (client === false) return send(TOO_MANY(c.limits.maxConnectionsPerClient), undefined);
    const cut = () => send(SHUTTING_DOWN(), 'server');
    c.life.inflight.add(cut);
    try {
      let out: Res;
      try {
        const answer =
          r.method === 'OPTIONS'
            ? { status: 204, headers: {} }
            : c.handler({ method: r.method, path, query, headers: r.headers, client: typeof client === 'string' ? client : peer, body: noBody });
        // an answer given at once is sent at once (no microtask turn)
        out = answer instanceof Promise ? await answer : answer;
      } catch (e) {
        c.log.error('request handler threw', { path, error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
        out = jsonError(500, 'INTERNAL', 'internal error');
      }
      if (!answered && !socket.destroyed) c.observe?.({ method: r.method, path }, out.status, (performance.now() - t0) / 1000);
      send(out, r.close ? 'client' : undefined);
    } finally {
      c.gate.leave(client);
      c.life.done(cut);
    }
  }

  next();
}

export interface Listening {
  port: number;
  close(): Promise<void>;
  /**
   * Stops taking work: new requests are answered 503 (the port stays open, so clients get an
   * answer, not a refused connection), requests in progress get up to `timeoutMs` to finish, and
   * those still running then are answered 503. Then close().
   */
  drain(timeoutMs: number): Promise<{ finished: number; cut: number }>;
  /** Open client connections (for tests and the load script). */
  connections(): number;
}

export function listenDual(
  handler: Handler,
  opts: {
    host?: string;
    port?: number;
    limits?: Partial<ServerLimits>;
    log?: Logger;
    observe?: RequestObserver;
    /** `node`: every HTTP/1.1 request through node's server, no fast path (benchmarks compare the two). */
    http1?: 'fast' | 'node';
  },
): Promise<Listening> {
  const limits: ServerLimits = { ...DEFAULT_SERVER_LIMITS, ...opts.limits };
  const budget = new BodyBudget(limits.inflightBodyBytes);
  liveBudgets.add(budget);
  const deadlines = new WeakMap<net.Socket, Deadline>();
  const log = opts.log ?? silentLogger;
  const life = new Lifecycle();
  const gate = new ClientGate(limits.maxConnectionsPerClient, limits.trustedProxies, log);
  /** Each connection's peer address, by its socket (HTTP/1.1) or h2 session. */
  const peers = new WeakMap<object, string>();
  const onRequest = (req: AnyReq, res: AnyRes) => {
    const conn = req instanceof http2.Http2ServerRequest ? req.stream.session : req.socket;
    const peer = (conn && peers.get(conn)) ?? '';
    void serve(handler, limits, budget, log, life, gate, peer, req, res, opts.observe);
  };

  const h1 = http.createServer(onRequest as http.RequestListener);
  // Node's own header/request timers run only on a server that listens itself; ours hands sockets
  // over, so the deadlines below do that work. Keep-alive idleness is bounded by them too.
  h1.keepAliveTimeout = limits.idleTimeoutMs;
  h1.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const d = deadlines.get(req.socket);
    d?.clear(); // headers are in; the body has its own timer, the handler none
    const idleMs = limits.idleTimeoutMs + limits.headersTimeoutMs;
    res.once('finish', () => d?.set(idleMs));
    // 'finish' waits until the answer is flushed: a client that never reads it would hold the
    // connection and the answer's bytes for ever, so the deadline also runs from the answer's end
    // ('prefinish': end() called; each drain extends it, see below)
    res.once('prefinish', () => d?.set(deliveryMs(idleMs, req.socket.writableLength)));
  });
  h1.on('clientError', (e: NodeJS.ErrnoException, socket: net.Socket) => answerClientError(e, socket));

  const h2 = http2.createServer({ settings: { maxConcurrentStreams: limits.maxStreamsPerConnection } }, onRequest as never);
  const sessions = new Set<http2.Http2Session>();
  let sessionPeer = '';
  h2.on('session', (s: http2.Http2Session) => {
    sessions.add(s);
    peers.set(s, sessionPeer);
    // No request yet (preface or headers incomplete), or none open for a while: drop the session.
    const d = new Deadline(() => s.destroy());
    let open = 0;
    d.set(limits.headersTimeoutMs);
    s.on('stream', (stream: http2.ServerHttp2Stream) => {
      open++;
      d.clear();
      stream.once('close', () => {
        if (--open === 0 && !s.destroyed) d.set(limits.idleTimeoutMs);
      });
    });
    s.on('error', () => s.destroy());
    s.on('close', () => {
      d.clear();
      sessions.delete(s);
    });
  });

  const fast: FastContext = {
    handler,
    limits,
    log,
    life,
    gate,
    observe: opts.observe,
    handOver: (socket, rest) => {
      socket.pause();
      if (rest.length > 0) socket.unshift(rest);
      h1.emit('connection', socket);
      socket.resume();
    },
  };
  const sockets = new Set<net.Socket>();
  const tcp = net.createServer((socket) => {
    const peer = peerOf(socket.remoteAddress);
    // one client may not take every slot: its connections past its own cap are closed at once
    if (!gate.connect(peer)) return void socket.destroy();
    socket.once('close', () => gate.disconnect(peer));
    peers.set(socket, peer);
    sockets.add(socket);
    // Small frames (h2 WINDOW_UPDATE, SETTINGS acks) must not wait for Nagle + delayed ACK: with
    // them an h2c upload crawled at ~1 MB/s.
    socket.setNoDelay(true);
    const deadline = new Deadline(() => socket.destroy());
    deadlines.set(socket, deadline);
    deadline.set(limits.headersTimeoutMs); // the first request's headers (or the h2 preface)
    socket.on('close', () => {
      deadline.clear();
      sockets.delete(socket);
    });
    let buf = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const n = Math.min(buf.length, PREFACE.length);
      const isH2 = buf.subarray(0, n).equals(PREFACE.subarray(0, n));
      if (isH2 && buf.length < PREFACE.length) return; // wait for more bytes
      socket.removeListener('data', onData);
      if (isH2) {
        // the session's own deadlines take over from here
        deadline.clear();
        // node:http2 reads a net.Socket's native handle directly, so bytes already read cannot
        // be put back; a plain Duplex in front of the socket is read through JS instead.
        // the session is made (and 'session' emitted) within this call: it takes its peer from here
        sessionPeer = peer;
        h2.emit('connection', replayingDuplex(socket, buf));
        sessionPeer = '';
        return;
      }
      // HTTP/1.1: plain requests without a body are served by the fast path below; it hands the
      // socket to node's server at the first request it does not take (bytes put back unread)
      if (opts.http1 === 'node') fast.handOver(socket, buf);
      else serveHttp1(socket, buf, fast, deadline, peer);
    };
    socket.on('data', onData);
    socket.on('drain', () => deadline.extend());
    socket.on('error', () => socket.destroy());
  });
  // Past the cap, node closes new connections at once (before they cost a request's memory).
  tcp.maxConnections = limits.maxConnections;
  return new Promise((resolve, reject) => {
    tcp.once('error', (e) => {
      liveBudgets.delete(budget);
      reject(listenFailure(e, opts.host ?? '0.0.0.0', opts.port ?? 0));
    });
    tcp.listen(opts.port ?? 0, opts.host ?? '0.0.0.0', () => {
      const addr = tcp.address() as net.AddressInfo;
      resolve({
        port: addr.port,
        connections: () => sockets.size,
        drain: (ms) => life.drain(ms),
        close: () =>
          new Promise<void>((done) => {
            liveBudgets.delete(budget);
            for (const s of sessions) s.destroy();
            for (const s of sockets) s.destroy();
            h1.close();
            h2.close();
            tcp.close(() => done());
          }),
      });
    });
  });
}

/**
 * A failed listen as a CharmsError that says what to do: a port another process listens on
 * (EADDRINUSE), a port below 1024 without the privilege (EACCES), an address not on this host
 * (EADDRNOTAVAIL). `option` is how the user names the port (`--port`, or an environment variable).
 */
export function listenFailure(e: unknown, host: string, port: number, option = '--port'): unknown {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  // the errno's own message ("listen EADDRINUSE: address already in use <host:port>") would say
  // the address and the trouble a second time: its code is named instead, and it is no cause
  const at = `${host.includes(':') ? `[${host}]` : host}:${port} (${code})`;
  if (code === 'EADDRINUSE')
    return new CharmsError(
      'CONFIG',
      `cannot listen on ${at}: the port is in use (another process, perhaps another charms server, listens there): stop it, or choose another port with ${option}`,
    );
  if (code === 'EACCES')
    return new CharmsError('CONFIG', `cannot listen on ${at}: not permitted (ports below 1024 need privileges): choose a port from 1024 with ${option}`);
  if (code === 'EADDRNOTAVAIL')
    return new CharmsError('CONFIG', `cannot listen on ${at}: the address is not one of this host's: choose another (--ip, or 0.0.0.0 for all)`);
  return e;
}
