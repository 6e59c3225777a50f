/**
 * The container image and the compose file, run for real (issue 35; `npm run test:containers`,
 * run by .ci/run after the suite). Needs podman, runc, debootstrap and podman-compose, root, and
 * the package registries (npm, the apt mirror) as the install does; nothing else.
 *
 * 1. The local base (base-image.ts: debootstrap + the registry's Node; cached between runs) stands
 *    in for the Containerfile's BASE; the product image is built from this checkout with
 *    `--format docker` (which keeps its HEALTHCHECK), the Redis and PostgreSQL stand-ins
 *    (standins/) on the same base.
 * 2. `server --mock` in the image (`--network host`): /ready, a mock prove of a real spell from
 *    the host (the funding vector spent, the answer's mock proof verified), the process non-root,
 *    the image's health check, SIGTERM drains (a request in progress is answered, new ones 503,
 *    exit 0 within the drain bound).
 * 3. `index` in the image against the fake Bitcoin node on the host (the chain vectors mined):
 *    /v1/status reaches the tip and follows a new block; healthy.
 * 4. `podman-compose up` of compose.yaml (+ an override: MOCK=1, the stand-in images): podman-compose
 *    1.0.3 does not wait on `depends_on` health conditions, so the test brings the databases up
 *    first and waits on their health checks, then the charms services; one request through each:
 *    a mock prove through the prover (its answer cached in Redis), the writer's /v1/status at the
 *    node's tip (PostgreSQL), the --api-only reader's at the same tip; `down -v`.
 * Every container, volume, network and image it made is removed at the end, except the cached base.
 *
 * Measured here (podman 4.3.1, podman-compose 1.0.3; 2 cores shared with a CI run and other
 * builds, load 6-10), four full passes: the base 46-85 s when it is made (54 s alone); the
 * product image 134-227 s (336 MB: 50 MB over the 286 MB base, `podman image inspect`); the Redis
 * and PostgreSQL stand-ins 31-49 s; the runs 29-43 s (`server --mock` 2-4 s, `index` 4-6 s,
 * compose 23-33 s). The whole test: 3 min 20 s to 5 min 34 s with the base cached, 4 min 57 s
 * with it made (a quieter machine).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { ensureBaseImage } from './base-image.js';
import { podman, run, ULIMITS } from './podman.js';
import { skipOrFail } from '../require.js';
import { waitFor } from '../wait.js';
import { h1 } from '../http.js';
import { FakeBitcoind } from '../fake-bitcoind.js';
import { bitcoinVectors, VECTOR_BLOCKS } from '../index-vectors.js';
import { startTcpProxy } from '../tcp-proxy.js';
import { bitcoinProveRequest, funding } from '../fixtures.js';
import { readSharedText } from '../shared.js';
import { proveRequestToValue } from '../../model/request.js';
import { toJsonCompact } from '../../codec/json.js';
import { extractAndVerifySpell } from '../../verify/index.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const STANDINS = join(ROOT, 'src/testing/containers/standins');
const RUN = `${process.pid}${randomBytes(2).toString('hex')}`;
const LABEL = `charms-ctest=${RUN}`;
const IMAGE = `localhost/charms-ts:ctest-${RUN}`;
const REDIS_IMAGE = `localhost/charms-standin-redis:ctest-${RUN}`;
const POSTGRES_IMAGE = `localhost/charms-standin-postgres:ctest-${RUN}`;
const PROJECT = `charmsctest${RUN}`;
const MIN = 60_000;
const log = (line: string) => void process.stderr.write(`containers: ${line}\n`);

const made = { images: [] as string[], containers: [] as string[], compose: false, dir: '' };

after(async () => {
  if (made.compose) {
    await composeDown(5).catch((e: Error) => log(`compose down: ${e.message}`));
    const vols = await podman(['volume', 'ls', '-q', '--filter', `label=io.podman.compose.project=${PROJECT}`], { allowFail: true });
    for (const v of vols.stdout.split('\n').filter(Boolean)) await podman(['volume', 'rm', '-f', v], { allowFail: true });
    await podman(['network', 'rm', '-f', `${PROJECT}_default`], { allowFail: true });
  }
  const left = await podman(['ps', '-a', '-q', '--filter', `label=${LABEL}`], { allowFail: true });
  for (const c of [...made.containers, ...left.stdout.split('\n').filter(Boolean)]) await podman(['rm', '-f', '-v', '-t', '0', c], { allowFail: true });
  for (const i of made.images.reverse()) await podman(['rmi', '-f', i], { allowFail: true, timeoutMs: 2 * MIN });
  if (made.dir) rmSync(made.dir, { recursive: true, force: true });
});

/** podman-compose on compose.yaml and the test's override, with this project name, runc and the limits. */
function compose(args: string[], timeoutMs: number, env: Record<string, string> = composeEnv) {
  return run(
    'podman-compose',
    [
      '--podman-args=--runtime runc',
      `--podman-run-args=${ULIMITS.join(' ')}`,
      '-p',
      PROJECT,
      '-f',
      join(ROOT, 'compose.yaml'),
      '-f',
      join(made.dir, 'override.yaml'),
      ...args,
    ],
    { timeoutMs, env, cwd: ROOT },
  );
}
let composeEnv: Record<string, string> = {};

