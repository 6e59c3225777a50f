/**
 * Caches for computed results (proofs, query answers) with deduplication of concurrent
 * identical work: in one process (shared in-flight promises) and, with Redis, across processes
 * (a `SET NX PX` lock with a short lease its holder renews; waiters poll for the winner's result
 * and take over when the lease lapses). Failed computations are never cached. If Redis is
 * unreachable, paused or not Redis, the cache steps aside and work is computed directly.
 */
import { randomBytes } from 'node:crypto';
import { silentLogger, type Logger } from './log.js';
import { Redis } from 'ioredis';
import { CharmsError } from '../errors.js';
import { redactText } from '../util/redact.js';

export interface ProofCache {
  getOrCompute(key: string, compute: () => Promise<Uint8Array>): Promise<Uint8Array>;
  ready(): Promise<boolean>;
  close(): Promise<void>;
}

/** In-process LRU with in-flight dedup. */
export class MemoryCache implements ProofCache {
  private readonly entries = new Map<string, Uint8Array>();
  private readonly inflight = new Map<string, Promise<Uint8Array>>();
  constructor(private readonly maxEntries = 1000) {}

  async getOrCompute(key: string, compute: () => Promise<Uint8Array>): Promise<Uint8Array> {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit); // most recently used
      return hit;
    }
    const running = this.inflight.get(key);
    if (running) return running;
    const p = compute()
      .then((v) => {
        this.entries.set(key, v);
        if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
        return v;
      })
      .finally(() => this.inflight.delete(key));
    this.inflight.set(key, p);
    return p;
  }
  async ready(): Promise<boolean> {
    return true;
  }
  async close(): Promise<void> {}
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Deletes the lock only if we still hold it. */
const RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";
/** Extends the lease only if we still hold it. */
const RENEW = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end";

export interface RedisCacheOptions {
  /**
   * The lock's lease. The holder renews it every third of the lease while it computes (a real
   * network proof takes minutes), so a holder that dies is taken over after at most one lease.
   */
  leaseMs?: number;
  /** How long results are kept. */
  resultTtlSec?: number;
  prefix?: string;
  log?: Logger;
  /** One command's time limit (a paused or overloaded Redis). */
  commandTimeoutMs?: number;
  connectTimeoutMs?: number;
  /**
   * After a failure the cache steps aside: requests are computed directly and Redis is probed in
   * the background at this interval, so a dead or paused Redis costs at most one timeout, not
   * one per request.
   */
  probeIntervalMs?: number;
}

export const DEFAULT_LEASE_MS = 10_000;

/**
 * The Redis-backed cache, on ioredis (reconnects, timeouts, protocol errors and `rediss://` TLS
 * handled there). Any Redis failure — refused, timed out, not Redis at all — makes the cache step
 * aside until a background probe finds Redis answering again.
 */
