/**
 * A load generator for the API benchmarks, in a child process of its own (so the server's
 * process measures only the server): `concurrency` keep-alive HTTP/1.1 connections on raw
 * sockets, one request in flight on each, requests drawn from a list (a seeded random choice per
 * request, so runs compare). Responses are read by their content-length (our servers always send
 * one); a status >= 400 or a request left unanswered (its connection closed or failed) is an
 * error. Raw sockets rather
 * than node's http client: that client costs more CPU per request than the server under test.
 */
import { fork } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';

export interface LoadRequest {
  method: string;
  path: string;
  body?: string;
  headers?: Record<string, string>;
}

export interface HttpLoadOptions {
  port: number;
  /** Each request is one of these (drawn at random when there are several). */
  requests: LoadRequest[];
  concurrency: number;
  count: number;
  seed?: number;
}

export interface HttpLoadResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

const HEAD_END = Buffer.from('\r\n\r\n');

function encode(r: LoadRequest): Buffer {
  const body = Buffer.from(r.body ?? '');
  const extra = Object.entries(r.headers ?? {})
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  const length = r.body === undefined ? '' : `content-length: ${body.length}\r\n`;
  return Buffer.concat([Buffer.from(`${r.method} ${r.path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${extra}${length}\r\n`), body]);
}

/** Runs the load in this process. */
export async function httpLoad(o: HttpLoadOptions): Promise<HttpLoadResult> {
  const wire = o.requests.map(encode);
  let seed = (o.seed ?? 1) >>> 0 || 1;
  const pick = (): Buffer => {
    if (wire.length === 1) return wire[0]!;
    seed ^= seed << 13; // xorshift32
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return wire[(seed >>> 0) % wire.length]!;
  };
  const lat = new Float64Array(o.count);
  let issued = 0;
  let answered = 0;
  let errors = 0;
  const t0 = performance.now();
  const connection = () =>
    new Promise<void>((resolve) => {
      const s = net.connect(o.port, '127.0.0.1');
      s.setNoDelay(true);
      let buf: Buffer | undefined;
      let started = 0;
      const send = () => {
        if (issued >= o.count) {
          s.end();
          return resolve();
        }
        issued++;
        started = performance.now();
        s.write(pick());
      };
      s.on('connect', send);
      s.on('data', (chunk: Buffer) => {
        buf = buf ? Buffer.concat([buf, chunk]) : chunk;
        const end = buf.indexOf(HEAD_END);
        if (end < 0) return;
        const head = buf.toString('latin1', 0, end);
        const m = /\r\ncontent-length: *(\d+)/i.exec(head);
        const total = end + 4 + (m ? Number(m[1]) : 0);
        if (buf.length < total) return;
        buf = undefined; // one request in flight: nothing follows the answer
        lat[answered++] = performance.now() - started;
        if (Number(head.slice(9, 12)) >= 400) errors++;
        if (/\r\nconnection: *close/i.test(head)) {
          s.destroy();
          return resolve();
        }
        send();
      });
      s.on('error', () => undefined);
      s.on('close', () => resolve());
    });
  await Promise.all(Array.from({ length: o.concurrency }, connection));
  const secs = (performance.now() - t0) / 1000;
  const done = lat.subarray(0, answered).sort();
  const pct = (p: number) => (done.length ? done[Math.min(done.length - 1, Math.floor(done.length * p))]! : Number.NaN);
  return { rps: answered / secs, p50: pct(0.5), p99: pct(0.99), errors: errors + (o.count - answered) }; // unanswered requests are errors too
}

/** Runs the load in a child process (this module), so it does not share the server's CPU time or event loop. */
export function httpLoadInChild(o: HttpLoadOptions): Promise<HttpLoadResult> {
  const child = fork(fileURLToPath(import.meta.url), [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (r) => resolve(r as HttpLoadResult));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`the load process exited with ${code}`))));
    child.send(o);
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.send)
  process.once('message', (o: HttpLoadOptions) => {
    void httpLoad(o).then((r) => process.send!(r, () => process.exit(0)));
  });
