/**
 * What one server process accepts from its clients, so that its memory and descriptors are a
 * function of this configuration, not of the clients. Both servers (prove and query) use it; the
 * values come from the environment (`SVC_*`, see docs/server.md "Limits").
 */
import net from 'node:net';
import { CharmsError } from '../errors.js';
import { ENV_NAMES, envValue, type Env } from './env.js';

export interface ServerLimits {
  /** Largest request body a route may accept; more is refused with 413 as soon as it is declared or received. */
  maxBodyBytes: number;
  /** Request bodies held in memory at once, all connections together; past it a request gets 503 (retry). */
  inflightBodyBytes: number;
  /** Open client connections; further connections are closed at once. */
  maxConnections: number;
  /**
   * Open connections from one client address (a trusted proxy's: requests in progress of one
   * client its `X-Forwarded-For` names); past it the client's new connections are closed at once
   * (its requests answered 429), so one client cannot take every slot of `maxConnections`.
   */
  maxConnectionsPerClient: number;
  /**
   * Addresses (or CIDR blocks) of reverse proxies whose `X-Forwarded-For` is believed: their own
   * connections are not capped per address; the clients they name are, each by itself.
   */
  trustedProxies: readonly TrustedProxy[];
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

/** One `SVC_TRUSTED_PROXIES` entry: an address and its prefix length (32 or 128 for one address). */
interface TrustedProxy {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

export const DEFAULT_SERVER_LIMITS: Readonly<ServerLimits> = {
  maxBodyBytes: 32 * 1024 * 1024,
  inflightBodyBytes: 256 * 1024 * 1024,
  maxConnections: 512,
  maxConnectionsPerClient: 128,
  trustedProxies: [],
  headersTimeoutMs: 20_000,
  bodyTimeoutMs: 60_000,
  idleTimeoutMs: 15_000,
  maxStreamsPerConnection: 100,
  cacheBytes: 64 * 1024 * 1024,
  drainTimeoutMs: 30_000,
};

/** The limits from the environment (positive integers; proxies a list), defaults for the unset ones. */
export function limitsOf(env: Env): ServerLimits {
  const out: ServerLimits = { ...DEFAULT_SERVER_LIMITS, trustedProxies: trustedProxiesOf(envValue(env, ENV_NAMES.trustedProxies)) };
  for (const k of Object.keys(DEFAULT_SERVER_LIMITS) as (keyof ServerLimits)[]) {
    if (k === 'trustedProxies') continue; // a list, read above
    const raw = envValue(env, ENV_NAMES[k]);
    if (raw === undefined) continue;
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n <= 0) throw new CharmsError('CONFIG', `${ENV_NAMES[k][0]} must be a positive integer, got ${JSON.stringify(raw)}`);
    out[k] = n;
  }
  return out;
}

/**
 * `SVC_TRUSTED_PROXIES`: addresses or CIDR blocks separated by commas or spaces (`10.0.0.0/8`,
 * `172.17.0.1`, `::1`, `fd00::/8`). An IPv4 entry also matches its IPv4-mapped IPv6 form.
 */
function trustedProxiesOf(raw: string | undefined): TrustedProxy[] {
  if (raw === undefined) return [];
  return raw
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((entry) => {
      const [address = '', bits, extra] = entry.split('/');
      const family = net.isIPv4(address) ? 'ipv4' : net.isIPv6(address) ? 'ipv6' : undefined;
      const max = family === 'ipv4' ? 32 : 128;
      const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
      if (family === undefined || extra !== undefined || !(prefix >= 0 && prefix <= max))
        throw new CharmsError(
          'CONFIG',
          `SVC_TRUSTED_PROXIES: ${JSON.stringify(entry)} is not an IP address or CIDR block (e.g. 172.17.0.1, 10.0.0.0/8, fd00::/8); separate entries with commas`,
        );
      return { address, prefix, family };
    });
}
