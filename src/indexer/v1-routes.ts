/**
 * The one route table of the index's `/v1` API: the explorer's routes (explorer-routes.ts,
 * dex-routes.ts), the wallet's node routes (node-routes.ts), the explorer-compatible wallet routes
 * (explorer-api.ts) and the index's own (api.ts), each with its method, path pattern, cache policy,
 * `?network=` policy and handler. The service dispatches with it (routes.ts `tableHandler`: 404
 * for a path no route has, 405 for a known path asked with another method), the answer cache reads
 * its policies, and v1-routes.test.ts checks that docs/index.md lists every route.
 */
import type { Handler } from '../infra/http.js';
import type { Logger } from '../infra/log.js';
import { INDEX_ROUTES, noRoute, type IndexApi } from './api.js';
import { DEX_ROUTES } from './dex-routes.js';
import { WALLET_ROUTES, type WalletApi } from './explorer-api.js';
import { EXPLORER_ROUTES, type ExplorerContext } from './explorer-routes.js';
import { NODE_ROUTES, type NodeContext } from './node-routes.js';
import { tableHandler, type Route } from './routes.js';

/** What the /v1 handlers read: each module's context. */
export interface V1Context {
  explorer: ExplorerContext;
  node: NodeContext;
  wallet: WalletApi;
  index: IndexApi;
}

/** `routes` over the part of the V1Context that `part` picks. */
function over<C>(routes: readonly Route<C>[], part: (v: V1Context) => C): Route<V1Context>[] {
  return routes.map((r) => ({ ...r, handler: (v, req, m) => r.handler(part(v), req, m) }));
}

/** Every /v1 route, in match order (the first route whose method and pattern match answers). */
export const V1_ROUTES: readonly Route<V1Context>[] = [
  ...over(EXPLORER_ROUTES, (v) => v.explorer),
  ...over(DEX_ROUTES, (v) => v.explorer),
  ...over(NODE_ROUTES, (v) => v.node),
  ...over(WALLET_ROUTES, (v) => v.wallet),
  ...over(INDEX_ROUTES, (v) => v.index),
];

/** The /v1 API over `c`: 404 `{error, code}` for paths no route has. */
export function v1Handler(c: V1Context, o: { network: string; log: Logger }): Handler {
  return tableHandler(V1_ROUTES, c, { network: o.network, log: o.log, next: noRoute(o.log) });
}
