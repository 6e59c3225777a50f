/**
 * `charms index` as a library: the follower (unless API-only), the mempool overlay, and one
 * HTTP/1.1 + h2c port serving the index API (`/v1/...`) beside the spell-query routes
 * (`GET`/`PUT /spells/<txid>`) and the wallet page.
 */
import { listenDual, type Handler, type Listening, type Res } from '../infra/http.js';
import type { ResponseCache } from '../infra/cache.js';
import { silentLogger, type Logger } from '../infra/log.js';
import { CharmsError } from '../errors.js';
import type { ServerLimits } from '../settings/limits.js';
import type { BlockSource } from '../sources/block-source.js';
import { ZmqSubscriber } from '../sources/zmq.js';
import { queryHandler } from '../query/service.js';
import { enableMetrics } from '../infra/metrics-http.js';
import { registerGauge } from '../util/metrics.js';
import type { TxSource } from '../sources/tx-sources.js';
import { cachedAnswers, DEFAULT_ANSWER_CACHE_BYTES } from './answer-cache.js';
import { addressCodec, indexApi } from './api.js';
import { walletApi } from './explorer-api.js';
import { LikeLimiter, networkStatus, type ExplorerContext } from './explorer-routes.js';
import type { NodeContext } from './node-routes.js';
import { cachePolicy } from './routes.js';
import { V1_ROUTES, v1Handler } from './v1-routes.js';
import type { BtcSource } from '../sources/btc-source.js';
import { librarySpellCheck, VerdictCache } from './block-write.js';
import { Follower, type FollowerStatus } from './follower.js';
import { CardanoFollower, type CardanoFollowerOptions, type ChainSync } from './cardano-follow.js';
import type { PointOrOrigin } from '../sources/ogmios-protocol.js';
import { MempoolOverlay } from './mempool.js';
import { SpellVerifyPool } from './verify-pool.js';
import { writerOf, type IndexReader } from './store.js';

const DEFAULT_INDEX_PORT = 17786;

export interface IndexServiceOptions {
  /** The index: its writer, unless `apiOnly`. */
  store: IndexReader;
  /** The chain the follower reads (and the status's node tip with apiOnly). */
  source?: BlockSource | undefined;
  /** Transactions for `GET /spells/<txid>`. */
  txSource?: TxSource | undefined;
  apiOnly: boolean;
  mock: boolean;
  network: string;
  startHeight: number;
  maxReorgDepth?: number | undefined;
  pollMs?: number | undefined;
  /** Blocks fetched ahead, and committed per transaction while far behind (follower.ts). */
  fetchAhead?: number | undefined;
  commitBlocks?: number | undefined;
  /** The last blocks whose txids the index keeps (follower.ts; `--recent-tx-blocks`). */
  recentTxBlocks?: number | undefined;
  maxLag?: number | undefined;
  version: string;
  log?: Logger;
  progress?: ((line: string) => void) | undefined;
  cache?: ResponseCache | undefined;
  host?: string;
  port?: number;
  limits?: Partial<ServerLimits> | undefined;
  /** The node's ZMQ publisher: its notifications wake the follower (polling goes on). */
  zmqUrl?: string | undefined;
  /** The plain-BTC side of the explorer-compatible API (address UTXOs, fees, broadcast); absent: says so. */
  btcSource?: BtcSource | undefined;
  /**
   * Threads that verify spells off the event loop (verify-pool.ts): the follower's and the
   * spell-query routes' (`--api-only` too: there the routes' only); started on first use. 0 or
   * absent: on the event loop. The CLI's default is the available cores (`--verify-workers`,
   * INDEX_VERIFY_WORKERS).
   */
  verifyWorkers?: number | undefined;
  /** Bytes of API answers kept per index state (answer-cache.ts); 0: none. Default DEFAULT_ANSWER_CACHE_BYTES. */
  answerCacheBytes?: number | undefined;
  /** `--likes`: the explorer's likes kept (in the `likes` table, written by the indexer only) and counted. */
  likes?: boolean | undefined;
  /** HTTP/1.1 transport (infra/http.ts): the fast path (default) or node's server only (benchmarks). */
  http1?: 'fast' | 'node' | undefined;
  /**
   * A Cardano index (cardano-follow.ts): Ogmios' chain sync instead of `source`; its status is
   * answered by /v1/status (with slots), without the explorer's Bitcoin network entry.
   */
  cardano?: (Omit<CardanoFollowerOptions, 'mock' | 'log' | 'progress'> & { connect: (points: () => Promise<PointOrOrigin[]>) => ChainSync }) | undefined;
  /** Start following at once (default); tests drive `follower.syncOnce()` themselves. */
  autoStart?: boolean;
}

