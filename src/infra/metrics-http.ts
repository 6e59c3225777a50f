/**
 * `GET /metrics` of both servers: per-request metrics (route, method, status, latency) and the
 * scrape answer, on the server's own port or on a listener of its own (`SVC_METRICS_ADDR`).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { enableMetrics, httpDuration, httpRequests, metricsText } from '../util/metrics.js';
import { listenFailure, type Listening, type RequestObserver, type Res } from './http.js';

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

/** A listener that answers `GET /metrics` only (for `SVC_METRICS_ADDR=host:port`). */
export async function startMetricsServer(host: string, port: number): Promise<Listening> {
  await enableMetrics();
  const server = http.createServer((req, res) => {
    if ((req.method === 'GET' || req.method === 'HEAD') && (req.url ?? '').split('?')[0] === '/metrics') {
      metricsResponse().then(
        (r) => res.writeHead(200, r.headers).end(req.method === 'HEAD' ? undefined : r.body),
        () => res.writeHead(500).end(),
      );
    } else res.writeHead(404, { 'content-type': 'text/plain' }).end('only GET /metrics here\n');
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 15_000;
  server.maxConnections = 64;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e) => reject(listenFailure(e, host, port, 'SVC_METRICS_ADDR')));
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => 0,
    drain: async () => ({ finished: 0, cut: 0 }),
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
