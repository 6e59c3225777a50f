/**
 * What one server process accepts from its clients, so that its memory and descriptors are a
 * function of this configuration, not of the clients. Both servers (prove and query) use it; the
 * values come from the environment (`SVC_*`, see docs/server.md "Limits").
 */
import { CharmsError } from '../errors.js';
import { ENV_NAMES, envValue, type Env } from './env.js';

export interface ServerLimits {
  /** Largest request body a route may accept; more is refused with 413 as soon as it is declared or received. */
  maxBodyBytes: number;
  /** Request bodies held in memory at once, all connections together; past it a request gets 503 (retry). */
  inflightBodyBytes: number;
  /** Open client connections; further connections are closed at once. */
  maxConnections: number;
  /** From connecting (or the end of the previous request) to complete request headers, h2 preface included. */
  headersTimeoutMs: number;
  /** From a request's headers to the end of its body (408 after it). */
  bodyTimeoutMs: number;
  /** A connection (HTTP/1.1 keep-alive, or an h2 session) with no request in progress is closed after this. */
  idleTimeoutMs: number;
  /** Concurrent requests (streams) on one HTTP/2 connection. */
  maxStreamsPerConnection: number;
  /** Bytes of answers the in-process cache keeps (proofs; the query service's spells). */
  cacheBytes: number;
  /** After SIGTERM/SIGINT: how long requests in progress may take to finish before they are answered 503. */
  drainTimeoutMs: number;
}

export const DEFAULT_SERVER_LIMITS: Readonly<ServerLimits> = {
  maxBodyBytes: 32 * 1024 * 1024,
  inflightBodyBytes: 256 * 1024 * 1024,
  maxConnections: 512,
  headersTimeoutMs: 20_000,
  bodyTimeoutMs: 60_000,
  idleTimeoutMs: 15_000,
  maxStreamsPerConnection: 100,
  cacheBytes: 64 * 1024 * 1024,
  drainTimeoutMs: 30_000,
};

/** The limits from the environment (positive integers), defaults for the unset ones. */
export function limitsOf(env: Env): ServerLimits {
  const out: ServerLimits = { ...DEFAULT_SERVER_LIMITS };
  for (const k of Object.keys(DEFAULT_SERVER_LIMITS) as (keyof ServerLimits)[]) {
    const raw = envValue(env, ENV_NAMES[k]);
    if (raw === undefined) continue;
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n <= 0) throw new CharmsError('CONFIG', `${ENV_NAMES[k][0]} must be a positive integer, got ${JSON.stringify(raw)}`);
    out[k] = n;
  }
  return out;
}
