/**
 * Caches for computed results (proofs, query answers) with deduplication of concurrent
 * identical work: in one process (shared in-flight promises) and, with Redis, across processes
 * (a `SET NX PX` lock with a short lease its holder renews; waiters poll for the winner's result
 * and take over when the lease lapses). Failed computations are never cached. If Redis is
 * unreachable, paused or not Redis, the cache steps aside and work is computed directly.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Logger } from './log.js';
import { silentLogger } from './log.js';
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import { CharmsError } from '../errors.js';
import { redactText } from '../util/redact.js';

export interface ResponseCache {
  getOrCompute(key: string, compute: () => Promise<Uint8Array>): Promise<Uint8Array>;
  ready(): Promise<boolean>;
  close(): Promise<void>;
}

export interface MemoryCacheOptions {
  /** Most entries kept (default 1 000). */
  maxEntries?: number;
  /** Most bytes of results kept, all entries together (default DEFAULT_CACHE_BYTES); a larger result is not kept. */
  maxBytes?: number;
}

/** Default byte bound of an in-process cache (`SVC_CACHE_BYTES`). */
export const DEFAULT_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * In-process LRU with in-flight dedup, bounded by entry count and by bytes: a result is kept in a
 * buffer of its own size (never as a view pinning a larger one), and the least recently used
 * entries go until both bounds hold.
 */
export class MemoryCache implements ResponseCache {
  private readonly entries = new Map<string, Uint8Array>();
  private readonly inflight = new Map<string, Promise<Uint8Array>>();
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  private held = 0;
  constructor(o: MemoryCacheOptions | number = {}) {
    const opts = typeof o === 'number' ? { maxEntries: o } : o;
    this.maxEntries = opts.maxEntries ?? 1000;
    this.maxBytes = opts.maxBytes ?? DEFAULT_CACHE_BYTES;
  }

  /** Bytes of results held. */
  get bytes(): number {
    return this.held;
  }
  get size(): number {
    return this.entries.size;
  }

  /** The kept result of `key` (now the most recently used), without computing anything. */
  get(key: string): Uint8Array | undefined {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit); // most recently used
    }
    return hit;
  }

  /** Whether a computation of `key` started by getOrCompute is running. */
  computing(key: string): boolean {
    return this.inflight.has(key);
  }

  /** Keeps `v` as the result of `key`, as getOrCompute keeps what it computed. */
  set(key: string, v: Uint8Array): void {
    this.keep(key, v);
  }

  async getOrCompute(key: string, compute: () => Promise<Uint8Array>): Promise<Uint8Array> {
    const hit = this.get(key);
    if (hit) return hit;
    const running = this.inflight.get(key);
    if (running) return running;
    const p = compute()
      .then((v) => {
        this.keep(key, v);
        return v;
      })
      .finally(() => this.inflight.delete(key));
    this.inflight.set(key, p);
    return p;
  }

  private keep(key: string, v: Uint8Array): void {
    const cost = v.byteLength + key.length;
    if (cost > this.maxBytes) return;
    // a view into a larger buffer would pin all of it
    const own = v.byteOffset === 0 && v.byteLength === v.buffer.byteLength ? v : v.slice();
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.held -= old.byteLength + key.length;
    }
    this.entries.set(key, own);
    this.held += cost;
    while (this.entries.size > this.maxEntries || this.held > this.maxBytes) {
      const [k, e] = this.entries.entries().next().value!;
      this.entries.delete(k);
      this.held -= e.byteLength + k.length;
    }
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
/**
 * Gives a lock no server could have written (no expiry, or a longer one than a lease) the lease,
 * so it lapses like a dead holder's. 1 when it did.
 */
const TAME = "local t = redis.call('PTTL', KEYS[1]) if t == -1 or t > tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) return 1 end return 0";

/** Stored results: MAGIC ‖ HMAC-SHA256(secret, key ‖ 0 ‖ value) ‖ value. */
const ENTRY_MAGIC = Buffer.from('cs1');
const TAG_LEN = 32;

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
  /**
   * The key results are authenticated with (`CACHE_SECRET`, the same on every server sharing the
   * Redis). Without it a random key of this process: its results are served back to it only, and
   * other processes recompute theirs. An entry that does not authenticate is never served.
   */
  secret?: Uint8Array | string;
  /**
   * The longest a request waits for another process's lock before computing itself (default 30
   * min): a holder renews its lease while it works, so only this bounds a wait on a live one.
   */
  maxLockWaitMs?: number;
}

export const DEFAULT_LEASE_MS = 10_000;

/**
 * The Redis-backed cache, on ioredis (reconnects, timeouts, protocol errors and `rediss://` TLS
 * handled there). Any Redis failure — refused, timed out, not Redis at all — makes the cache step
 * aside until a background probe finds Redis answering again.
 */
/** ioredis, loaded by the first Redis cache only: importing the package, or a server without CACHE_URL, does not load it. */
const loadIoredis = (): typeof import('ioredis') => createRequire(import.meta.url)('ioredis') as typeof import('ioredis');

export class RedisCache implements ResponseCache {
  private readonly client: Redis;
  private readonly inflight = new Map<string, Promise<Uint8Array>>();
  private readonly leaseMs: number;
  private readonly resultTtlSec: number;
  private readonly prefix: string;
  private readonly log: Logger;
  private readonly probeIntervalMs: number;
  private readonly secret: Uint8Array | string;
  private readonly maxLockWaitMs: number;
  private down = false;
  private probe: NodeJS.Timeout | undefined;
  private closed = false;
  /** Locks this process holds (key → token), released at close even if their work still runs. */
  private readonly locks = new Map<string, string>();

