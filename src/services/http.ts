/**
 * One TCP port serving HTTP/1.1 and HTTP/2 cleartext with prior knowledge (the Rust CLI client
 * speaks h2c): each connection's first bytes decide which server gets the socket. Handlers see
 * one small request/response abstraction for both.
 */
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import { Duplex } from 'node:stream';
import { CharmsError, httpStatus } from '../errors.js';
import { redactText } from '../util/redact.js';
import type { Logger } from './log.js';

export interface Req {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Record<string, string | string[] | undefined>;
  /** Reads the body, refusing more than `limit` bytes without buffering them (413). */
  body(limit: number): Promise<Uint8Array>;
}

export interface Res {
  status: number;
  headers: Record<string, string>;
  body?: Uint8Array | string;
}

export type Handler = (req: Req) => Promise<Res>;

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

export const CORS_HEADERS: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': '*',
  'access-control-allow-headers': '*',
  'access-control-expose-headers': '*',
  'access-control-max-age': '3600',
};

/** A JSON error answer; URLs in the message lose their credentials (see util/redact). */
export function jsonError(status: number, code: string, error: string): Res {
  return { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: redactText(error), code }) };
}

/**
 * The error answer of both servers: JSON `{error, code}` with the status of the code's row in
 * `HTTP_STATUS` (errors.ts). A 4xx carries the whole cause chain (the caller must fix the
 * request); a 5xx only the top message, details go to the log. Anything not a CharmsError is a
 * bug: logged with its stack, answered 500 INTERNAL without details.
 */
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

function readBody(stream: NodeJS.ReadableStream & { destroy?: () => void }, declared: string | undefined, limit: number): Promise<Uint8Array> {
  if (declared !== undefined && Number(declared) > limit)
    return Promise.reject(new CharmsError('PAYLOAD_TOO_LARGE', `request body of ${declared} bytes exceeds the limit of ${limit} bytes`));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const onData = (c: Buffer) => {
      if (done) return;
      size += c.length;
      if (size > limit) {
        done = true;
        stream.removeListener('data', onData);
        stream.pause();
        reject(new CharmsError('PAYLOAD_TOO_LARGE', `request body exceeds the limit of ${limit} bytes`));
        return;
      }
      chunks.push(c);
    };
    stream.on('data', onData);
    stream.on('end', () => {
      if (!done) {
        done = true;
        resolve(Buffer.concat(chunks));
      }
    });
    stream.on('error', (e) => {
      if (!done) {
        done = true;
        reject(e);
      }
    });
  });
}

async function serve(handler: Handler, req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) {
  const url = new URL(req.url ?? '/', 'http://localhost');
  let out: Res;
  let bodyRefused = false;
  try {
    if (req.method === 'OPTIONS') out = { status: 204, headers: {} };
    else
      out = await handler({
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers as Req['headers'],
        body: (limit) =>
          readBody(req as unknown as NodeJS.ReadableStream, req.headers['content-length'] as string | undefined, limit).catch((e) => {
            bodyRefused = true;
            throw e;
          }),
      });
  } catch (e) {
    out = e instanceof CharmsError && e.code === 'PAYLOAD_TOO_LARGE' ? jsonError(413, e.code, e.message) : jsonError(500, 'INTERNAL', 'internal error');
  }
  const headers = { ...CORS_HEADERS, ...out.headers };
  const body = out.body === undefined ? undefined : typeof out.body === 'string' ? Buffer.from(out.body) : Buffer.from(out.body);
  if (body) headers['content-length'] = String(body.length);
  // A refused upload: answer, then close the connection rather than read the rest.
  if (bodyRefused && 'httpVersionMajor' in req && req.httpVersionMajor === 1) headers['connection'] = 'close';
  res.writeHead(out.status, headers);
  if (body) res.end(body);
  else res.end();
  if (bodyRefused && 'httpVersionMajor' in req && req.httpVersionMajor === 1) (req as http.IncomingMessage).socket.destroySoon?.();
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

export interface Listening {
  port: number;
  close(): Promise<void>;
}

export function listenDual(handler: Handler, opts: { host?: string; port?: number }): Promise<Listening> {
  const onRequest = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) =>
    void serve(handler, req, res);
  const h1 = http.createServer(onRequest as http.RequestListener);
  h1.keepAliveTimeout = 5000;
  const h2 = http2.createServer({}, onRequest as never);
  const sockets = new Set<net.Socket>();
  const sessions = new Set<http2.Http2Session>();
  h2.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
  });
  const tcp = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let buf = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const n = Math.min(buf.length, PREFACE.length);
      const isH2 = buf.subarray(0, n).equals(PREFACE.subarray(0, n));
      if (isH2 && buf.length < PREFACE.length) return; // wait for more bytes
      socket.removeListener('data', onData);
      if (isH2) {
        // node:http2 reads a net.Socket's native handle directly, so bytes already read cannot
        // be put back; a plain Duplex in front of the socket is read through JS instead.
        h2.emit('connection', replayingDuplex(socket, buf));
        return;
      }
      socket.pause();
      socket.unshift(buf);
      h1.emit('connection', socket);
      socket.resume();
    };
    socket.on('data', onData);
    socket.on('error', () => socket.destroy());
  });
  return new Promise((resolve, reject) => {
    tcp.once('error', reject);
    tcp.listen(opts.port ?? 0, opts.host ?? '0.0.0.0', () => {
      const addr = tcp.address() as net.AddressInfo;
      resolve({
        port: addr.port,
        close: () =>
          new Promise<void>((done) => {
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