/**
 * `down -v`, and the anonymous volumes of the image's `VOLUME /data` in the services that mount
 * nothing there (the index and its reader): podman-compose 1.0.3 removes only the named ones.
 */
async function composeDown(stopSeconds: number): Promise<void> {
  const ids = (await podman(['ps', '-a', '-q', '--filter', `label=io.podman.compose.project=${PROJECT}`], { allowFail: true })).stdout
    .split('\n')
    .filter(Boolean);
  const volumes: string[] = [];
  for (const id of ids) {
    const r = await podman(['inspect', '--format', '{{range .Mounts}}{{if eq .Type "volume"}}{{.Name}} {{end}}{{end}}', id], { allowFail: true });
    volumes.push(...r.stdout.split(/\s+/).filter(Boolean));
  }
  await compose(['down', '-v', '-t', String(stopSeconds)], 3 * MIN);
  for (const v of volumes) await podman(['volume', 'rm', '-f', v], { allowFail: true });
}

/** A TCP port free on the host's loopback now (the servers in host-network containers take it). */
async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

const get = async (port: number, path: string) => h1(port, 'GET', path).catch(() => undefined);
const json = (b: Buffer) => JSON.parse(b.toString('utf8'));

/** A mock prove request of a real spell: the funding vector's output spent, change to its address (lifecycle.test's). */
function proveBody(): string {
  const f = funding(readSharedText);
  const yaml = `version: 15\ntx:\n  ins: [${f.txid}:0]\n  outs: [{}]\n  coins: [{amount: 1000, dest: ${f.dest}}]\napp_public_inputs: {}\n`;
  return toJsonCompact(proveRequestToValue(bitcoinProveRequest(f, yaml, [f.hex]), true));
}

/** The answer to a prove request: the mock-proved transaction, whose spell verifies in mock mode. */
function assertProved(status: number, body: Buffer): void {
  assert.equal(status, 200, body.toString());
  const txs = json(body) as { bitcoin: string }[];
  assert.equal(txs.length, 1);
  const spell = extractAndVerifySpell({ bitcoin: txs[0]!.bitcoin }, true);
  assert.equal(spell.mock, true);
}

/** `podman healthcheck run` until healthy (bounded), then the status podman recorded. */
async function healthy(container: string, timeoutMs: number): Promise<string> {
  await waitFor(async () => (await podman(['healthcheck', 'run', container], { allowFail: true })).code === 0, `${container} healthy`, {
    timeoutMs,
    intervalMs: 1000,
  });
  return (await podman(['inspect', '--format', '{{.State.Health.Status}}', container])).stdout.trim();
}

async function logsOf(container: string): Promise<string> {
  const r = await podman(['logs', container], { allowFail: true });
  return r.stdout + r.stderr;
}

/** Runs the product image in the host's network, as this machine kind runs containers. */
async function runImage(name: string, args: string[], extra: string[] = []): Promise<string> {
  const full = `charms-ctest-${RUN}-${name}`;
  made.containers.push(full);
  await podman(['run', '-d', '--name', full, '--label', LABEL, '--network', 'host', ...ULIMITS, ...extra, IMAGE, ...args]);
  return full;
}

