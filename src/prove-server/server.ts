/**
 * The proving service's HTTP surface: `POST /spells/prove` (JSON or CBOR by Content-Type, answer
 * in the same format) and `GET /ready`. Errors are JSON `{error, code}`, status by error code.
 */
import { createHash } from 'node:crypto';
import { CharmsError, HTTP_STATUS } from '../errors.js';
import { errorResponse, jsonError, listenDual, type Listening, type Res } from '../infra/http.js';
import type { ResponseCache } from '../infra/cache.js';
import { silentLogger, type Logger } from '../infra/log.js';
import { bodyHandler, proveResponseNotice } from '../prover/service.js';
import { proveServiceFor } from '../prover/setup.js';
import { ProofWorkers } from '../prover/proof-workers.js';
import { configureRunner, runnerLimits } from '../runner/index.js';
import { MAX_RELAY_HOPS, RELAYED_BY_HEADER } from '../prover/client.js';
import { DEFAULT_SERVER_LIMITS, type ServerLimits } from '../settings/limits.js';
import type { RunnerSettings, Settings } from '../settings/settings.js';
import { cacheHitBytes, cacheHits, cacheMissBytes, cacheMisses } from '../util/metrics.js';
import { enableMetrics, metricsResponse, requestObserver } from '../infra/metrics-http.js';

const PROVE_ROUTES = new Set(['/spells/prove', '/ready', '/metrics']);
const proveRoute = (path: string): string => (PROVE_ROUTES.has(path) ? path : 'other');

const BODY_LIMIT = DEFAULT_SERVER_LIMITS.maxBodyBytes;

export type ProveFn = (req: { body: Uint8Array; format: 'json' | 'cbor'; relayedBy?: readonly string[] }) => Promise<Uint8Array>;

/** The relays a request passed (the hop header), refused when it contains ours or too many. */
function relayPath(header: unknown, relayId: string | undefined): string[] {
  const ids =
    typeof header === 'string'
      ? header
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : [];
  if (relayId && ids.includes(relayId))
    throw new CharmsError(
      'RELAY_LOOP',
      'relay loop: this server forwards prove requests to SVC_PROVE_API_URL, which leads back to this server; point SVC_PROVE_API_URL at a proving service (e.g. `charms server --mock`, `charms-prover server`, or the default hosted one), not at this server',
    );
  if (ids.length >= MAX_RELAY_HOPS) throw new CharmsError('RELAY_LOOP', `relay loop: the request already passed ${ids.length} relaying servers`);
  return ids;
}

interface ServerOptions {
  host?: string;
  port?: number;
  cache?: ResponseCache;
  log?: Logger;
  /** This server's id in the relay hop header when it relays (see prover/client.ts). */
  relayId?: string;
  /** Connection, timeout and body limits (defaults: settings/limits.ts). */
  limits?: Partial<ServerLimits>;
  /** `GET /metrics` on this port (default) or not (`off`: none, or served by a listener of its own). */
  metrics?: 'public' | 'off';
}

/** The HTTP surface over a prove function of your own. */
export interface ProveHttpOptions extends ServerOptions {
  prove: ProveFn;
  ready: () => Promise<boolean>;
  /**
   * Why the server cannot serve now (undefined: ready), said in the 503 of `GET /ready`; given,
   * it answers `/ready` instead of `ready`. `relayedBy`: the hop header of the readiness request.
   */
  unready?: (relayedBy: readonly string[]) => Promise<string | undefined>;
}

/** The server `charms server` (`charms-prover server`: `prover: true`) runs, from settings. */
export interface ProveServerOptions extends ServerOptions {
  /** `loadSettings(env, flags)`: prover, proof threads, mock mode; its `limits` unless `limits` is given. */
  settings: Settings;
  /** Prove here with the configured backends (`charms-prover`); otherwise a mock server proves here and any other relays to `SVC_PROVE_API_URL`. */
  prover?: boolean;
  /** Runner caps (`runnerSettingsOf(env)`); contracts always run in worker threads. */
  runner?: RunnerSettings;
  /** Aborted when the server stops: requests that have not reached their proof are refused (503). */
  stopping?: AbortSignal;
}

/** A started proving server; `description` names the prover behind it (`ProveService.description`). */
export type ProveServer = Listening & { description?: string };

/**
 * Starts the proving service: `POST /spells/prove`, `GET /ready`. Given `settings`, it is the
 * server `charms server` runs: the app runner in worker threads, proof threads for a local
 * prover, the prove service of the settings, closed together with the server. Given `prove` and
 * `ready`, only the HTTP surface over them.
 */
export function startProveServer(opts: ProveServerOptions | ProveHttpOptions): Promise<ProveServer> {
  return 'settings' in opts ? startConfigured(opts) : startHttp(opts);
}

