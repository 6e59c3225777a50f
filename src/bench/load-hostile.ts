/**
 * `npm run load`: a bounded hostile load against `charms server --mock` on loopback, reporting the
 * server's peak RSS (VmHWM) next to the bound its limits promise (docs/server.md "Limits").
 *
 * Phases, each with a fixed number of requests and a deadline:
 *  1. large bodies: LOAD_BODIES (32) concurrent 31 MiB uploads, half HTTP/1.1 and half h2c;
 *  2. slow clients: LOAD_SLOW (200) idle / partial-header / partial-body connections, which the
 *     header and body deadlines must drop;
 *  3. hostile apps (needs the test vectors): LOAD_APPS (4) concurrent prove requests whose app contract
 *     grows its memory by LOAD_APP_MEMORY_MIB (1024) and touches every page, and as many that
 *     loop forever.
 * The server runs with SVC_INFLIGHT_BODY_BYTES=128 MiB, a 2 s header and a 20 s body timeout unless the
 * environment says otherwise.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { sha256 } from '@noble/hashes/sha2.js';
import wabtInit from 'wabt';
import { encodeCbor } from '../codec/cbor.js';
import { proveRequestToValue } from '../model/request.js';
import { appFromString } from '../model/primitives.js';
import { hasShared, readSharedText } from '../testing/shared.js';
import { bitcoinProveRequest, funding, identityFor } from '../testing/fixtures.js';

const MiB = 1024 * 1024;
const num = (name: string, d: number) => Number(process.env[name] ?? d);

function rssOf(pid: number): { rss: number; hwm: number } {
  let s: string;
  try {
    s = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return { rss: 0, hwm: 0 }; // the process is gone
  }
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(s)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/** Set before the script stops the server itself: any exit before that is a crash. */
let stopping = false;

async function startServer(env: Record<string, string>) {
  const bin = fileURLToPath(new URL('../cli/charms.js', import.meta.url));
  const proc = spawn(process.execPath, [bin, 'server', '--mock', '--ip', '127.0.0.1', '--port', '0'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let err = '';
    proc.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /Server running on 127\.0\.0\.1:(\d+)/.exec(err);
      if (m) resolve(Number(m[1]));
    });
    proc.once('exit', (c) => reject(new Error(`server exited ${c}: ${err}`)));
    setTimeout(() => (proc.kill('SIGKILL'), reject(new Error(`server did not start: ${err}`))), 30_000).unref();
  });
  // keep the server's last log lines to explain an unexpected exit
  let tail = '';
  proc.stderr!.on('data', (d: Buffer) => (tail = (tail + d.toString()).slice(-4000)));
  proc.once('exit', (code, signal) => {
    if (!stopping) console.error(`server exited unexpectedly (${code ?? signal}); last log:\n${tail}`);
  });
  return { proc, port };
}

function postH1(port: number, body: Buffer | Uint8Array, contentType = 'application/json'): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/spells/prove',
        agent: false,
        headers: { 'content-type': contentType, 'content-length': String(body.length) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(-1));
    req.end(body);
  });
}

function postH2(port: number, body: Buffer): Promise<number> {
  return new Promise((resolve) => {
    const s = http2.connect(`http://127.0.0.1:${port}`);
    s.on('error', () => resolve(-1));
    const req = s.request({ ':method': 'POST', ':path': '/spells/prove', 'content-type': 'application/json' });
    let status = 0;
    req.on('response', (h) => (status = Number(h[':status'])));
    req.on('error', () => {});
    req.resume();
    req.on('end', () => (s.close(), resolve(status)));
    const chunk = 1024 * 1024;
    let at = 0;
    const pump = () => {
      while (at < body.length && !req.destroyed) {
        const part = body.subarray(at, at + chunk);
        at += part.length;
        if (!req.write(part)) return void req.once('drain', pump);
      }
      if (!req.destroyed) req.end();
    };
    pump();
  });
}

const tally = (xs: number[]) =>
  Object.entries(xs.reduce<Record<string, number>>((m, x) => ((m[x] = (m[x] ?? 0) + 1), m), {}))
    .map(([k, v]) => `${v}×${k}`)
    .join(' ');

async function hostileApp(pages: number): Promise<{ hog: Uint8Array; loop: Uint8Array }> {
  const wabt = await wabtInit();
  const wat = (text: string) => {
    const m = wabt.parseWat('app.wat', text);
    const { buffer } = m.toBinary({});
    m.destroy();
    return new Uint8Array(buffer);
  };
  const hog = wat(`(module (memory (export "memory") 1)
    (func (export "_start") (local $i i32) (local $end i32)
      (drop (memory.grow (i32.const ${pages})))
      (local.set $end (i32.mul (memory.size) (i32.const 65536)))
      (loop $l (i32.store (local.get $i) (i32.const 1))
        (local.set $i (i32.add (local.get $i) (i32.const 4096)))
        (br_if $l (i32.lt_u (local.get $i) (local.get $end))))))`);
  const loop = wat(`(module (memory (export "memory") 1) (func (export "_start") (loop $l (br $l))))`);
  return { hog, loop };
}

