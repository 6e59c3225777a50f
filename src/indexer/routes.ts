/**
 * The index API's route table machinery (as ord's `server.rs` and fastify's route options): each
 * route is `{method, pattern, doc, cache, network, handler}`, its handler a top-level function of
 * the API's context, the request and the path's match. v1-routes.ts holds the one table of every
 * `/v1` route; the dispatcher, the 404 and 405 answers, the answer cache's policies
 * (`cachePolicy`) and the route list of docs/index.md (checked by v1-routes.test.ts) come from it.
 *
 * `cache`: `state` — the answer depends on the index state only (confirmed tables and mempool
 * overlay), kept per state (answer-cache.ts); `state-unless-btc-utxos` — so unless a BTC source
 * gives address UTXOs (`/wallet/balance`); `none` — never kept (status, node or BTC source reads).
 *
 * `network`: what a `?network=` naming a network the index does not hold gets: `empty` (list and
 * count routes: their `empty` answer, 200), `not-found` (single-item routes: 404), or `refused`
 * (400: the index's own and the wallet's routes).
 */
import { CharmsError } from '../errors.js';
import { errorResponse, type Handler, type Req, type Res } from '../infra/http.js';
import type { Logger } from '../infra/log.js';
import { ok, sameNetwork, type J } from './answer-json.js';

export type CachePolicy = 'state' | 'state-unless-btc-utxos' | 'none';
type OtherNetwork = 'empty' | 'not-found' | 'refused';

export interface Route<C> {
  method: 'GET' | 'POST' | 'DELETE';
  pattern: RegExp;
  /** The path as docs/index.md writes it (`/v1/assets/{app_id}/holders`). */
  doc: string;
  cache: CachePolicy;
  network: OtherNetwork;
  /** What a request with another method is told besides the 405 (the body a POST route expects). */
  hint?: string;
  handler: (c: C, req: Req, m: RegExpExecArray) => Promise<Res> | Res;
  /** The answer of a list route for a network the index does not hold. */
  empty?: (req: Req, m: RegExpExecArray) => J;
}

/** The route of `method path` in `table`, with the path's match. */
function findRoute<R extends Route<never>>(table: readonly R[], method: string, path: string): { route: R; m: RegExpExecArray } | undefined {
  const asked = method === 'HEAD' ? 'GET' : method;
  for (const route of table) {
    if (route.method !== asked) continue;
    const m = route.pattern.exec(path);
    if (m) return { route, m };
  }
  return undefined;
}

/** The routes of `table` that have `path` (any method). */
const withPath = <R extends Route<never>>(table: readonly R[], path: string): R[] => table.filter((r) => r.pattern.test(path));

/** The cache policy of a GET of `path` in `table`; `none` when no route has it. */
export function cachePolicy(table: readonly Route<never>[], path: string): CachePolicy {
  return findRoute(table, 'GET', path)?.route.cache ?? 'none';
}

/** An error answered as `{error, code}`, never kept (the index moves on). */
function uncached(e: unknown, log: Logger): Res {
  const r = errorResponse(e, log);
  return { ...r, headers: { ...r.headers, 'cache-control': 'no-store' } };
}

/**
 * The handler of `table` over context `c`: the route's handler, a network the index does not hold
 * answered as the route says, 405 for a known path asked with another method; `next` for paths
 * the table does not have.
 */
export function tableHandler<C>(table: readonly Route<C>[], c: C, o: { network: string; log: Logger; next: Handler }): Handler {
  return async (req) => {
    const hit = findRoute(table, req.method, req.path);
    if (!hit) {
      const others = withPath(table, req.path);
      if (others.length === 0) return o.next(req);
      const hint = others.find((r) => r.hint)?.hint;
      const methods = [...new Set(others.map((r) => r.method))].join(', ');
      return uncached(new CharmsError('METHOD_NOT_ALLOWED', `${req.method} is not served on ${req.path} (${methods}${hint ? `: ${hint}` : ''})`), o.log);
    }
    const { route, m } = hit;
    try {
      const asked = req.query.get('network');
      if (asked !== null && !sameNetwork(asked, o.network)) {
        if (route.network === 'empty' && route.empty) return ok(route.empty(req, m));
        if (route.network !== 'refused') throw new CharmsError('NOT_FOUND', `network ${asked.slice(0, 40)}: this index holds ${o.network} only`);
        throw new CharmsError('INVALID_INPUT', `network ${asked.slice(0, 40)}: this index serves ${o.network}`);
      }
      return await route.handler(c, req, m);
    } catch (e) {
      return uncached(e, o.log);
    }
  };
}
