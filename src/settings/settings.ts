/**
 * The one settings loader (as ord's `Settings`): every command and server takes its settings from
 * `loadSettings(env, flags)`. Environment variables are read here only, by the names in
 * `ENV_NAMES` (the spec's name first, then the reference's aliases, so scripts written for the
 * Rust tools keep working); command-line flags override them. Settings that name files (fee
 * settings, RPC cookie) carry the path; the owner reads the file (the cookie at every call, as
 * bitcoind rewrites it on restart).
 *
 * To add a setting: a row in `ENV_NAMES` (env.ts) and in `ENV_HELP` (env-help.ts: the servers'
 * `--help`), a field in `Settings` (or its section), one line in `loadSettings`, and its row in
 * README "Environment".
 */
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { CharmsError } from '../errors.js';
import { redactUrl } from '../util/redact.js';
import { ENV_NAMES, envValue, truthy, type Env } from './env.js';
import { describeScrolls, scrollsSettings, type ScrollsSettings } from './scrolls.js';
import { limitsOf, type ServerLimits } from './limits.js';

export { ENV_NAMES, envValue, noBundleOf, truthy, type Env } from './env.js';
export { runnerSettingsOf, type RunnerSettings } from './runner.js';

export const CURRENT_PROVE_API_URL = 'https://v15.charms.dev/spells/prove';

export interface ProverConfig {
  mock: boolean;
  appProver: 'cpu' | 'network';
  spellProver: 'app' | 'network';
  networkPrivateKey?: string;
  networkRpcUrl?: string;
  gpuServiceUrl?: string;
  feeSettingsPath?: string;
  /** Cardano protocol parameters JSON (`cardano-cli query protocol-parameters`); embedded mainnet ones otherwise. */
  cardanoProtocolParamsPath?: string;
  cacheUrl?: string;
  /**
   * Hosts the prover network's artifact URLs may name besides public https hosts and the
   * gateway's own (`SVC_ARTIFACT_HOSTS`): a cluster whose artifact store lives elsewhere.
   */
  artifactHosts: ArtifactHost[];
  /**
   * Worker threads a proving server verifies prerequisite spells and makes mock proofs on
   * (`SVC_PROOF_THREADS`; 0: on the event loop). Default: the cores, at most 4.
   */
  proofThreads: number;
  proveApiUrl: string;
  /** Bitcoin fee-rate cap in sat/vB (`SVC_MAX_FEE_RATE`); unset: Bitcoin Core's maxfeerate (10 000). */
  maxFeeRate?: number;
  /** The Scrolls canisters (SCROLLS_HOST, SCROLLS_*_CANISTER_ID, SCROLLS_ROOT_KEY). */
  scrolls: ScrollsSettings;
}

/** An artifact host the operator allows: any address it resolves to; plain http only when written `http://host`. */
export interface ArtifactHost {
  host: string;
  /** Only this port (any when not given). */
  port?: number;
  http: boolean;
}

/**
 * `SVC_ARTIFACT_HOSTS`: entries separated by commas or spaces, each `host`, `host:port`,
 * `https://host[:port]` or `http://host[:port]` (IPv6 in brackets).
 */
export function artifactHostsOf(env: Env): ArtifactHost[] {
  const raw = envValue(env, ENV_NAMES.artifactHosts);
  if (raw === undefined) return [];
  return raw
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((entry) => {
      const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(entry) ? entry : `https://${entry}`;
      let u: URL;
      try {
        u = new URL(withScheme);
      } catch {
        throw new CharmsError('CONFIG', `SVC_ARTIFACT_HOSTS: ${JSON.stringify(entry)} is not a host, host:port or http(s)://host[:port]`);
      }
      if ((u.protocol !== 'https:' && u.protocol !== 'http:') || (u.pathname !== '/' && u.pathname !== '') || u.search || u.username)
        throw new CharmsError('CONFIG', `SVC_ARTIFACT_HOSTS: ${JSON.stringify(entry)} is not a host, host:port or http(s)://host[:port]`);
      // an explicit default port (https://h:443) is dropped by URL: the entry then allows that scheme's port only
      const explicitPort = u.port ? Number(u.port) : /:\d+\/?$/.test(entry) ? (u.protocol === 'https:' ? 443 : 80) : undefined;
      return { host: u.hostname, http: u.protocol === 'http:', ...(explicitPort !== undefined ? { port: explicitPort } : {}) };
    });
}