async function startConfigured(opts: ProveServerOptions): Promise<ProveServer> {
  const { settings } = opts;
  const log = opts.log ?? silentLogger;
  // a server always runs contracts in its worker threads (wall-clock guard, event loop free)
  await configureRunner({ ...opts.runner, isolation: 'worker' }, log);
  const runner = runnerLimits();
  log.info('app runner limits', {
    memoryMiB: runner.memoryPages / 16,
    concurrency: runner.concurrency,
    workerHeapMb: runner.workerHeapMb,
    isolation: runner.isolation,
  });
  // proof threads for a local prover (a relay proves nothing here)
  const local = settings.prover.mock || opts.prover === true;
  const threads = local ? settings.prover.proofThreads : 0;
  const workers = threads > 0 ? new ProofWorkers(threads) : undefined;
  workers?.warm();
  log.info('proof threads', { threads });
  let service: Awaited<ReturnType<typeof proveServiceFor>>;
  let server: Listening;
  const cache = opts.cache;
  try {
    service = await proveServiceFor(settings.prover, opts.prover === true, log, workers, opts.stopping);
    const s = service;
    const unready = async (relayedBy: readonly string[]) =>
      (await s.unready(relayedBy)) ?? (cache && !(await cache.ready()) ? 'the cache (CACHE_URL) is not reachable' : undefined);
    server = await startHttp({
      ...(opts.host === undefined ? {} : { host: opts.host }),
      ...(opts.port === undefined ? {} : { port: opts.port }),
      prove: bodyHandler(service),
      ...(service.relayId ? { relayId: service.relayId } : {}),
      ready: async () => (await unready([])) === undefined,
      unready,
      ...(cache ? { cache } : {}),
      log,
      limits: opts.limits ?? settings.limits,
      ...(opts.metrics ? { metrics: opts.metrics } : {}),
    });
  } catch (e) {
    await workers?.close(); // no thread outlives a server that did not start
    throw e;
  }
  // what the threads loaded, once they have (a fallback to pure JS proves several times slower);
  // reported only once listening, so a failed start (EADDRINUSE) ends with its error
  workers?.backend().then(
    (backend) =>
      backend === 'mcl-wasm' ? log.info('proof thread backends', { backend }) : log.warn('proof thread backends: pure JS in part, slower', { backend }),
    (e: Error) => log.warn('proof thread backends unknown', { error: e.message }),
  );
  return {
    ...server,
    description: service.description,
    connections: () => server.connections(),
    close: async () => {
      await server.close();
      await workers?.close();
    },
  };
}

async function startHttp(opts: ProveHttpOptions): Promise<Listening> {
  const log = opts.log ?? silentLogger;
  const limit = opts.limits?.maxBodyBytes ?? BODY_LIMIT;
  await enableMetrics(); // a server records metrics whether or not this port serves them
  return listenDual(
    async (req) => {
      const t0 = performance.now();
      let res: Res;
      try {
        if (req.path === '/metrics' && req.method === 'GET' && opts.metrics !== 'off') res = await metricsResponse();
        else if (req.path === '/ready' && req.method === 'GET') {
          // a readiness request that came back through the relays is a loop (508), as a prove request
          const relayedBy = relayPath(req.headers[RELAYED_BY_HEADER], opts.relayId);
          const { unready } = opts;
          const reason = unready
            ? await unready(relayedBy).catch((e: unknown) => (e instanceof Error ? e.message : String(e)))
            : (await opts.ready().catch(() => false))
              ? undefined
              : '';
          res = {
            status: reason === undefined ? 200 : 503,
            headers: { 'content-type': 'text/plain' },
            body: reason === undefined ? 'OK' : reason ? `NOT READY: ${reason}` : 'NOT READY',
          };
        } else if (req.path === '/spells/prove' && req.method === 'POST') {
          const ct = String(req.headers['content-type'] ?? '');
          const format = ct.includes('application/cbor') ? 'cbor' : 'json';
          const body = await req.body(limit);
          let computed = false;
          // before the cache: a looped request would wait on its own in-flight twin forever
          const relayedBy = relayPath(req.headers[RELAYED_BY_HEADER], opts.relayId);
          const run = () => {
            computed = true;
            return opts.prove({ body, format, relayedBy });
          };
          const key = createHash('sha256').update(`${format}:`).update(body).digest('hex');
          const out = opts.cache ? await opts.cache.getOrCompute(key, run) : await run();
          if (opts.cache) {
            (computed ? cacheMisses : cacheHits).inc({ cache: 'proof' });
            (computed ? cacheMissBytes : cacheHitBytes).inc({ cache: 'proof' }, out.length);
          }
          res = {
            status: 200,
            headers: { 'content-type': format === 'cbor' ? 'application/cbor' : 'application/json', ...proveResponseNotice(out, format) },
            body: out,
          };
        } else if (req.path === '/spells/prove' || req.path === '/ready') {
          res = jsonError(HTTP_STATUS.METHOD_NOT_ALLOWED, 'METHOD_NOT_ALLOWED', `method ${req.method} not allowed on ${req.path}`);
        } else res = errorResponse(new CharmsError('NOT_FOUND', `no route for ${req.method} ${req.path}`), log);
      } catch (e) {
        res = errorResponse(e, log);
      }
      log.info('request', { method: req.method, path: req.path, status: res.status, ms: Math.round(performance.now() - t0) });
      return res;
    },
    {
      host: opts.host ?? '0.0.0.0',
      port: opts.port ?? 17784,
      log,
      ...(opts.limits ? { limits: opts.limits } : {}),
      observe: requestObserver('prove', proveRoute),
    },
  );
}
