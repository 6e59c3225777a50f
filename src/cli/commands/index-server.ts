import { readFileSync } from 'node:fs';
import type { Run } from '../define.js';
import type { indexOptions } from '../options.js';
import { serve, type ServeDeps, type Started } from '../serve.js';
import { CharmsError } from '../../errors.js';
import { defaultIndexDb, indexSettings, loadSettings } from '../../settings/settings.js';
import { sourceFromConfig } from '../../sources/tx-sources.js';
import { openIndexStore } from '../../indexer/open.js';
import { createLogger } from '../../infra/log.js';
import { startIndexService, type IndexService } from '../../indexer/service.js';
import { DEFAULT_COMMIT_BLOCKS, DEFAULT_FETCH_AHEAD, DEFAULT_MAX_REORG_DEPTH, DEFAULT_RECENT_TX_BLOCKS, MAX_RECENT_TX_BLOCKS } from '../../indexer/follower.js';
import { CARDANO_DEFAULT_START_POINTS, startHeightFor } from '../../indexer/start-height.js';
import { blockSourceFromConfig, btcSourceFromConfig } from '../../sources/chain-sources.js';
import { networkNamed } from '../../model/network.js';
import { askedStartPoint, CARDANO_MAX_REORG_DEPTH, cardanoStartPoint, pointText } from '../../indexer/cardano-follow.js';
import { OgmiosFollower, OgmiosSession } from '../../sources/ogmios.js';
import type { Settings, IndexSettings } from '../../settings/settings.js';
import type { CliContext } from '../define.js';

const intOpt = (raw: string | undefined, name: string, min: number, max: number): number | undefined => {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < min || n > max) throw new CharmsError('INVALID_INPUT', `--${name}: expected an integer from ${min} to ${max}`);
  return n;
};

const pkgVersion = (): string => {
  try {
    return JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')).version as string;
  } catch {
    return 'unknown';
  }
};

/**
 * `charms index`: follows a Bitcoin node (RPC or Esplora) or, with `--chain cardano`, Ogmios
 * (runCardano) into the index database and serves the index API, the spell-query routes and the
 * wallet page on one port; `--api-only` serves an index another process writes (PostgreSQL
 * replicas).
 */