/** Where the spell-query service (and `wallet list`'s node) gets transactions. */
export interface SourceConfig {
  esploraUrl?: string | undefined;
  rpcUrl?: string | undefined;
  rpcCookie?: string | undefined;
  rpcUser?: string | undefined;
  rpcPassword?: string | undefined;
  /** Per-request timeout (default 10 s). */
  timeoutMs?: number | undefined;
}

/** The Bitcoin Core command-line client `wallet list` runs. */
export interface NodeClientConfig {
  bin: string;
  /** Extra arguments before the RPC method, e.g. `-testnet4`. */
  args: string[];
}

const LOG_LEVELS = ['error', 'warn', 'info', 'debug', 'trace'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Settings {
  /** Mock proving and mock proofs accepted (`--mock` or `MOCK`). */
  mock: boolean;
  /** `CHARMS_DEBUG`: stack traces and the reasons behind "no spell". */
  debug: boolean;
  logLevel: LogLevel;
  prover: ProverConfig;
  /** Redis URL of the proof cache; in-process cache without it. */
  cacheUrl?: string;
  /** `CACHE_SECRET`: the key Redis entries are authenticated with (never logged). */
  cacheSecret?: string;
  querySource: SourceConfig;
  nodeClient: NodeClientConfig;
  /** Connection, timeout and body limits of both servers (`SVC_*`). */
  limits: ServerLimits;
  /** Where both servers serve `GET /metrics` (`SVC_METRICS_ADDR`). */
  metrics: MetricsAddr;
}

/** `public`: at /metrics on the server's port; `off`: nowhere; an address: on a listener of its own only. */
export type MetricsAddr = 'public' | 'off' | { host: string; port: number };

/** `SVC_METRICS_ADDR`: unset or `public`, `off`, or `[host]:port` (host default 127.0.0.1; IPv6 in brackets). */
export function metricsAddrOf(env: Env): MetricsAddr {
  const raw = envValue(env, ENV_NAMES.metricsAddr);
  if (raw === undefined || raw.toLowerCase() === 'public') return 'public';
  if (raw.toLowerCase() === 'off') return 'off';
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s]*)):(\d{1,5})$/.exec(raw.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new CharmsError('CONFIG', `SVC_METRICS_ADDR must be public, off or [host]:port, got ${JSON.stringify(raw)}`);
  return { host: m[1] ?? (m[2] || '127.0.0.1'), port };
}

/** `charms index`: the database, the node's ZMQ publisher, the data directory of the default database. */
export interface IndexSettings {
  /** `--db` / INDEX_DB_URL: a SQLite file path or a postgres:// URL; undefined: the default file. */
  db: string | undefined;
  /** `--zmq-url` / BITCOIN_ZMQ_URL (hashblock/sequence), always backed by polling. */
  zmqUrl: string | undefined;
  /** Where the default SQLite index lives: `$XDG_DATA_HOME/charms-ts`, else `~/.local/share/charms-ts`. */
  dataDir: string | undefined;
  /** `--verify-workers` / INDEX_VERIFY_WORKERS: spell verification threads (0: on the event loop); default the cores. */
  verifyWorkers: number;
  /** `--chain` / INDEX_CHAIN: the chain indexed (default bitcoin). */
  chain: 'bitcoin' | 'cardano';
  /** `--ogmios-url` / OGMIOS_URL: the Cardano index's Ogmios. */
  ogmiosUrl: string | undefined;
}

/** The index settings: flags over the environment. */
export function indexSettings(
  env: Env,
  flags: {
    db?: string | undefined;
    zmqUrl?: string | undefined;
    verifyWorkers?: string | undefined;
    chain?: string | undefined;
    ogmiosUrl?: string | undefined;
  } = {},
): IndexSettings {
  const chain = flags.chain ?? envValue(env, ENV_NAMES.indexChain) ?? 'bitcoin';
  if (chain !== 'bitcoin' && chain !== 'cardano')
    throw new CharmsError('CONFIG', `--chain (INDEX_CHAIN) must be bitcoin or cardano, got ${JSON.stringify(chain.slice(0, 40))}`);
  const base = env.XDG_DATA_HOME || (env.HOME ? join(env.HOME, '.local', 'share') : undefined);
  return {
    db: flags.db ?? envValue(env, ENV_NAMES.indexDbUrl),
    zmqUrl: flags.zmqUrl ?? envValue(env, ENV_NAMES.zmqUrl),
    dataDir: base === undefined ? undefined : join(base, 'charms-ts'),
    verifyWorkers: verifyWorkersOf(flags.verifyWorkers ?? envValue(env, ENV_NAMES.indexVerifyWorkers)),
    chain,
    ogmiosUrl: flags.ogmiosUrl ?? envValue(env, ENV_NAMES.ogmiosUrl),
  };
}