test('the image: built on a local base, serves a mock prove and an index non-root with a health check, drains on SIGTERM; compose brings up both services', async (t) => {
  for (const tool of ['podman', 'runc', 'debootstrap', 'podman-compose'])
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return skipOrFail(t, `${tool} is not installed (needed by the container test)`);
  if (process.getuid?.() !== 0) return skipOrFail(t, 'the container test runs as root (debootstrap, rootful podman)');
  made.dir = mkdtempSync(join(tmpdir(), 'charms-ctest-'));
  const t0 = Date.now();

  // 1. images
  const base = await ensureBaseImage({ timeoutMs: 15 * MIN, log });
  const tBase = Date.now();
  log(`building ${IMAGE} from ${ROOT} on ${base}`);
  made.images.push(IMAGE);
  await podman(
    ['build', '--format', 'docker', '--layers=false', ...ULIMITS, '--build-arg', `BASE=${base}`, '-f', join(ROOT, 'Containerfile'), '-t', IMAGE, ROOT],
    {
      timeoutMs: 25 * MIN,
    },
  );
  const tImage = Date.now();
  const cfg = json(Buffer.from((await podman(['image', 'inspect', '--format', '{{json .Config}}', IMAGE])).stdout));
  assert.equal(cfg.User, 'charms:charms');
  assert.deepEqual(cfg.Entrypoint, ['charms']);
  const hc = json(Buffer.from((await podman(['image', 'inspect', '--format', '{{json .HealthCheck}}', IMAGE])).stdout));
  assert.deepEqual(hc?.Test, ['CMD', 'node', '/opt/charms/scripts/container-health.mjs'], 'the HEALTHCHECK is kept (--format docker)');
  const size = Number((await podman(['image', 'inspect', '--format', '{{.Size}}', IMAGE])).stdout.trim());
  const baseSize = Number((await podman(['image', 'inspect', '--format', '{{.Size}}', base])).stdout.trim());
  log(`image ${IMAGE}: ${(size / 1e6).toFixed(0)} MB (base ${(baseSize / 1e6).toFixed(0)} MB), built in ${((tImage - tBase) / 1000).toFixed(0)} s`);
  for (const [ref, file] of [
    [REDIS_IMAGE, 'redis.Containerfile'],
    [POSTGRES_IMAGE, 'postgres.Containerfile'],
  ] as const) {
    made.images.push(ref);
    await podman(
      ['build', '--format', 'docker', '--layers=false', ...ULIMITS, '--build-arg', `BASE=${base}`, '-f', join(STANDINS, file), '-t', ref, STANDINS],
      {
        timeoutMs: 10 * MIN,
      },
    );
  }
  const tStandins = Date.now();

  await t.test('server --mock: /ready, a mock prove from the host, non-root, healthy, SIGTERM drains', async () => {
    const port = await freePort();
    const c = await runImage(
      'server',
      ['server', '--mock', '--ip', '127.0.0.1', '--port', String(port)],
      ['-e', 'SVC_DRAIN_TIMEOUT_MS=20000', '--unsetenv', 'NODE_EXTRA_CA_CERTS'],
    );
    await waitFor(async () => (await get(port, '/ready'))?.status === 200, 'the server in the container ready', { timeoutMs: 2 * MIN, intervalMs: 200 }).catch(
      async (e: Error) => assert.fail(`${e.message}\n${await logsOf(c)}`),
    );
    const body = proveBody();
    const r = await h1(port, 'POST', '/spells/prove', body, { 'content-type': 'application/json' });
    assertProved(r.status, r.body);
    // PID 1 is the server, run by the image's user
    const status = (await podman(['exec', c, 'cat', '/proc/1/status'])).stdout;
    assert.match(status, /^Uid:\s+10001\s+10001\s+10001\s+10001$/m);
    const cmdline = (await podman(['exec', c, 'cat', '/proc/1/cmdline'])).stdout.split('\0');
    assert.ok(cmdline.includes('server') && cmdline.some((a) => a.endsWith('/charms')), cmdline.join(' '));
    assert.equal(await healthy(c, MIN), 'healthy');

    // a request in progress (its body half sent) when SIGTERM comes
    const bytes = Buffer.from(body);
    const half = Math.floor(bytes.length / 2);
    let inflight!: http.ClientRequest;
    const answered = new Promise<{ status: number; body: Buffer }>((resolve, reject) => {
      inflight = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/spells/prove',
          agent: false,
          headers: { 'content-type': 'application/json', 'content-length': bytes.length },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => chunks.push(d));
          res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks) }));
        },
      );
      inflight.on('error', reject);
    });
    inflight.write(bytes.subarray(0, half));
    // in progress: the server holds the half body it has read
    const held = async () => Number(/^charms_inflight_body_bytes (\d+)$/m.exec((await get(port, '/metrics'))?.body.toString() ?? '')?.[1] ?? 0);
    await waitFor(async () => (await held()) >= half, 'the server reading the request', { timeoutMs: 10_000, intervalMs: 50 });
    const tTerm = Date.now();
    await podman(['kill', '--signal', 'TERM', c]);
    let fresh: Awaited<ReturnType<typeof get>>;
    await waitFor(async () => (fresh = await get(port, '/ready'))?.status === 503, 'a 503 for new requests while draining', {
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    assert.equal(json(fresh!.body).code, 'SERVER_BUSY');
    inflight.end(bytes.subarray(half));
    const a = await answered;
    assertProved(a.status, a.body);
    const code = await podman(['wait', c], { timeoutMs: 30_000 });
    assert.equal(code.stdout.trim(), '0', 'the server exits 0 after draining');
    log(`SIGTERM to exit: ${Date.now() - tTerm} ms`);
    assert.match(await logsOf(c), /"msg":"drained","finished":1,"cut":0/);
  });

  await t.test('index against the fake node on the host: /v1/status reaches the tip and follows it; healthy', async () => {
    const fake = await FakeBitcoind.start();
    try {
      const v = bitcoinVectors();
      for (const names of VECTOR_BLOCKS) fake.mine(names.map((n) => v.get(n)!.raw));
      chmodSync(fake.cookieFile!, 0o644); // readable by the image's user
      const port = await freePort();
      const c = await runImage(
        'index',
        ['index', '--rpc-url', fake.rpcUrl, '--rpc-cookie', '/run/bitcoin/cookie', '--ip', '127.0.0.1', '--port', String(port), '--poll-interval', '1'],
        ['-v', `${fake.cookieFile}:/run/bitcoin/cookie:ro`],
      );
      const atTip = async (height: number) => {
        const r = await get(port, '/v1/status');
        if (r?.status !== 200) return false;
        const s = json(r.body);
        return s.index.height === height && s.node.height === height && s.lag_blocks === 0 && s.network === 'regtest';
      };
      await waitFor(() => atTip(fake.height), `the index at the node's tip ${fake.height}`, { timeoutMs: 2 * MIN, intervalMs: 250 }).catch(async (e: Error) =>
        assert.fail(`${e.message}\n${await logsOf(c)}`),
      );
      fake.mine([]);
      await waitFor(() => atTip(fake.height), `the index following to ${fake.height}`, { timeoutMs: MIN, intervalMs: 250 });
      assert.match((await podman(['exec', c, 'cat', '/proc/1/status'])).stdout, /^Uid:\s+10001\s/m);
      assert.equal(await healthy(c, MIN), 'healthy');
      // the default database is in the volume
      assert.equal((await podman(['exec', c, 'test', '-s', '/data/charms-ts/index-regtest.sqlite'], { allowFail: true })).code, 0);
      await podman(['stop', '-t', '30', c], { timeoutMs: MIN });
      assert.equal((await podman(['inspect', '--format', '{{.State.ExitCode}}', c])).stdout.trim(), '0');
    } finally {
      await fake.stop();
    }
  });

  await t.test('podman-compose up of compose.yaml: one request through the prover (Redis), the index (PostgreSQL) and its --api-only reader', async () => {
    const fake = await FakeBitcoind.start();
    let proxy: Awaited<ReturnType<typeof startTcpProxy>> | undefined;
    try {
      const v = bitcoinVectors();
      for (const names of VECTOR_BLOCKS) fake.mine(names.map((n) => v.get(n)!.raw));
      chmodSync(fake.cookieFile!, 0o644);
      writeFileSync(
        join(made.dir, 'override.yaml'),
        `services:\n  redis:\n    image: ${REDIS_IMAGE}\n  postgres:\n    image: ${POSTGRES_IMAGE}\n  prover:\n    environment:\n      MOCK: "1"\n`,
      );
      const ports = { prover: await freePort(), index: await freePort(), api: await freePort() };
      composeEnv = {
        CHARMS_IMAGE: IMAGE,
        CACHE_SECRET: randomBytes(32).toString('hex'),
        POSTGRES_PASSWORD: randomBytes(16).toString('hex'),
        // set below, once the network's gateway is known
        BITCOIN_RPC_URL: 'http://host.containers.internal:1',
        BITCOIN_RPC_COOKIE_FILE: fake.cookieFile!,
        BITCOIN_NETWORK: 'regtest',
        PROVER_PORT: String(ports.prover),
        INDEX_PORT: String(ports.index),
        INDEX_API_PORT: String(ports.api),
        LOG_LEVEL: 'info',
      };
      made.compose = true;
      const name = (s: string) => `${PROJECT}_${s}_1`;
      // the databases first, waited on (podman-compose 1.0.3 does not wait on depends_on conditions)
      await compose(['up', '-d', '--no-build', 'redis', 'postgres'], 3 * MIN);
      assert.equal(await healthy(name('redis'), MIN), 'healthy');
      assert.equal(await healthy(name('postgres'), 2 * MIN), 'healthy');
      // the node on the host, reached from the compose network at its gateway (host.containers.internal)
      // podman 4's inspect: `subnets: [{subnet, gateway}]` (CNI and netavark alike)
      const net0 = json(Buffer.from((await podman(['network', 'inspect', `${PROJECT}_default`])).stdout))[0] as { subnets?: { gateway?: string }[] };
      const gateway = net0.subnets?.[0]?.gateway;
      assert.ok(gateway, `no gateway in podman network inspect ${PROJECT}_default: ${JSON.stringify(net0)}`);
      proxy = await startTcpProxy(fake.port, gateway);
      composeEnv.BITCOIN_RPC_URL = `http://host.containers.internal:${proxy.port}`;
      await compose(['up', '-d', '--no-build', 'prover', 'index'], 3 * MIN);
      await waitFor(async () => (await get(ports.prover, '/ready'))?.status === 200, 'the prover ready', { timeoutMs: 2 * MIN, intervalMs: 250 }).catch(
        async (e: Error) => assert.fail(`${e.message}\n${await logsOf(name('prover'))}`),
      );
      const r = await h1(ports.prover, 'POST', '/spells/prove', proveBody(), { 'content-type': 'application/json' });
      assertProved(r.status, r.body);
      // the answer went to the Redis cache
      await waitFor(async () => Number((await podman(['exec', name('redis'), 'redis-cli', 'dbsize'])).stdout.trim()) > 0, 'the proof cached in Redis', {
        timeoutMs: 10_000,
        intervalMs: 200,
      });
      assert.equal(await healthy(name('prover'), MIN), 'healthy');
      const tipOf = async (port: number) => {
        const s = await get(port, '/v1/status');
        return s?.status === 200 ? json(s.body) : undefined;
      };
      const st = await waitFor(
        async () => ((await tipOf(ports.index))?.index.height === fake.height ? tipOf(ports.index) : undefined),
        'the index at the tip',
        {
          timeoutMs: 2 * MIN,
          intervalMs: 500,
        },
      ).catch(async (e: Error) => assert.fail(`${e.message}\n${await logsOf(name('index'))}`));
      assert.equal(st.db.engine, 'postgres');
      assert.equal(st.lag_blocks, 0);
      assert.equal(await healthy(name('index'), MIN), 'healthy');
      await compose(['up', '-d', '--no-build', 'index-api'], 3 * MIN);
      const api = await waitFor(() => tipOf(ports.api), 'the --api-only reader answering', { timeoutMs: 2 * MIN, intervalMs: 500 }).catch(async (e: Error) =>
        assert.fail(`${e.message}\n${await logsOf(name('index-api'))}`),
      );
      assert.equal(api.mode, 'api-only');
      assert.deepEqual([api.index.height, api.index.hash], [st.index.height, st.index.hash], 'the reader serves what the writer wrote');
      await composeDown(40);
      const left = await podman(['ps', '-a', '-q', '--filter', `label=io.podman.compose.project=${PROJECT}`]);
      assert.equal(left.stdout.trim(), '', 'compose down removed the containers');
    } finally {
      await proxy?.close();
      await fake.stop();
    }
  });
  log(
    `base ${((tBase - t0) / 1000).toFixed(0)} s, image ${((tImage - tBase) / 1000).toFixed(0)} s, stand-ins ${((tStandins - tImage) / 1000).toFixed(0)} s, runs ${((Date.now() - tStandins) / 1000).toFixed(0)} s`,
  );
});