export class RedisCache implements ProofCache {
  private readonly client: Redis;
  private readonly inflight = new Map<string, Promise<Uint8Array>>();
  private readonly leaseMs: number;
  private readonly resultTtlSec: number;
  private readonly prefix: string;
  private readonly log: Logger;
  private readonly probeIntervalMs: number;
  private down = false;
  private probe: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(url: string, o: RedisCacheOptions = {}) {
    this.leaseMs = o.leaseMs ?? DEFAULT_LEASE_MS;
    this.resultTtlSec = o.resultTtlSec ?? 30 * 24 * 3600;
    this.prefix = o.prefix ?? 'svc:';
    this.log = o.log ?? silentLogger;
    this.probeIntervalMs = o.probeIntervalMs ?? 2000;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new CharmsError('CONFIG', `CACHE_URL is not a URL: ${redactText(url)}`);
    }
    if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:')
      throw new CharmsError('CONFIG', `CACHE_URL must be a redis:// or rediss:// URL, got ${parsed.protocol}`);
    this.client = new Redis(url, {
      connectTimeout: o.connectTimeoutMs ?? 2000,
      commandTimeout: o.commandTimeoutMs ?? 1000,
      // fail a command at the first failed reconnect instead of retrying it: the cache steps aside
      maxRetriesPerRequest: 0,
      retryStrategy: (n: number) => (this.closed ? null : Math.min(100 * 2 ** n, 5000)),
      lazyConnect: false,
    });
    // ioredis reports connection and protocol errors here; without a listener they would crash the process
    this.client.on('error', (e: Error) => this.failed(e));
  }

  /** Marks Redis unusable (once) and starts probing it in the background. */
  private failed(e: unknown): void {
    if (this.down || this.closed) return;
    this.down = true;
    this.log.warn('cache unavailable: computing without it until Redis answers again', { error: redactText(e instanceof Error ? e.message : String(e)) });
    const tick = () => {
      this.probe = setTimeout(() => {
        this.client.ping().then(
          () => {
            this.down = false;
            this.probe = undefined;
            this.log.info('cache available again');
          },
          () => tick(),
        );
      }, this.probeIntervalMs);
      this.probe.unref();
    };
    tick();
  }

  getOrCompute(key: string, compute: () => Promise<Uint8Array>): Promise<Uint8Array> {
    const running = this.inflight.get(key);
    if (running) return running;
    const p = (this.down ? compute() : this.shared(key, compute)).finally(() => this.inflight.delete(key));
    this.inflight.set(key, p);
    return p;
  }

  private async shared(key: string, compute: () => Promise<Uint8Array>): Promise<Uint8Array> {
    const resultKey = `${this.prefix}result:${key}`;
    const lockKey = `${this.prefix}lock:${key}`;
    const token = randomBytes(16).toString('hex');
    let delay = 20;
    for (;;) {
      let acquired: boolean;
      try {
        const hit = await this.client.getBuffer(resultKey);
        if (hit) return new Uint8Array(hit);
        acquired = (await this.client.set(lockKey, token, 'PX', this.leaseMs, 'NX')) === 'OK';
      } catch (e) {
        this.failed(e);
        return compute();
      }
      if (acquired) return this.computeHolding(lockKey, token, resultKey, compute);
      if (this.down) return compute();
      // Someone else is computing: wait for their result, or for their lease to lapse.
      await sleep(delay);
      delay = Math.min(delay * 2, 250);
    }
  }

  private async computeHolding(lockKey: string, token: string, resultKey: string, compute: () => Promise<Uint8Array>): Promise<Uint8Array> {
    const renew = setInterval(() => {
      this.client.eval(RENEW, 1, lockKey, token, String(this.leaseMs)).then(
        (r) => {
          if (r !== 1) this.log.warn('lost the cache lock while computing (another process may compute the same result)', { key: lockKey });
        },
        () => {}, // Redis trouble: reported by the error listener / next command
      );
    }, Math.max(1, Math.floor(this.leaseMs / 3)));
    renew.unref();
    try {
      const v = await compute();
      if (!this.down)
        await this.client.set(resultKey, Buffer.from(v), 'EX', this.resultTtlSec).catch((e: Error) => this.log.warn('could not store result in cache', { error: e.message }));
      return v;
    } finally {
      clearInterval(renew);
      if (!this.down) await this.client.eval(RELEASE, 1, lockKey, token).catch(() => {});
    }
  }

  async ready(): Promise<boolean> {
    if (this.down) return false;
    try {
      return (await this.client.ping()) === 'PONG';
    } catch (e) {
      this.failed(e);
      return false;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.probe) clearTimeout(this.probe);
    this.client.disconnect();
  }
}

/** Redis at `url` (`Settings.cacheUrl`: `CACHE_URL`, alias `REDIS_URL`), else in-process. */
export function createCache(url: string | undefined, log?: Logger, opts: RedisCacheOptions = {}): ProofCache {
  return url ? new RedisCache(url, { ...opts, ...(log ? { log } : {}) }) : new MemoryCache();
}
