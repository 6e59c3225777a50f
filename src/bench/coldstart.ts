/**
 * Cold starts, each in fresh processes (n runs, medians), next to Node's own start-up measured in
 * the same run: the first verification of a real v12 spell (import + keys + verify) on each
 * pairing backend, the CLI's start (`charms --version`), and the query server's start-to-ready
 * time (spawn until the first 200 from GET /ready).
 */
import { spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { hasShared, readSharedJson } from '../testing/shared.js';
import { median, nodeWall } from './measure.js';

const N = 5;
const cli = fileURLToPath(new URL('../cli/charms.js', import.meta.url));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

const ready = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    http
      .get({ host: '127.0.0.1', port, path: '/ready', agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      })
      .on('error', () => resolve(false));
  });

/** Milliseconds from spawning `charms query-server` until GET /ready answers 200. */
async function queryServerStart(): Promise<number> {
  const port = await freePort();
  const t = performance.now();
  const child = spawn(process.execPath, [cli, 'query-server', '--ip', '127.0.0.1', '--port', String(port)], { stdio: 'ignore' });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error('query-server exited');
      if (await ready(port)) return performance.now() - t;
      await new Promise((r) => setTimeout(r, 2));
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

export async function run(): Promise<void> {
  console.log(`load avg ${loadavg()[0]!.toFixed(1)} (2 cores shared with the other engineers); n=${N} fresh processes each, medians`);
  const node = median(Array.from({ length: N }, () => nodeWall(['-e', ''])));
  console.log(`  node start alone (baseline): ${node.toFixed(0)} ms wall`);
  const version = median(Array.from({ length: N }, () => nodeWall([cli, '--version'])));
  console.log(`  charms --version: ${version.toFixed(0)} ms wall (${(version - node).toFixed(0)} ms over node start)`);
  if (hasShared) {
    const hex = readSharedJson('vectors', 'bitcoin-v12-spell-tx-decoded.json').tx_hex as string;
    const mod = fileURLToPath(new URL('../verify/index.js', import.meta.url));
    for (const backend of ['noble', 'mcl-wasm'] as const) {
      const inProcess: number[] = [];
      const walls: number[] = [];
      for (let i = 0; i < N; i++) {
        const t = performance.now();
        const r = spawnSync(
          process.execPath,
          [
            '--input-type=module',
            '-e',
            `const t0 = performance.now(); const m = await import(${JSON.stringify(mod)}); ${backend === 'mcl-wasm' ? 'await m.initPairingBackend("mcl-wasm");' : ''} m.extractAndVerifySpell({ bitcoin: ${JSON.stringify(hex)} }, false); console.log(performance.now() - t0);`,
          ],
          { encoding: 'utf8' },
        );
        walls.push(performance.now() - t);
        if (r.status !== 0) throw new Error(r.stderr);
        inProcess.push(Number(r.stdout.trim()));
      }
      console.log(
        `  first verification in a fresh process, ${backend} (import + init + keys + extract + verify v12): ${median(inProcess).toFixed(0)} ms in process, ${median(walls).toFixed(0)} ms wall`,
      );
    }
  }
  const starts: number[] = [];
  for (let i = 0; i < N; i++) starts.push(await queryServerStart());
  console.log(
    `  query server start-to-ready (spawn → first 200 from /ready, mcl-wasm loaded): ${median(starts).toFixed(0)} ms wall (${(median(starts) - node).toFixed(0)} ms over node start)`,
  );
}
