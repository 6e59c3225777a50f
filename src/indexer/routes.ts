/**
 * The index API's route tables (as ord's `server.rs` and fastify's route options): each route is
 * `{method, pattern, cache, network, handler}`, its handler a top-level function of the API's
 * context, the request and the path's match. One table per API (explorer-routes.ts; the older /v1
 * and wallet routes are declared in `LEGACY_ROUTES` with their policies while their handlers stay
 * in api.ts and explorer-api.ts); the answer cache asks `cachePolicy` instead of path lists.
 *
 * `cache`: `state` — the answer depends on the index state only (confirmed tables and mempool
 * overlay), kept per state (answer-cache.ts); `state-unless-btc-utxos` — so unless a BTC source
 * gives address UTXOs (`/wallet/balance`); `none` — never kept (status, node or BTC source reads).
 *
 * `network`: what a `?network=` naming a network the index does not hold gets: `empty` (list and
 * count routes: their `empty` answer, 200), `not-found` (single-item routes: 404), or `refused`
 * (400: the older routes).
 */
import { CharmsError } from '../errors.js';
import { errorResponse, type Handler, type Req, type Res } from '../infra/http.js';
import type { Logger } from '../infra/log.js';
import { ok, sameNetwork, type J } from './api.js';

export type CachePolicy = 'state' | 'state-unless-btc-utxos' | 'none';
type OtherNetwork = 'empty' | 'not-found' | 'refused';

export interface RouteSpec {
  method: 'GET' | 'POST' | 'DELETE';
  pattern: RegExp;
  cache: CachePolicy;
  network: OtherNetwork;
}

export interface Route<C> extends RouteSpec {
  handler: (c: C, req: Req, m: RegExpExecArray) => Promise<Res> | Res;
  /** The answer of a list route for a network the index does not hold. */
  empty?: (req: Req, m: RegExpExecArray) => J;
}

/** The /v1 routes answered by api.ts and explorer-api.ts (their handlers), with their policies. */
export const LEGACY_ROUTES: readonly RouteSpec[] = [
  { method: 'GET', pattern: /^\/v1\/status$/, cache: 'none', network: 'refused' },
  { method: 'GET', pattern: /^\/v1\/addresses\/[^/]+\/(balances|utxos|history)$/, cache: 'state', network: 'refused' },
  { method: 'POST', pattern: /^\/v1\/addresses\/balances$/, cache: 'none', network: 'refused' },
  { method: 'GET', pattern: /^\/v1\/outputs\/[^/]+$/, cache: 'state', network: 'refused' },
  { method: 'GET', pattern: /^\/v1\/txs\/[^/]+$/, cache: 'state', network: 'refused' },
  { method: 'GET', pattern: /^\/v1\/apps\/.+$/, cache: 'state', network: 'refused' },
  // the fees of /wallet/transactions come from the sources but never change for a txid; an
  // answer lacking one the sources may still give is marked notKept
  { method: 'GET', pattern: /^\/v1\/wallet\/(charms|transactions)\/[^/]+$/, cache: 'state', network: 'refused' },
  { method: 'GET', pattern: /^\/v1\/wallet\/balance\/[^/]+$/, cache: 'state-unless-btc-utxos', network: 'refused' },
  { method: 'GET', pattern: /^\/v1\/transactions\/[^/]+$/, cache: 'state', network: 'refused' },
  { method: 'GET', pattern: /^\/v1\/assets\/reference-nft\/[^/]+$/, cache: 'state', network: 'refused' },
];

/** The route of `method path` in `table`, with the path's match. */
function findRoute<R extends RouteSpec>(table: readonly R[], method: string, path: string): { route: R; m: RegExpExecArray } | undefined {
  const asked = method === 'HEAD' ? 'GET' : method;
  for (const route of table) {
    if (route.method !== asked) continue;
    const m = route.pattern.exec(path);
    if (m) return { route, m };
  }
  return undefined;
}

/** Whether some route of `table` has `path` (any method). */
const hasPath = (table: readonly RouteSpec[], path: string): boolean => table.some((r) => r.pattern.test(path));

/** The cache policy of a GET of `path` in `tables` (the first route that has it); `none` when no route does. */
export function cachePolicy(tables: readonly (readonly RouteSpec[])[], path: string): CachePolicy {
  for (const t of tables) {
    const hit = findRoute(t, 'GET', path);
    if (hit) return hit.route.cache;
  }
  return 'none';
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
      if (!hasPath(table, req.path)) return o.next(req);
      return uncached(new CharmsError('METHOD_NOT_ALLOWED', `${req.method} is not served on ${req.path}`), o.log);
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
