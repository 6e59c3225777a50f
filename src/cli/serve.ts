/**
 * The start-up both servers (`server`, `query-server`) share: address and port from the flags, a
 * logger at the settings' level, the WASM pairing backend, the proof cache of the settings; then
 * `start` builds and starts the service, and the process serves until SIGINT/SIGTERM.
 *
 * Stopping (the first signal): `stopping` aborts, so no new proof is paid for; the server keeps
 * its port but answers new requests 503, requests in progress get `SVC_DRAIN_TIMEOUT_MS` to
 * finish and the rest are answered 503; then the server and the cache close (releasing the
 * cache locks this process holds) and the process exits, even if some work still hangs. A second
 * signal exits at once.
 */
import { CharmsError } from '../errors.js';
import type { Settings } from '../settings/settings.js';
import { createCache, type ResponseCache } from '../infra/cache.js';
import { createLogger, type Logger } from '../infra/log.js';
import type { Listening } from '../infra/http.js';
import { useFastProofBackend } from '../groth16/init.js';
import { startMetricsServer } from '../infra/metrics-http.js';

export interface ServeDeps {
  host: string;
  port: number;
  log: Logger;
  cache: ResponseCache;
  /** Aborted at the first SIGTERM/SIGINT: work that would start a paid proof stops. */
  stopping: AbortSignal;
  /** Whether the server's own port answers `GET /metrics` (SVC_METRICS_ADDR). */
  metrics: 'public' | 'off';
}

export interface Started {
  server: Listening;
  /** The start-up log line, e.g. `Server running on 0.0.0.0:17784`, and its fields. */
  banner: string;
  fields: Record<string, unknown>;
}

/** `listen`: the server's `--ip` and `--port` (options.ts, `listenOptions`). */
export async function serve(listen: { ip: string; port: string }, settings: Settings, start: (d: ServeDeps) => Promise<Started>): Promise<void> {
  const port = Number(listen.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CharmsError('INVALID_INPUT', '--port: expected 0..65535');
  const host = listen.ip;
  const log = createLogger(settings.logLevel);
  const proofBackend = await useFastProofBackend((m) => log.warn(m), { mockProofs: settings.mock });
  log.debug('proof backend', { backend: proofBackend });
  const cache = createCache(settings.cacheUrl, log, {
    memoryBytes: settings.limits.cacheBytes,
    ...(settings.cacheSecret ? { secret: settings.cacheSecret } : {}),
  });
  const stopping = new AbortController();
  let started: Started;
  try {
    started = await start({ host, port, log, cache, stopping: stopping.signal, metrics: settings.metrics === 'public' ? 'public' : 'off' });
  } catch (e) {
    await cache.close(); // an open Redis connection would keep the failed process alive
    throw e;
  }
  const { server, banner, fields } = started;
  const m = settings.metrics;
  const metricsServer = typeof m === 'object' ? await startMetricsServer(m.host, m.port, settings.limits) : undefined;
  log.info(banner, {
    ...fields,
    metrics:
      typeof m === 'object' ? `http://${m.host.includes(':') ? `[${m.host}]` : m.host}:${metricsServer!.port}/metrics` : m === 'public' ? '/metrics' : 'off',
  });
  const signal = await untilSignal();
  const drainMs = settings.limits.drainTimeoutMs;
  log.info('shutting down: draining requests in progress', { signal, drainMs });
  // a second signal: exit at once
  const now = (s: NodeJS.Signals) => {
    log.warn('second signal: exiting at once', { signal: s });
    process.exit(130);
  };
  process.once('SIGINT', now);
  process.once('SIGTERM', now);
  stopping.abort();
  const { finished, cut } = await server.drain(drainMs);
  log.info('drained', { finished, cut });
  await metricsServer?.close();
  await server.close();
  await cache.close();
  // work that ignores the stop (a stalled download) must not keep the process alive
  setTimeout(() => process.exit(process.exitCode ?? 0), 1000).unref();
}

function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (s: NodeJS.Signals) => {
      process.removeListener('SIGINT', on);
      process.removeListener('SIGTERM', on);
      resolve(s);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}
