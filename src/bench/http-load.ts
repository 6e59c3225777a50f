/**
 * A load generator for the API benchmarks, in a child process of its own (so the server's
 * process measures only the server): `concurrency` keep-alive HTTP/1.1 connections on raw
 * sockets, one request in flight on each, requests pre-serialised and drawn from a list (a seeded
 * random choice per request, so runs compare). Responses are framed by their content-length or
 * chunked encoding; only a complete 200 answer counts, anything else (another status, a request
 * left unanswered because its connection closed or failed) is an error. Latencies go to a
 * preallocated array; the result carries the generator's own CPU time, so a run tells whether
 * it measured the server or itself. Raw sockets rather than node's http client: that client
 * costs more CPU per request than the server under test.
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
  /** Requests in list order (each once per round) rather than drawn at random: warms a cache. */
  inOrder?: boolean;
  /**
   * Answers sent before the measured `count` and left out of the figures: the generator's own
   * start (a fresh process, its connections opening, code not yet compiled) is not the server's.
   */
  warmup?: number;
}

export interface HttpLoadResult {
  /** Complete 200 answers per second. */
  rps: number;
  p50: number;
  p99: number;
  /** Requests not answered 200 (another status, or no complete answer). */
  errors: number;
  /** CPU time the generator itself used (user + system), per request sent. */
  loadCpuUsPerRequest: number;
}

const HEAD_END = Buffer.from('\r\n\r\n');
const CRLF = Buffer.from('\r\n');

function encode(r: LoadRequest): Buffer {
  const body = Buffer.from(r.body ?? '');
  const extra = Object.entries(r.headers ?? {})
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  const length = r.body === undefined ? '' : `content-length: ${body.length}\r\n`;
  return Buffer.concat([Buffer.from(`${r.method} ${r.path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${extra}${length}\r\n`), body]);
}

/**
 * The length of the first complete answer in `buf` (head, body and chunked trailer); 0 when it
 * is not complete yet, -1 when it cannot be framed.
 */
function answerLength(buf: Buffer, head: string, bodyStart: number): number {
  const m = /\r\ncontent-length: *(\d+)/i.exec(head);
  if (m) return buf.length >= bodyStart + Number(m[1]) ? bodyStart + Number(m[1]) : 0;
  if (!/\r\ntransfer-encoding: *chunked/i.test(head)) return head.startsWith('HTTP/1.1 204') || head.startsWith('HTTP/1.1 304') ? bodyStart : -1;
  let at = bodyStart;
  for (;;) {
    const eol = buf.indexOf(CRLF, at);
    if (eol < 0) return 0;
    const size = Number.parseInt(buf.toString('latin1', at, eol), 16);
    if (!Number.isSafeInteger(size) || size < 0) return -1;
    at = eol + 2 + size + 2;
    if (size === 0) return buf.length >= at ? at : 0; // no trailers from our servers
    if (buf.length < at) return 0;
  }
}

/** Runs the load in this process. */
export async function httpLoad(o: HttpLoadOptions): Promise<HttpLoadResult> {
  const wire = o.requests.map(encode);
  let seed = (o.seed ?? 1) >>> 0 || 1;
  let next = 0;
  const pick = (): Buffer => {
    if (wire.length === 1) return wire[0]!;
    if (o.inOrder) return wire[next++ % wire.length]!;
    seed ^= seed << 13; // xorshift32
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return wire[(seed >>> 0) % wire.length]!;
  };
  const warmup = o.warmup ?? 0;
  const total = o.count + warmup;
  const lat = new Float64Array(o.count);
  let issued = 0;
  let answered = 0;
  let good = 0;
  let cpu0 = process.cpuUsage();
  let t0 = performance.now();
  let issuedAtStart = 0;
  const connection = () =>
    new Promise<void>((resolve) => {
      const s = net.connect(o.port, '127.0.0.1');
      s.setNoDelay(true);
      let buf: Buffer | undefined;
      let started = 0;
      const send = () => {
        if (issued >= total) {
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
        const total = answerLength(buf, head, end + 4);
        if (total === 0) return;
        if (total < 0 || total !== buf.length) {
          // unframeable, or bytes beyond the one answer asked for: the connection cannot go on
          s.destroy();
          return resolve();
        }
        buf = undefined;
        if (answered++ >= warmup && head.startsWith('HTTP/1.1 200 ')) lat[good++] = performance.now() - started;
        if (answered === warmup) {
          // the last warm-up answer: the measured window opens
          cpu0 = process.cpuUsage();
          t0 = performance.now();
          issuedAtStart = issued;
        }
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
  const cpu = process.cpuUsage(cpu0);
  const done = lat.subarray(0, good).sort();
  const pct = (p: number) => (done.length ? done[Math.min(done.length - 1, Math.floor(done.length * p))]! : Number.NaN);
  return {
    rps: good / secs,
    p50: pct(0.5),
    p99: pct(0.99),
    errors: o.count - good, // non-200 answers, and requests never (completely) answered
    loadCpuUsPerRequest: (cpu.user + cpu.system) / Math.max(1, issued - issuedAtStart),
  };
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