  constructor(url: string, o: RedisCacheOptions = {}) {
    this.leaseMs = o.leaseMs ?? DEFAULT_LEASE_MS;
    this.resultTtlSec = o.resultTtlSec ?? 30 * 24 * 3600;
    this.prefix = o.prefix ?? 'svc:';
    this.log = o.log ?? silentLogger;
    this.probeIntervalMs = o.probeIntervalMs ?? 2000;
    this.maxLockWaitMs = o.maxLockWaitMs ?? 30 * 60_000;
    if (o.secret === undefined || o.secret.length === 0) {
      this.secret = randomBytes(32);
      this.log.warn(
        'CACHE_SECRET is not set: results in Redis are authenticated with a key of this process only, so other servers sharing the Redis recompute them; set the same CACHE_SECRET on every server',
      );
    } else this.secret = o.secret;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new CharmsError('CONFIG', `CACHE_URL is not a URL: ${redactText(url)}`);
    }
    if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:')
      throw new CharmsError('CONFIG', `CACHE_URL must be a redis:// or rediss:// URL, got ${parsed.protocol}`);
    this.client = new (loadIoredis().Redis)(url, {
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
    const started = performance.now();
    let delay = 20;
    for (;;) {
      let acquired: boolean;
      try {
        const hit = await this.client.getBuffer(resultKey);
        const v = hit && this.open(resultKey, hit);
        if (v) return v;
        acquired = (await this.client.set(lockKey, token, 'PX', this.leaseMs, 'NX')) === 'OK';
        if (!acquired && (await this.client.eval(TAME, 1, lockKey, String(this.leaseMs))) === 1)
          this.log.warn("cache lock without a lease (not written by a server): given one, it lapses like a dead holder's", { key: lockKey });
      } catch (e) {
        this.failed(e);
        return compute();
      }
      if (acquired) return this.computeHolding(lockKey, token, resultKey, compute);
      if (this.down) return compute();
      if (performance.now() - started > this.maxLockWaitMs) {
        this.log.warn("waited too long for another process's cache lock: computing without it", { key: lockKey, waitedMs: this.maxLockWaitMs });
        return compute();
      }
      // Someone else is computing: wait for their result, or for their lease to lapse.
      await sleep(delay);
      delay = Math.min(delay * 2, 250);
    }
  }

  private tag(resultKey: string, value: Uint8Array): Buffer {
    return createHmac('sha256', this.secret).update(resultKey).update(Uint8Array.of(0)).update(value).digest();
  }

  /** The stored form of a result: authenticated for its key. */
  private seal(resultKey: string, value: Uint8Array): Buffer {
    return Buffer.concat([ENTRY_MAGIC, this.tag(resultKey, value), value]);
  }

  /** The result in a stored entry, or undefined when it does not authenticate (forged, garbage, another secret). */
  private open(resultKey: string, stored: Buffer): Uint8Array | undefined {
    const at = ENTRY_MAGIC.length + TAG_LEN;
    if (stored.length >= at && stored.subarray(0, ENTRY_MAGIC.length).equals(ENTRY_MAGIC)) {
      const value = stored.subarray(at);
      if (timingSafeEqual(stored.subarray(ENTRY_MAGIC.length, at), this.tag(resultKey, value))) return new Uint8Array(value);
    }
    this.log.warn('cache entry does not authenticate (forged, damaged, or written with another CACHE_SECRET): ignored', { key: resultKey });
    return undefined;
  }

  private async computeHolding(lockKey: string, token: string, resultKey: string, compute: () => Promise<Uint8Array>): Promise<Uint8Array> {
    const renew = setInterval(
      () => {
        this.client.eval(RENEW, 1, lockKey, token, String(this.leaseMs)).then(
          (r) => {
            if (r !== 1) this.log.warn('lost the cache lock while computing (another process may compute the same result)', { key: lockKey });
          },
          () => {}, // Redis trouble: reported by the error listener / next command
        );
      },
      Math.max(1, Math.floor(this.leaseMs / 3)),
    );
    renew.unref();
    this.locks.set(lockKey, token);
    try {
      const v = await compute();
      if (!this.down)
        await this.client
          .set(resultKey, this.seal(resultKey, v), 'EX', this.resultTtlSec)
          .catch((e: Error) => this.log.warn('could not store result in cache', { error: e.message }));
      return v;
    } finally {
      clearInterval(renew);
      this.locks.delete(lockKey);
      if (!this.down && !this.closed) await this.client.eval(RELEASE, 1, lockKey, token).catch(() => {});
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
    // a stopping server releases its locks: others take the work over at once, not after a lease
    if (!this.down) await Promise.all([...this.locks].map(([k, t]) => this.client.eval(RELEASE, 1, k, t).catch(() => {})));
    this.locks.clear();
    this.client.disconnect();
  }
}

/**
 * Redis at `url` (`Settings.cacheUrl`: `CACHE_URL`, alias `REDIS_URL`), with results authenticated
 * by `opts.secret` (`CACHE_SECRET`); else in-process, bounded by `memoryBytes` (`SVC_CACHE_BYTES`).
 */
export function createCache(url: string | undefined, log?: Logger, opts: RedisCacheOptions & { memoryBytes?: number } = {}): ResponseCache {
  const { memoryBytes, ...redis } = opts;
  return url ? new RedisCache(url, { ...redis, ...(log ? { log } : {}) }) : new MemoryCache(memoryBytes === undefined ? {} : { maxBytes: memoryBytes });
}