export interface IndexService {
  server: Listening;
  follower: Follower | undefined;
  /** The Cardano follower (`cardano`), if any. */
  cardanoFollower: CardanoFollower | undefined;
  mempool: MempoolOverlay | undefined;
  /** The spell verification threads (`verifyWorkers`), if any. */
  verifyPool: SpellVerifyPool | undefined;
  close(): Promise<void>;
}

/** The request handler: `/v1/...` to the index API, everything else to the spell-query service. */
function indexServiceHandler(api: Handler, query: Handler): Handler {
  return (req) => (req.path.startsWith('/v1/') ? api(req) : query(req));
}

/** The follower the index gauges read (one index per process; the latest started). */
let metered: { status: FollowerStatus } | undefined;

/** The follower's figures as gauges read at scrape time (`GET /metrics`, docs/index.md); -1 before the first poll. */
function registerIndexMetrics(f: { status: FollowerStatus }): void {
  metered = f;
  const st = () => metered?.status;
  registerGauge('charms_index_height', 'Last block the index committed', () => st()?.indexHeight ?? -1);
  registerGauge('charms_index_node_height', 'Best block of the followed node', () => st()?.node?.height ?? -1);
  registerGauge('charms_index_lag_blocks', 'Node height minus index height', () => {
    const s = st();
    return s?.node && s.indexHeight !== undefined ? Math.max(0, s.node.height - s.indexHeight) : -1;
  });
  registerGauge('charms_index_reorgs', 'Reorgs rolled back since start', () => st()?.reorgs ?? 0);
  registerGauge('charms_index_unrecoverable', '1 when a reorg deeper than the cap stopped the index', () => (st()?.unrecoverable ? 1 : 0));
}