function verifyWorkersOf(raw: string | undefined): number {
  if (raw === undefined) return availableParallelism();
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isSafeInteger(n) || n < 0 || n > 64)
    throw new CharmsError('CONFIG', `--verify-workers (INDEX_VERIFY_WORKERS) must be an integer from 0 to 64, got ${JSON.stringify(raw)}`);
  return n;
}

/** The default index database of a network: `<dataDir>/index-<network>.sqlite`. */
export function defaultIndexDb(s: IndexSettings, network: string): string {
  if (s.dataDir === undefined) throw new CharmsError('CONFIG', 'no data directory (HOME and XDG_DATA_HOME unset): give --db or INDEX_DB_URL');
  return join(s.dataDir, `index-${network}.sqlite`);
}

/** Command-line flags that override the environment. */
export interface SettingsFlags {
  mock?: boolean;
  /** `false`: `MOCK` in the environment does not turn mock mode on (only the `--mock` flag does). */
  mockFromEnv?: boolean;
  esploraUrl?: string | undefined;
  rpcUrl?: string | undefined;
  rpcCookie?: string | undefined;
}

export function proverConfig(env: Env, opts: { mock?: boolean; mockFromEnv?: boolean } = {}): ProverConfig {
  const app = envValue(env, ENV_NAMES.appProver) ?? 'cpu';
  const spell = envValue(env, ENV_NAMES.spellProver) ?? 'app';
  if (app !== 'cpu' && app !== 'network') throw new CharmsError('CONFIG', `APP_ZK_PROVER must be cpu or network, got ${JSON.stringify(app)}`);
  if (spell !== 'app' && spell !== 'network') throw new CharmsError('CONFIG', `SPELL_ZK_PROVER must be app or network, got ${JSON.stringify(spell)}`);
  const cfg: ProverConfig = {
    mock: opts.mock === true || (opts.mockFromEnv !== false && truthy(envValue(env, ENV_NAMES.mock))),
    appProver: app,
    spellProver: spell,
    proveApiUrl: envValue(env, ENV_NAMES.proveApiUrl) ?? CURRENT_PROVE_API_URL,
    proofThreads: proofThreadsOf(env),
    scrolls: scrollsSettings(env),
    artifactHosts: artifactHostsOf(env),
  };
  const set = <K extends keyof ProverConfig>(k: K, v: ProverConfig[K] | undefined) => {
    if (v !== undefined) cfg[k] = v;
  };
  set('networkPrivateKey', envValue(env, ENV_NAMES.networkPrivateKey));
  set('networkRpcUrl', envValue(env, ENV_NAMES.networkRpcUrl));
  set('gpuServiceUrl', envValue(env, ENV_NAMES.gpuServiceUrl));
  set('feeSettingsPath', envValue(env, ENV_NAMES.feeSettings));
  set('cardanoProtocolParamsPath', envValue(env, ENV_NAMES.cardanoProtocolParams));
  set('cacheUrl', envValue(env, ENV_NAMES.cacheUrl));
  set('maxFeeRate', maxFeeRateOf(env));
  return cfg;
}

function maxFeeRateOf(env: Env): number | undefined {
  const raw = envValue(env, ENV_NAMES.maxFeeRate);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new CharmsError('CONFIG', `SVC_MAX_FEE_RATE must be a positive number of sat/vB, got ${JSON.stringify(raw)}`);
  return n;
}

function proofThreadsOf(env: Env): number {
  const raw = envValue(env, ENV_NAMES.proofThreads);
  if (raw === undefined) return Math.min(4, availableParallelism());
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0 || n > 64)
    throw new CharmsError('CONFIG', `SVC_PROOF_THREADS must be an integer from 0 to 64, got ${JSON.stringify(raw)}`);
  return n;
}

/**
 * Where `spell check` / `spell prove` keep prepared app modules (`SVC_APP_CACHE_DIR`; `off`: no
 * such cache). Default: `$XDG_CACHE_HOME/charms-ts/apps`, else `~/.cache/charms-ts/apps`.
 */
