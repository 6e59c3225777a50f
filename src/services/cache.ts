/**
 * Caches for computed results (proofs, query answers) with deduplication of concurrent
 * identical work: in one process (shared in-flight promises) and, with Redis, across processes
 * (a `SET NX PX` lock; waiters poll for the winner's result). Failed computations are never
 * cached. If Redis is unreachable the cache steps aside and work is computed directly.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from './log.js';
import { silentLogger } from './log.js';
import { RedisClient } from './redis.js';

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
const RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";

export interface RedisCacheOptions {
  /** Lock expiry: after this, a dead winner's lock is taken over. */
  lockTtlMs?: number;
  /** How long results are kept. */
  resultTtlSec?: number;
  prefix?: string;
  log?: Logger;
}

export class RedisCache implements ProofCache {
  private readonly client: RedisClient;
  private readonly inflight = new Map<string, Promise<Uint8Array>>();
  private readonly lockTtlMs: number;
  private readonly resultTtlSec: number;
  private readonly prefix: string;
  private readonly log: Logger;

  constructor(url: string, o: RedisCacheOptions = {}) {
    this.client = new RedisClient(url);
    this.lockTtlMs = o.lockTtlMs ?? 600_000;
    this.resultTtlSec = o.resultTtlSec ?? 30 * 24 * 3600;
    this.prefix = o.prefix ?? 'svc:';
    this.log = o.log ?? silentLogger;
  }

  getOrCompute(key: string, compute: () => Promise<Uint8Array>): Promise<Uint8Array> {
    const running = this.inflight.get(key);
    if (running) return running;
    const p = this.shared(key, compute).finally(() => this.inflight.delete(key));
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
        const hit = await this.client.get(resultKey);
        if (hit) return new Uint8Array(hit);
        acquired = (await this.client.command('SET', lockKey, token, 'NX', 'PX', String(this.lockTtlMs))) === 'OK';
      } catch (e) {
        this.log.warn('cache unavailable, computing without it', { error: (e as Error).message });
        return compute();
      }
      if (acquired) {
        try {
          const v = await compute();
          await this.client.command('SET', resultKey, v, 'EX', String(this.resultTtlSec)).catch((e: Error) =>
            this.log.warn('could not store result in cache', { error: e.message }),
          );
          return v;
        } finally {
          await this.client.command('EVAL', RELEASE, '1', lockKey, token).catch(() => {});
        }
      }
      // Someone else is computing: wait for their result, or for their lock to go away.
      await sleep(delay);
      delay = Math.min(delay * 2, 250);
    }
  }

  async ready(): Promise<boolean> {
    try {
      return (await this.client.command('PING')) === 'PONG';
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.client.close();
  }
}

/** Redis at `url` (`Settings.cacheUrl`: `CACHE_URL`, alias `REDIS_URL`), else in-process. */
export function createCache(url: string | undefined, log?: Logger, opts: RedisCacheOptions = {}): ProofCache {
  return url ? new RedisCache(url, { ...opts, ...(log ? { log } : {}) }) : new MemoryCache();
}