export async function startIndexService(o: IndexServiceOptions): Promise<IndexService> {
  const log = o.log ?? silentLogger;
  await enableMetrics(); // a server records metrics whether or not its port serves them
  // threads start on the first check (runner/pool.ts): an --api-only instance that is never asked
  // for a spell starts none
  const verifyPool = o.verifyWorkers ? new SpellVerifyPool({ size: o.verifyWorkers, mock: o.mock }) : undefined;
  const verdicts = new VerdictCache(verifyPool?.check ?? librarySpellCheck(o.mock));
  let follower: Follower | undefined;
  let mempool: MempoolOverlay | undefined;
  let cardanoFollower: CardanoFollower | undefined;
  if (!o.apiOnly && o.cardano) {
    const store = writerOf(o.store);
    if (!store) throw new CharmsError('INTERNAL', 'the indexer follows the chain on the index opened as its writer (it was opened --api-only)');
    const { connect, ...co } = o.cardano;
    cardanoFollower = new CardanoFollower(store, connect, { ...co, mock: o.mock, log, progress: o.progress });
    registerIndexMetrics(cardanoFollower);
  }
  if (!o.apiOnly && o.source && !o.cardano) {
    const source = o.source;
    const store = writerOf(o.store);
    if (!store) throw new CharmsError('INTERNAL', 'the indexer follows the chain on the index opened as its writer (it was opened --api-only)');
    const pool = (mempool = new MempoolOverlay(verdicts.verify, undefined, () => store.charmOutpoints?.() ?? Promise.resolve(undefined)));
    follower = new Follower(store, source, {
      startHeight: o.startHeight,
      maxReorgDepth: o.maxReorgDepth,
      pollMs: o.pollMs,
      fetchAhead: o.fetchAhead,
      commitBlocks: o.commitBlocks,
      recentTxBlocks: o.recentTxBlocks,
      check: verdicts.verify,
      afterCommit: (bs) => pool.blocksCommitted(bs),
      afterSync: () => pool.refresh(source),
      progress: o.progress,
      log,
    });
    registerIndexMetrics(follower);
  }
  /** The answer to a GET through the answer cache (the explorer API's batch entries are kept GET answers). */
  const viaCache = async (path: string): Promise<Res> =>
    api({ method: 'GET', path, query: new URLSearchParams(), headers: {}, body: async () => new Uint8Array() });
  const likeWriter = writerOf(o.store);
  const limiter = new LikeLimiter();
  // the chain is the database's (an --api-only Cardano reader has no `cardano` option)
  const chain = o.cardano ? 'cardano' : (await o.store.meta()).chain === 'cardano' ? 'cardano' : 'bitcoin';
  const codec = addressCodec(chain, o.network);
  const explorerCtx: ExplorerContext = {
    store: o.store,
    mempool,
    network: o.network,
    codec,
    likes: o.likes
      ? {
          write: likeWriter?.setLike && ((id, user, on) => likeWriter.setLike!(id, user, on, Math.floor(Date.now() / 1000))),
          allow: (client) => limiter.allow(client),
        }
      : undefined,
  };
  const nodeCtx: NodeContext = { store: o.store, mempool, source: o.source, btc: o.btcSource };
  const index = indexApi({
    store: o.store,
    chain,
    follower: follower ?? cardanoFollower,
    mempool,
    source: o.source,
    network: o.network,
    version: o.version,
    maxLag: o.maxLag,
    log,
    // the explorer's networks map has Bitcoin entries only: a Cardano index answers none
    explorerStatus: chain === 'cardano' ? undefined : (s) => o.store.read((tx) => networkStatus(explorerCtx, tx, s)),
  });
  const api = cachedAnswers(
    v1Handler(
      {
        explorer: explorerCtx,
        node: nodeCtx,
        index,
        wallet: walletApi({
          store: o.store,
          mempool,
          source: o.source,
          btc: o.btcSource,
          network: o.network,
          codec,
          log,
          balanceAnswer: (address) => viaCache(`/v1/wallet/balance/${address}`),
        }),
      },
      { network: o.network, log },
    ),
    {
      state: () => {
        const v = o.store.dataVersion();
        const of = (n: number | undefined) => (n === undefined ? undefined : `${n}:${mempool?.generation ?? 0}`);
        return typeof v === 'object' ? v.then(of) : of(v);
      },
      cacheable: (path) => {
        const policy = cachePolicy(V1_ROUTES, path);
        return policy === 'state' || (policy === 'state-unless-btc-utxos' && !o.btcSource?.addressUtxos);
      },
      maxBytes: o.answerCacheBytes ?? DEFAULT_ANSWER_CACHE_BYTES,
    },
  );
  // GET/PUT /spells/<txid> verify their spells on the same threads as the follower
  const query = queryHandler({ source: o.txSource, mock: o.mock, log, cache: o.cache, verifyOffThread: verifyPool?.check });
  const server = await listenDual(indexServiceHandler(api, query), {
    host: o.host ?? '0.0.0.0',
    port: o.port ?? DEFAULT_INDEX_PORT,
    log,
    ...(o.limits ? { limits: o.limits } : {}),
    ...(o.http1 ? { http1: o.http1 } : {}),
  });
  if (o.autoStart !== false) follower?.start();
  if (o.autoStart !== false) cardanoFollower?.start();
  let zmq: ZmqSubscriber | undefined;
  if (follower && o.zmqUrl) {
    const f = follower;
    zmq = new ZmqSubscriber(o.zmqUrl, { log });
    // any notification, or a possible gap, makes the follower read the node now
    zmq.on('hashblock', () => f.notify());
    zmq.on('sequence', () => f.notify());
    zmq.on('resync', () => f.notify());
    try {
      await zmq.start();
    } catch (e) {
      await follower.stop();
      await server.close();
      await verifyPool?.close();
      throw e;
    }
  }
  return {
    server,
    follower,
    cardanoFollower,
    mempool,
    verifyPool,
    async close() {
      await zmq?.close();
      await follower?.stop();
      await cardanoFollower?.stop();
      await verifyPool?.close();
      await server.close();
      await o.store.close();
    },
  };
}
