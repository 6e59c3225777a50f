/**
 * The one settings loader (as ord's `Settings`): every command and server takes its settings from
 * `loadSettings(env, flags)`. Environment variables are read here only, by the names in
 * `ENV_NAMES` (the spec's name first, then the reference's aliases, so scripts written for the
 * Rust tools keep working); command-line flags override them. Settings that name files (fee
 * settings, RPC cookie) carry the path; the owner reads the file (the cookie at every call, as
 * bitcoind rewrites it on restart).
 *
 * To add a setting: a row in `ENV_NAMES` (env.ts), a field in `Settings` (or its section), one line in
 * `loadSettings`, and its row in README "Environment".
 */
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { CharmsError } from '../errors.js';
import { redactUrl } from '../util/redact.js';
import { ENV_NAMES, envValue, truthy, type Env } from './env.js';
import { describeScrolls, scrollsSettings, type ScrollsSettings } from './scrolls.js';
import { limitsOf, type ServerLimits } from './limits.js';

export { ENV_NAMES, envValue, truthy, type Env } from './env.js';

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
   * Worker threads a proving server verifies prerequisite spells and makes mock proofs on
   * (`SVC_PROOF_THREADS`; 0: on the event loop). Default: the cores, at most 4.
   */
  proofThreads: number;
  proveApiUrl: string;
  /** The Scrolls canisters (SCROLLS_HOST, SCROLLS_*_CANISTER_ID, SCROLLS_ROOT_KEY). */
  scrolls: ScrollsSettings;
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
  querySource: SourceConfig;
  nodeClient: NodeClientConfig;
  /** Connection, timeout and body limits of both servers (`SVC_*`). */
  limits: ServerLimits;
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
  if (app !== 'cpu' && app !== 'network')
    throw new CharmsError('CONFIG', `APP_ZK_PROVER must be cpu or network, got ${JSON.stringify(app)}`);
  if (spell !== 'app' && spell !== 'network')
    throw new CharmsError('CONFIG', `SPELL_ZK_PROVER must be app or network, got ${JSON.stringify(spell)}`);
  const cfg: ProverConfig = {
    mock: opts.mock === true || (opts.mockFromEnv !== false && truthy(envValue(env, ENV_NAMES.mock))),
    appProver: app,
    spellProver: spell,
    proveApiUrl: envValue(env, ENV_NAMES.proveApiUrl) ?? CURRENT_PROVE_API_URL,
    proofThreads: proofThreadsOf(env),
    scrolls: scrollsSettings(env),
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
  return cfg;
}

function proofThreadsOf(env: Env): number {
  const raw = envValue(env, ENV_NAMES.proofThreads);
  if (raw === undefined) return Math.min(4, availableParallelism());
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0 || n > 64) throw new CharmsError('CONFIG', `SVC_PROOF_THREADS must be an integer from 0 to 64, got ${JSON.stringify(raw)}`);
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

/** The log level of `LOG_LEVEL` (case-insensitive; default and fallback `info`). */
export function logLevelOf(env: Env): LogLevel {
  const v = (envValue(env, ENV_NAMES.logLevel) ?? 'info').toLowerCase();
  return (LOG_LEVELS as readonly string[]).includes(v) ? (v as LogLevel) : 'info';
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
  };
  if (prover.cacheUrl !== undefined) s.cacheUrl = prover.cacheUrl;
  return s;
}

/** A description safe to log or show (no network private key, no credentials in URLs). */
export function describeConfig(c: ProverConfig): Record<string, unknown> {
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
  };
}
