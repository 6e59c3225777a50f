/**
 * Prover configuration from the environment. The spec's names come first; the reference's
 * names are accepted as aliases so scripts written for the Rust tools keep working.
 */
import { CharmsError } from '../errors.js';
import { redactUrl } from '../util/redact.js';
import { describeScrolls, scrollsSettings, type ScrollsSettings } from '../scrolls/settings.js';

export type Env = Record<string, string | undefined>;

/** [spec name, reference alias] */
export const ENV_NAMES = {
  proveApiUrl: ['SVC_PROVE_API_URL', 'CHARMS_PROVE_API_URL'],
  appProver: ['APP_ZK_PROVER', 'APP_SP1_PROVER'],
  spellProver: ['SPELL_ZK_PROVER', 'SPELL_SP1_PROVER'],
  cacheUrl: ['CACHE_URL', 'REDIS_URL'],
  gpuServiceUrl: ['ZK_GPU_SERVICE_URL', 'SP1_GPU_SERVICE_URL'],
  feeSettings: ['SVC_FEE_SETTINGS', 'CHARMS_FEE_SETTINGS'],
} as const;

export const CURRENT_PROVE_API_URL = 'https://v15.charms.dev/spells/prove';

export function envValue(env: Env, names: readonly string[]): string | undefined {
  for (const n of names) {
    const v = env[n];
    if (v !== undefined && v !== '') return v;
  }
  return undefined;
}

export const truthy = (v: string | undefined): boolean => v !== undefined && !['', '0', 'false', 'no', 'off'].includes(v.toLowerCase());

export interface ProverConfig {
  mock: boolean;
  appProver: 'cpu' | 'network';
  spellProver: 'app' | 'network';
  networkPrivateKey?: string;
  networkRpcUrl?: string;
  gpuServiceUrl?: string;
  feeSettingsPath?: string;
  cacheUrl?: string;
  proveApiUrl: string;
  /** The Scrolls canisters (SCROLLS_HOST, SCROLLS_*_CANISTER_ID, SCROLLS_ROOT_KEY). */
  scrolls: ScrollsSettings;
}

/**
 * `mockFromEnv: false` ignores `MOCK` (what `charms spell prove` does, as the reference: a mock
 * proof is asked for with `--mock` only, never inherited from the environment).
 */
export function proverConfig(env: Env, opts: { mock?: boolean; mockFromEnv?: boolean } = {}): ProverConfig {
  const app = envValue(env, ENV_NAMES.appProver) ?? 'cpu';
  const spell = envValue(env, ENV_NAMES.spellProver) ?? 'app';
  if (app !== 'cpu' && app !== 'network')
    throw new CharmsError('CONFIG', `APP_ZK_PROVER must be cpu or network, got ${JSON.stringify(app)}`);
  if (spell !== 'app' && spell !== 'network')
    throw new CharmsError('CONFIG', `SPELL_ZK_PROVER must be app or network, got ${JSON.stringify(spell)}`);
  const cfg: ProverConfig = {
    mock: opts.mock === true || (opts.mockFromEnv !== false && truthy(env.MOCK)),
    appProver: app,
    spellProver: spell,
    proveApiUrl: envValue(env, ENV_NAMES.proveApiUrl) ?? CURRENT_PROVE_API_URL,
    scrolls: scrollsSettings(env),
  };
  const set = <K extends keyof ProverConfig>(k: K, v: ProverConfig[K] | undefined) => {
    if (v !== undefined) cfg[k] = v;
  };
  set('networkPrivateKey', env.NETWORK_PRIVATE_KEY || undefined);
  set('networkRpcUrl', env.NETWORK_RPC_URL || undefined);
  set('gpuServiceUrl', envValue(env, ENV_NAMES.gpuServiceUrl));
  set('feeSettingsPath', envValue(env, ENV_NAMES.feeSettings));
  set('cacheUrl', envValue(env, ENV_NAMES.cacheUrl));
  return cfg;
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
    cache: c.cacheUrl ? 'redis' : 'memory',
    scrolls: describeScrolls(c.scrolls),
  };
}