export async function run(): Promise<void> {
  const env: Record<string, string> = {
    SVC_INFLIGHT_BODY_BYTES: String(128 * MiB),
    SVC_HEADERS_TIMEOUT_MS: '2000',
    SVC_BODY_TIMEOUT_MS: '20000',
    LOG_LEVEL: 'info', // the start-up banner carries the port
  };
  for (const k of Object.keys(process.env)) if (k.startsWith('SVC_') || k.startsWith('APP_')) env[k] = process.env[k]!;
  const { proc, port } = await startServer(env);
  const pid = proc.pid!;
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf(pid).rss)), 50);
  const deadline = setTimeout(
    () => {
      console.error('load: deadline reached, stopping');
      stopping = true;
      proc.kill('SIGKILL');
      process.exit(1);
    },
    num('LOAD_DEADLINE_MS', 240_000),
  );
  try {
    const base = rssOf(pid).rss;
    console.log(
      `server pid ${pid} port ${port}; idle RSS ${(base / MiB).toFixed(0)} MiB; in-flight body budget ${(Number(env.SVC_INFLIGHT_BODY_BYTES) / MiB).toFixed(0)} MiB`,
    );

    // 1. large bodies
    const n = num('LOAD_BODIES', 32);
    const big = Buffer.alloc(31 * MiB, 0x20); // 31 MiB of JSON whitespace: read whole, then refused as invalid
    let t = performance.now();
    const statuses = await Promise.all(Array.from({ length: n }, (_, i) => (i % 2 ? postH2(port, big) : postH1(port, big))));
    console.log(
      `large bodies: ${n} × 31 MiB concurrent (h1 + h2c): ${tally(statuses)} in ${((performance.now() - t) / 1000).toFixed(1)} s; peak RSS so far ${(peak / MiB).toFixed(0)} MiB`,
    );

    // 2. slow clients
    const slow = num('LOAD_SLOW', 200);
    t = performance.now();
    const closed = await Promise.all(
      Array.from(
        { length: slow },
        (_, i) =>
          new Promise<boolean>((resolve) => {
            const s = net.connect(port, '127.0.0.1');
            s.on('error', () => {});
            s.on('close', () => resolve(true));
            s.resume(); // read the server's answer (a 408), else the close never arrives
            if (i % 3 === 1) s.write('POST /spells/prove HTTP/1.1\r\nHost: x\r\n');
            else if (i % 3 === 2) s.write('POST /spells/prove HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n{');
          }),
      ),
    );
    console.log(
      `slow clients: ${slow} idle/partial connections, ${closed.filter(Boolean).length} dropped by the server in ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );

    // 3. hostile apps
    if (!hasShared) console.log('hostile apps: skipped (test vectors not found: CHARMS_SHARED_DIR)');
    else {
      const apps = num('LOAD_APPS', 4);
      const mib = num('LOAD_APP_MEMORY_MIB', 1024);
      const { hog, loop } = await hostileApp((mib * MiB) / 65536);
      const f = funding(readSharedText);
      const in0 = `${f.txid}:0`;
      const request = (wasm: Uint8Array) => {
        const vk = Buffer.from(sha256(wasm)).toString('hex');
        const nft = `n/${identityFor(in0)}/${vk}`;
        const req = bitcoinProveRequest(
          f,
          `version: 15\ntx:\n  ins: [${in0}]\n  outs:\n  - 0: {ticker: X, remaining: 1}\n  coins: [{amount: 1000, dest: ${f.dest}}]\napp_public_inputs:\n  ${nft}: ~\n`,
          [f.hex],
          {
            app_private_inputs: [[appFromString(nft), in0]],
            binaries: [[sha256(wasm), wasm]],
          },
        );
        return encodeCbor(proveRequestToValue(req, false));
      };
      const bodies = [request(hog), request(loop)];
      t = performance.now();
      const st = await Promise.all(Array.from({ length: 2 * apps }, (_, i) => postH1(port, bodies[i % 2]!, 'application/cbor')));
      console.log(
        `hostile apps: ${apps} growing memory by ${mib} MiB + ${apps} looping, concurrent: ${tally(st)} in ${((performance.now() - t) / 1000).toFixed(1)} s`,
      );
    }
    const { hwm } = rssOf(pid);
    console.log(`server peak RSS: ${(Math.max(peak, hwm) / MiB).toFixed(0)} MiB (VmHWM ${(hwm / MiB).toFixed(0)} MiB); alive: ${proc.exitCode === null}`);
  } finally {
    clearInterval(sampler);
    clearTimeout(deadline);
    stopping = true;
    proc.kill('SIGTERM');
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await run();