const run: Run<typeof indexOptions> = async ({ opts }, ctx) => {
  const settings = loadSettings(ctx.env, {
    mock: opts.mock,
    mockFromEnv: false,
    esploraUrl: opts['esplora-url'],
    rpcUrl: opts['rpc-url'],
    rpcCookie: opts['rpc-cookie'],
  });
  const idx = indexSettings(ctx.env, {
    db: opts.db,
    zmqUrl: opts['zmq-url'],
    verifyWorkers: opts['verify-workers'],
    chain: opts.chain,
    ogmiosUrl: opts['ogmios-url'],
  });
  if (idx.chain === 'cardano') return runCardano(opts, ctx, settings, idx);
  for (const name of ['ogmios-url', 'start-point', 'start-slot'] as const)
    if (opts[name] !== undefined) throw new CharmsError('CONFIG', `--${name} is for a Cardano index (--chain cardano)`);
  const apiOnly = opts['api-only'];
  const netOpt = opts.network === undefined ? undefined : networkNamed('bitcoin', opts.network);
  if (opts.network !== undefined && !netOpt) throw new CharmsError('CONFIG', `--network ${opts.network} is a Cardano network: add --chain cardano`);
  const source = blockSourceFromConfig(settings.querySource, netOpt ? { network: netOpt } : {});
  if (!source && !apiOnly)
    throw new CharmsError(
      'CONFIG',
      'charms index needs a node: --rpc-url (BITCOIN_RPC_URL) or --esplora-url (ESPLORA_URL); or --api-only to serve an existing index',
    );
  const net = netOpt ?? (source ? await source.network() : undefined);
  if (!net) throw new CharmsError('CONFIG', '--network is required with --api-only and no node');
  if (source) {
    const nodeNet = await source.network();
    if (nodeNet.id !== net.id) throw new CharmsError('CONFIG', `--network ${net.name}, but ${source.name} serves ${nodeNet.name}`);
  }
  // the index's meta, the API and the default database name it by its CLI name
  const network = net.name;
  const startHeight = startHeightFor(net, intOpt(opts['start-height'], 'start-height', 0, 100_000_000));
  const maxReorgDepth = intOpt(opts['max-reorg-depth'], 'max-reorg-depth', 1, 1_000_000) ?? DEFAULT_MAX_REORG_DEPTH;
  const poll = intOpt(opts['poll-interval'], 'poll-interval', 1, 3600);
  const fetchAhead = intOpt(opts['fetch-ahead'], 'fetch-ahead', 1, 64) ?? DEFAULT_FETCH_AHEAD;
  const commitBlocks = intOpt(opts['commit-blocks'], 'commit-blocks', 1, 1000) ?? DEFAULT_COMMIT_BLOCKS;
  const recentTxBlocks = intOpt(opts['recent-tx-blocks'], 'recent-tx-blocks', 0, MAX_RECENT_TX_BLOCKS) ?? DEFAULT_RECENT_TX_BLOCKS;
  const answerCacheMb = intOpt(opts['answer-cache-mb'], 'answer-cache-mb', 0, 1_000_000);
  const db = idx.db ?? defaultIndexDb(idx, network);
  // an --api-only SQLite reader says on stderr when the file at its path changes (reopen.ts)
  const store = await openIndexStore(
    db,
    // the engine's connection lines (PostgreSQL lost / back) at the servers' log level
    { mode: apiOnly ? 'reader' : 'writer', network, mock: settings.mock, startHeight, log: createLogger(settings.logLevel) },
    { notice: (line) => ctx.stderr(`${line}\n`) },
  );
  let started = false;
  const stored = (await store.meta()).startHeight;
  if (opts['start-height'] !== undefined && stored !== startHeight) {
    await store.close();
    throw new CharmsError(
      'CONFIG',
      `--start-height ${startHeight}, but the index at ${db.includes('://') ? 'the --db URL' : db} starts at ${stored}: drop --start-height to keep it, or index into a new --db to start at ${startHeight}`,
    );
  }
  try {
    await serve(opts, settings, async (deps) => {
      const svc = await startIndexService({
        store,
        source,
        txSource: sourceFromConfig(settings.querySource),
        apiOnly,
        mock: settings.mock,
        network,
        startHeight: (await store.meta()).startHeight,
        maxReorgDepth,
        pollMs: poll === undefined ? undefined : poll * 1000,
        fetchAhead,
        commitBlocks,
        recentTxBlocks,
        likes: opts.likes === true,
        ...serviceBase(deps, settings, answerCacheMb, ctx),
        zmqUrl: idx.zmqUrl,
        verifyWorkers: idx.verifyWorkers,
        btcSource: btcSourceFromConfig(settings.querySource, { network: net }),
      });
      started = true;
      return served(svc, deps, settings, {
        db: db.startsWith('postgres') ? 'postgresql' : db,
        engine: store.engine,
        network,
        source: source?.name ?? 'none',
        mode: apiOnly ? 'api-only' : 'indexer',
        mock: settings.mock,
        zmq: idx.zmqUrl ? 'configured' : 'off',
        verify_workers: idx.verifyWorkers,
      });
    });
  } finally {
    if (!started) await store.close();
  }
};

type IndexOpts = Parameters<Run<typeof indexOptions>>[0]['opts'];

/**
 * `charms index --chain cardano`: follows Ogmios' chain sync (sources/ogmios.ts) into a Cardano
 * index (cardano-follow.ts) and serves the same API. The network is Ogmios' (its Shelley
 * genesis' magic), which `--network` must equal; the start point (`--start-point`, `--start-slot
 * 0`, else the network's default, start-height.ts) is kept in the index (cardanoStartPoint).
 */
