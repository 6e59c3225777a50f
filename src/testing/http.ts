/** Minimal HTTP/1.1 and HTTP/2 (prior knowledge) clients for tests. */
import http from 'node:http';
import http2 from 'node:http2';
import type { Handler, Req } from '../infra/http.js';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export function h1(port: number, method: string, path: string, body?: Uint8Array | string, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

export function h2(port: number, method: string, path: string, body?: Uint8Array | string, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', reject);
    const req = session.request({ ':method': method, ':path': path, ...headers });
    const chunks: Buffer[] = [];
    let status = 0;
    let hdrs: Record<string, string | string[] | undefined> = {};
    req.on('response', (h) => {
      status = Number(h[':status']);
      hdrs = h as typeof hdrs;
    });
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      session.close();
      resolve({ status, headers: hdrs, body: Buffer.concat(chunks) });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * A loopback port nothing listens on: 1, a privileged port no test binds (tests listen on port 0).
 * A port found free by binding and closing a server can be taken meanwhile by a test file running
 * alongside, which then answers instead of refusing.
 */
export const REFUSED_PORT = 1;

/** A request to a Handler, without a server (`path` with its query). */
export const handlerReq = (path: string, method = 'GET', body = ''): Req => {
  const u = new URL(path, 'http://x');
  return { method, path: u.pathname, query: u.searchParams, headers: {}, body: async () => new TextEncoder().encode(body) };
};

/** A Handler's answer to `path`: its status and JSON body. */
export const handlerAnswer = async (h: Handler, path: string, method = 'GET', body = '') => {
  const r = await h(handlerReq(path, method, body));
  return { status: r.status, json: JSON.parse(String(r.body)) };
};