export function appCacheDirOf(env: Env): string | undefined {
  const v = envValue(env, ENV_NAMES.appCacheDir);
  if (v !== undefined) return v.toLowerCase() === 'off' ? undefined : v;
  const base = env.XDG_CACHE_HOME || (env.HOME ? join(env.HOME, '.cache') : undefined);
  return base === undefined ? undefined : join(base, 'charms-ts', 'apps');
}

/** The log level of `LOG_LEVEL` (case-insensitive; default `info`); another value is refused (CONFIG). */
export function logLevelOf(env: Env): LogLevel {
  const raw = envValue(env, ENV_NAMES.logLevel) ?? 'info';
  const v = raw.trim().toLowerCase();
  if ((LOG_LEVELS as readonly string[]).includes(v)) return v as LogLevel;
  throw new CharmsError('CONFIG', `LOG_LEVEL ${JSON.stringify(raw.slice(0, 40))} is not a log level: use one of ${LOG_LEVELS.join(', ')}`);
}

/** `CHARMS_DEBUG`: a section on its own so that error reporting never fails on other settings. */
export const debugOf = (env: Env): boolean => truthy(envValue(env, ENV_NAMES.debug));

const nodeClientOf = (env: Env): NodeClientConfig => ({
  bin: envValue(env, ENV_NAMES.nodeCli) ?? 'bitcoin-cli',
  args: (envValue(env, ENV_NAMES.nodeCliArgs) ?? '').split(/\s+/).filter(Boolean),
});

/**
 * All settings: the environment, overridden by `flags`. The sections (`proverConfig`,
 * `logLevelOf`, `debugOf`, `nodeClientOf`) serve commands that need only one of them.
 */
export function loadSettings(env: Env, flags: SettingsFlags = {}): Settings {
  const { mock, mockFromEnv } = flags;
  const prover = proverConfig(env, { ...(mock === undefined ? {} : { mock }), ...(mockFromEnv === undefined ? {} : { mockFromEnv }) });
  const s: Settings = {
    mock: prover.mock,
    debug: debugOf(env),
    logLevel: logLevelOf(env),
    prover,
    querySource: {
      esploraUrl: flags.esploraUrl ?? envValue(env, ENV_NAMES.esploraUrl),
      rpcUrl: flags.rpcUrl ?? envValue(env, ENV_NAMES.rpcUrl),
      rpcCookie: flags.rpcCookie ?? envValue(env, ENV_NAMES.rpcCookie),
      rpcUser: env[ENV_NAMES.rpcUser[0]], // an empty user or password is a value, not "unset"
      rpcPassword: env[ENV_NAMES.rpcPassword[0]],
    },
    nodeClient: nodeClientOf(env),
    limits: limitsOf(env),
    metrics: metricsAddrOf(env),
  };
  if (prover.cacheUrl !== undefined) s.cacheUrl = prover.cacheUrl;
  const secret = envValue(env, ENV_NAMES.cacheSecret);
  if (secret !== undefined) s.cacheSecret = secret;
  return s;
}

/** A description safe to log or show (no network private key, no credentials in URLs). */
export function describeConfig(c: ProverConfig): Record<string, unknown> {
  // mock mode proves locally: no real backend, no relay, no Scrolls canister applies
  if (c.mock)
    return {
      mock: true,
      fee_settings: c.feeSettingsPath,
      cardano_protocol_params: c.cardanoProtocolParamsPath ?? 'embedded (mainnet)',
      cache: c.cacheUrl ? 'redis' : 'memory',
    };
  return {
    mock: c.mock,
    app_prover: c.appProver,
    spell_prover: c.spellProver,
    network_key_set: c.networkPrivateKey !== undefined,
    network_rpc_url: c.networkRpcUrl && redactUrl(c.networkRpcUrl),
    gpu_service_url: c.gpuServiceUrl && redactUrl(c.gpuServiceUrl),
    prove_api_url: redactUrl(c.proveApiUrl),
    fee_settings: c.feeSettingsPath,
    cardano_protocol_params: c.cardanoProtocolParamsPath ?? 'embedded (mainnet)',
    cache: c.cacheUrl ? 'redis' : 'memory',
    scrolls: describeScrolls(c.scrolls),
    artifact_hosts: c.artifactHosts.map(
      (h) => `${h.http ? 'http' : 'https'}://${h.host.includes(':') ? `[${h.host}]` : h.host}${h.port !== undefined ? `:${h.port}` : ''}`,
    ),
  };
}
