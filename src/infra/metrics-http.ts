/**
 * `GET /metrics` of both servers: per-request metrics (route, method, status, latency) and the
 * scrape answer, on the server's own port or on a listener of its own (`SVC_METRICS_ADDR`).
 */
import { enableMetrics, httpDuration, httpRequests, metricsText } from '../util/metrics.js';
import { listenDual, listenFailure, type Handler, type Listening, type RequestObserver, type Res } from './http.js';
import type { ServerLimits } from '../settings/limits.js';

export { enableMetrics };

/** Records each answered request under `server` with a route label from `routeOf` (bounded: never the raw path). */
export function requestObserver(server: string, routeOf: (path: string) => string): RequestObserver {
  return ({ method, path }, status, seconds) => {
    const route = routeOf(path);
    const m = /^(GET|HEAD|POST|PUT|DELETE|OPTIONS|PATCH)$/.test(method) ? method : 'OTHER';
    httpRequests.inc({ server, route, method: m, status: String(status) });
    httpDuration.observe({ server, route, method: m }, seconds);
  };
}

/** The scrape answer (Prometheus text format). */
export async function metricsResponse(): Promise<Res> {
  const { contentType, body } = await metricsText();
  return { status: 200, headers: { 'content-type': contentType, 'cache-control': 'no-store' }, body };
}

/**
 * A listener that answers `GET /metrics` only (for `SVC_METRICS_ADDR=host:port`): on the shared
 * transport, so it has every server's limits (the per-address connection cap, the header
 * deadline, trusted proxies: `limits`, from the settings loader).
 */
export async function startMetricsServer(host: string, port: number, limits?: Partial<ServerLimits>): Promise<Listening> {
  await enableMetrics();
  const onlyMetrics: Handler = (req) =>
    (req.method === 'GET' || req.method === 'HEAD') && req.path === '/metrics'
      ? metricsResponse().catch(() => ({ status: 500, headers: { 'content-type': 'text/plain' }, body: 'metrics unavailable\n' }))
      : { status: 404, headers: { 'content-type': 'text/plain' }, body: 'only GET /metrics here\n' };
  try {
    return await listenDual(onlyMetrics, { host, port, limits: limits ?? {} });
  } catch (e) {
    throw relabel(e, host, port);
  }
}

/** listenDual names `--port` in its refusals; this port is SVC_METRICS_ADDR's. */
function relabel(e: unknown, host: string, port: number): unknown {
  const cause = e instanceof Error ? e.cause : undefined;
  return cause === undefined ? e : listenFailure(cause, host, port, 'SVC_METRICS_ADDR');
}