async function runCardano(opts: IndexOpts, ctx: CliContext, settings: Settings, idx: IndexSettings): Promise<void> {
  for (const name of ['rpc-url', 'rpc-cookie', 'esplora-url', 'zmq-url', 'start-height'] as const)
    if (opts[name] !== undefined) throw new CharmsError('CONFIG', `--${name} is for a Bitcoin index; a Cardano index follows --ogmios-url`);
  const apiOnly = opts['api-only'];
  const url = idx.ogmiosUrl;
  if (!url && !apiOnly)
    throw new CharmsError(
      'CONFIG',
      'charms index --chain cardano needs Ogmios (started with --include-transaction-cbor): --ogmios-url ws://host:1337 (OGMIOS_URL); or --api-only to serve an existing index',
    );
  const netOpt = opts.network === undefined ? undefined : networkNamed('cardano', opts.network);
  if (opts.network !== undefined && !netOpt) throw new CharmsError('CONFIG', `--network ${opts.network} is not a Cardano network: mainnet, preprod or preview`);
  const nodeNet = url && !apiOnly ? await OgmiosSession.network(url) : undefined;
  if (netOpt && nodeNet && netOpt.id !== nodeNet.id)
    throw new CharmsError('CONFIG', `--network ${netOpt.name}, but the Cardano node behind Ogmios follows ${nodeNet.name} (magic ${nodeNet.networkMagic})`);
  const net = netOpt ?? nodeNet;
  if (!net) throw new CharmsError('CONFIG', '--network is required with --api-only (mainnet, preprod or preview)');
  const asked = askedStartPoint({ startPoint: opts['start-point'], startSlot: opts['start-slot'] });
  const maxReorgDepth = intOpt(opts['max-reorg-depth'], 'max-reorg-depth', 1, 1_000_000) ?? CARDANO_MAX_REORG_DEPTH;
  const commitBlocks = intOpt(opts['commit-blocks'], 'commit-blocks', 1, 1000) ?? DEFAULT_COMMIT_BLOCKS;
  const answerCacheMb = intOpt(opts['answer-cache-mb'], 'answer-cache-mb', 0, 1_000_000);
  // not index-mainnet.sqlite: that is the Bitcoin mainnet index's
  const db = idx.db ?? defaultIndexDb(idx, `cardano-${net.name}`);
  const label = db.includes('://') ? 'the --db URL' : db;
  const log0 = createLogger(settings.logLevel);
  const store = await openIndexStore(
    db,
    {
      mode: apiOnly ? 'reader' : 'writer',
      chain: 'cardano',
      network: net.name,
      mock: settings.mock,
      startHeight: 0,
      startPoint: pointText(asked ?? CARDANO_DEFAULT_START_POINTS[net.name]),
      log: log0,
    },
    { notice: (line) => ctx.stderr(`${line}\n`) },
  );
  let started = false;
  try {
    const stored = (await store.meta()).startPoint;
    const startPoint = apiOnly || stored === undefined ? undefined : cardanoStartPoint(asked, stored, label);
    await serve(opts, settings, async (deps) => {
      const svc = await startIndexService({
        store,
        apiOnly,
        mock: settings.mock,
        network: net.name,
        startHeight: 0,
        maxReorgDepth,
        ...serviceBase(deps, settings, answerCacheMb, ctx),
        verifyWorkers: idx.verifyWorkers,
        cardano:
          startPoint === undefined || !url
            ? undefined
            : { network: net, startPoint, maxReorgDepth, commitBlocks, connect: (points) => new OgmiosFollower({ url, network: net, points, log: deps.log }) },
      });
      started = true;
      return served(svc, deps, settings, {
        db: db.startsWith('postgres') ? 'postgresql' : db,
        engine: store.engine,
        chain: 'cardano',
        network: net.name,
        source: apiOnly ? 'none' : 'ogmios',
        mode: apiOnly ? 'api-only' : 'indexer',
        mock: settings.mock,
        start_point: startPoint === undefined ? undefined : pointText(startPoint),
        verify_workers: idx.verifyWorkers,
      });
    });
  } finally {
    if (!started) await store.close();
  }
}

/** The service options both chains' indexes take from the server's set-up and settings alike. */
function serviceBase(deps: ServeDeps, settings: Settings, answerCacheMb: number | undefined, ctx: CliContext) {
  return {
    answerCacheBytes: answerCacheMb === undefined ? undefined : answerCacheMb * 1024 * 1024,
    version: pkgVersion(),
    log: deps.log,
    progress: (line: string) => ctx.stderr(`${line}\n`),
    cache: deps.cache,
    host: deps.host,
    port: deps.port,
    limits: settings.limits,
  };
}

/** A started index as serve() runs it (it closes it on SIGINT/SIGTERM: the follower stops between blocks, then the port and the store). */
function served(svc: IndexService, deps: ServeDeps, settings: Settings, fields: Record<string, unknown>): Started {
  if (settings.mock)
    deps.log.warnAlways('MOCK MODE (--mock): spells with mock proofs are indexed as valid, so balances include charms no real proof backs', {
      event: 'mock_mode',
    });
  return {
    server: { port: svc.server.port, close: () => svc.close(), connections: () => svc.server.connections(), drain: (ms: number) => svc.server.drain(ms) },
    banner: `Charms index running on ${deps.host}:${svc.server.port}`,
    fields,
  };
}

export default run;
