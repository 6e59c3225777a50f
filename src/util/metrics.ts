/**
 * The process's Prometheus metrics, in one registry (prom-client), scraped at `GET /metrics` (the
 * proving server and the query service; docs/server.md "Metrics"). The metrics the servers share
 * are defined here; another component defines its own with `defineCounter` / `defineHistogram` /
 * `defineGauge`, or shows a state it owns (the runner's pools, the HTTP layer's body budget, the
 * index's height and lag) with `registerGauge`, read at scrape time.
 */
import { createRequire } from 'node:module';
import type { Registry } from 'prom-client';

type PromClient = typeof import('prom-client');
type Labels = Record<string, string>;

/**
 * prom-client is loaded only when a server enables metrics (`enableMetrics`): one-shot commands
 * never pay for it (it takes as long to load as ioredis). Until then every metric below is a
 * no-op; afterwards each forwards to its prom-client twin.
 */
let registry: Registry | undefined;
let enabling: Promise<void> | undefined;
const pending: ((pc: PromClient, r: Registry) => void)[] = [];

/** Creates a metric now if metrics are on, else when they are turned on. */
function define(make: (pc: PromClient, r: Registry) => void): void {
  pending.push(make);
  if (registry) void enableMetrics();
}

/**
 * prom-client through `require` (it is CommonJS): a dynamic `import()` of a package the bundle
 * keeps external is refused in the bundle's code-cached script (util/bundle.ts).
 */
const loadPromClient = (): PromClient => createRequire(import.meta.url)('prom-client') as PromClient;

/** Loads prom-client, creates every metric defined so far and the process metrics (`charms_process_…`). Idempotent. */
export function enableMetrics(): Promise<void> {
  enabling ??= Promise.resolve().then(() => {
    const pc = loadPromClient();
    registry = new pc.Registry();
    pc.collectDefaultMetrics({ register: registry, prefix: 'charms_' });
  });
  return enabling.then(() => {
    const pc = loadPromClient();
    for (const make of pending.splice(0)) make(pc, registry!);
  });
}

export interface CounterHandle {
  inc(labels: Labels, n?: number): void;
}
export interface HistogramHandle {
  observe(labels: Labels, value: number): void;
}
export interface GaugeHandle {
  inc(labels: Labels, n?: number): void;
  dec(labels: Labels, n?: number): void;
  set(labels: Labels, value: number): void;
}

function defineCounter(name: string, help: string, labelNames: readonly string[]): CounterHandle {
  let real: import('prom-client').Counter | undefined;
  define((pc, r) => void (real = new pc.Counter({ name, help, labelNames, registers: [r] })));
  return { inc: (l, n = 1) => real?.inc(l, n) };
}

function defineHistogram(name: string, help: string, labelNames: readonly string[], buckets: number[]): HistogramHandle {
  let real: import('prom-client').Histogram | undefined;
  define((pc, r) => void (real = new pc.Histogram({ name, help, labelNames, buckets, registers: [r] })));
  return { observe: (l, v) => real?.observe(l, v) };
}

function defineGauge(name: string, help: string, labelNames: readonly string[]): GaugeHandle {
  let real: import('prom-client').Gauge | undefined;
  define((pc, r) => void (real = new pc.Gauge({ name, help, labelNames, registers: [r] })));
  return { inc: (l, n = 1) => real?.inc(l, n), dec: (l, n = 1) => real?.dec(l, n), set: (l, v) => real?.set(l, v) };
}

export type GaugeSample = number | { labels: Labels; value: number }[];

/**
 * A gauge read at scrape time: `collect` returns its value, or one value per label set. For state
 * owned elsewhere (the HTTP layer's body budget, the worker pools, the index's height and lag).
 * Registering a name twice keeps the first.
 */
export function registerGauge(name: string, help: string, collect: () => GaugeSample, labelNames: readonly string[] = []): void {
  define((pc, r) => {
    if (r.getSingleMetric(name)) return;
    new pc.Gauge({
      name,
      help,
      labelNames,
      registers: [r],
      collect() {
        const v = collect();
        this.reset();
        if (typeof v === 'number') this.set(v);
        else for (const x of v) this.set(x.labels, x.value);
      },
    });
  });
}

/** The text exposition of every metric, and its content type. */
export async function metricsText(): Promise<{ contentType: string; body: string }> {
  await enableMetrics();
  return { contentType: registry!.contentType, body: await registry!.metrics() };
}

/** Seconds: from a cached answer (ms) to a network proof (minutes). */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

export const httpRequests = defineCounter('charms_http_requests_total', 'HTTP requests answered, by server, route, method and status', [
  'server',
  'route',
  'method',
  'status',
]);
export const httpDuration = defineHistogram(
  'charms_http_request_duration_seconds',
  'Time to answer an HTTP request, by server, route and method',
  ['server', 'route', 'method'],
  LATENCY_BUCKETS,
);

export const proofs = defineCounter('charms_proofs_total', 'Prove requests run (cache misses), by backend and outcome (ok or the error code)', [
  'backend',
  'outcome',
]);
export const proofDuration = defineHistogram('charms_proof_duration_seconds', 'Time to prove a request, by backend', ['backend'], LATENCY_BUCKETS);
export const proofsInFlight = defineGauge('charms_proofs_in_flight', 'Prove requests running, by backend', ['backend']);

export const networkStageDuration = defineHistogram(
  'charms_network_stage_duration_seconds',
  'Prover Network stages (request to downloaded proof), by stage and outcome',
  ['stage', 'outcome'],
  [1, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200],
);
export const networkRequests = defineCounter(
  'charms_network_requests_total',
  'Requests made to the Prover Network (gRPC methods, artifact uploads and downloads), by method and outcome',
  ['method', 'outcome'],
);

export const cacheHits = defineCounter('charms_cache_hits_total', 'Answers served from the cache (or from an identical request in flight), by cache', [
  'cache',
]);
export const cacheMisses = defineCounter('charms_cache_misses_total', 'Answers computed, by cache', ['cache']);
export const cacheHitBytes = defineCounter('charms_cache_hit_bytes_total', 'Bytes of answers served from the cache, by cache', ['cache']);
export const cacheMissBytes = defineCounter('charms_cache_miss_bytes_total', 'Bytes of answers computed (and offered to the cache), by cache', ['cache']);

/** Times `work` into a histogram/counter pair: outcome `ok` or the error's code. */
export async function timed<T>(work: () => Promise<T>, done: (seconds: number, outcome: string) => void): Promise<T> {
  const t0 = performance.now();
  try {
    const v = await work();
    done((performance.now() - t0) / 1000, 'ok');
    return v;
  } catch (e) {
    done((performance.now() - t0) / 1000, outcomeOf(e));
    throw e;
  }
}

/** A bounded label for a failure: its stable code (CharmsError, gRPC), else `error`. */
export function outcomeOf(e: unknown): string {
  const code = (e as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && /^[A-Z_]{1,40}$/.test(code)) return code;
  if (typeof code === 'number' && Number.isInteger(code) && code >= 0 && code < 64) return `grpc_${code}`;
  return 'error';
}
