/**
 * The start-up both servers (`server`, `query-server`) share: address and port from the flags, a
 * logger at the settings' level, the WASM pairing backend, the proof cache of the settings; then
 * `start` builds and starts the service, and the process serves until SIGINT/SIGTERM, closing the
 * server before the cache.
 */
import { CharmsError } from '../errors.js';
import type { Settings } from '../settings/settings.js';
import { createCache, type ProofCache } from '../services/cache.js';
import { createLogger, type Logger } from '../services/log.js';
import type { Listening } from '../services/http.js';
import { useFastProofBackend } from '../proof/init.js';
import { startMetricsServer } from '../services/metrics-http.js';
import { optString } from './io.js';
import type { ParsedArgs } from './define.js';

export interface ServeDeps {
  host: string;
  port: number;
  log: Logger;
  cache: ProofCache;
  /** Whether the server's own port answers `GET /metrics` (SVC_METRICS_ADDR). */
  metrics: 'public' | 'off';
}

export interface Started {
  server: Listening;
  /** The start-up log line, e.g. `Server running on 0.0.0.0:17784`, and its fields. */
  banner: string;
  fields: Record<string, unknown>;
}

export async function serve(a: ParsedArgs, settings: Settings, start: (d: ServeDeps) => Promise<Started>): Promise<void> {
  const port = Number(optString(a, 'port'));
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CharmsError('INVALID_INPUT', '--port: expected 0..65535');
  const host = optString(a, 'ip')!;
  const log = createLogger(settings.logLevel);
  const proofBackend = await useFastProofBackend((m) => log.warn(m), { mockProofs: settings.mock });
  log.debug('proof backend', { backend: proofBackend });
  const cache = createCache(settings.cacheUrl, log);
  const { server, banner, fields } = await start({ host, port, log, cache, metrics: settings.metrics === 'public' ? 'public' : 'off' });
  const m = settings.metrics;
  const metricsServer = typeof m === 'object' ? await startMetricsServer(m.host, m.port) : undefined;
  log.info(banner, { ...fields, metrics: typeof m === 'object' ? `http://${m.host.includes(':') ? `[${m.host}]` : m.host}:${metricsServer!.port}/metrics` : m === 'public' ? '/metrics' : 'off' });
  await untilSignal();
  log.info('shutting down');
  await metricsServer?.close();
  await server.close();
  await cache.close();
}

function untilSignal(): Promise<void> {
  return new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}
