/**
 * Answers of the index API kept per index state: a GET whose answer depends only on the index
 * (confirmed tables and the mempool overlay, no outside source) is computed once per state and
 * then served from memory until the state moves. The state is the database's data version (it
 * moves with every commit: a block, a rollback, by this process or another one on the same
 * SQLite file) and the mempool overlay's generation (it moves with every change); a new state
 * drops every kept answer at once. Concurrent identical requests share one computation.
 *
 * On PostgreSQL the writer counts its own commits; an `--api-only` reader (another process
 * writes) asks the database per request for the data version the writer moves in each block
 * transaction (pg-driver.ts: one small read shared by concurrent requests), so a kept answer is
 * never older than what a fresh query would see.
 *
 * Only 200 answers are kept (errors are cheap and would let a client fill the cache with junk
 * keys), bounded in bytes (least recently used first out).
 */
import { MemoryCache } from '../infra/cache.js';
import type { Handler, Req, Res } from '../infra/http.js';
import { JSON_HEADERS } from './api.js';

/** Default bound of the kept answers' bytes. */
export const DEFAULT_ANSWER_CACHE_BYTES = 32 * 1024 * 1024;

export interface AnswerCacheOptions {
  /**
   * The index state as of the call (a promise when it takes a round trip), or undefined when it
   * cannot be told (then nothing is cached).
   */
  state(): string | undefined | Promise<string | undefined>;
  /** Whether the answer to GET `path` depends on the index state only. */
  cacheable(path: string): boolean;
  maxBytes: number;
}

/** Answers their handler marked as not to be kept (they may be better when asked again). */
const unkept = new WeakSet<Res>();
/** Marks `res` as not to be kept by the answer cache (e.g. a fee list a bound left incomplete). */
export function notKept(res: Res): Res {
  unkept.add(res);
  return res;
}

/** A computed answer that is not kept (not a 200 JSON answer): handed to every waiter as is. */
class NotKept {
  constructor(readonly res: Res) {}
}

/** `next` with its state-only GET answers kept per state. The answers are byte-identical to next's. */
export function cachedAnswers(next: Handler, o: AnswerCacheOptions): Handler {
  if (o.maxBytes <= 0) return next;
  let state: string | undefined;
  let kept: MemoryCache | undefined;
  /** The answer to `req` in the index state `now`: at once when it is kept or next gives it at once. */
  const answer = (req: Req, now: string | undefined): Res | Promise<Res> => {
    if (now === undefined) {
      // the state cannot be told (say, the database is away): what was kept may belong to a state
      // that will not come back (a rebuilt database counting its versions again), so it goes
      state = undefined;
      kept = undefined;
      return next(req);
    }
    if (now !== state || !kept) {
      // a computation still running for the old state finishes into the old cache, which is gone
      state = now;
      kept = new MemoryCache({ maxEntries: Number.MAX_SAFE_INTEGER, maxBytes: o.maxBytes });
    }
    const cache = kept;
    const q = req.query.toString();
    const key = `${req.method} ${q ? `${req.path}?${q}` : req.path}`;
    const hit = cache.get(key);
    if (hit) return keptAnswer(hit);
    if (!cache.computing(key)) {
      const res = next(req);
      if (!(res instanceof Promise)) {
        // computed at once: kept, and answered with the kept bytes
        const body = keepable(res);
        if (body === undefined) return res;
        cache.set(key, body);
        return keptAnswer(body);
      }
      return shared(cache, key, () => res);
    }
    return shared(cache, key, async () => next(req));
  };
  return (req: Req): Res | Promise<Res> => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !o.cacheable(req.path)) return next(req);
    const asked = o.state();
    return typeof asked === 'object' ? asked.then((now) => answer(req, now)) : answer(req, asked);
  };
}

/** A kept answer's response. */
const keptAnswer = (body: Uint8Array): Res => ({ status: 200, headers: { ...JSON_HEADERS }, body });

/** The bytes to keep of a computed answer, in a buffer of their own; undefined when it is not to be kept. */
function keepable(res: Res): Uint8Array | undefined {
  if (res.status !== 200 || res.body === undefined || unkept.has(res) || !sameHeaders(res.headers, JSON_HEADERS)) return undefined;
  if (typeof res.body !== 'string') return res.body;
  const b = Buffer.allocUnsafeSlow(Buffer.byteLength(res.body));
  b.write(res.body);
  return b;
}

/** The answer of `key` computed once by `compute` for every concurrent request of it. */
async function shared(cache: MemoryCache, key: string, compute: () => Promise<Res>): Promise<Res> {
  try {
    return keptAnswer(
      await cache.getOrCompute(key, async () => {
        const res = await compute();
        const body = keepable(res);
        if (body === undefined) throw new NotKept(res);
        return body;
      }),
    );
  } catch (e) {
    if (e instanceof NotKept) return e.res;
    throw e;
  }
}

function sameHeaders(a: Record<string, string>, b: Readonly<Record<string, string>>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}
