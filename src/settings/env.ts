/**
 * The environment names of every setting, in one table: the spec's name first, then the
 * reference's aliases (scripts written for the Rust tools keep working). Only the settings
 * loader (settings.ts and its sections) reads the environment.
 */
export type Env = Record<string, string | undefined>;

/** Environment names of every setting: [spec name, reference aliases…]. */
export const ENV_NAMES = {
  mock: ['MOCK'],
  debug: ['CHARMS_DEBUG'],
  logLevel: ['LOG_LEVEL'],
  proveApiUrl: ['SVC_PROVE_API_URL', 'CHARMS_PROVE_API_URL'],
  appProver: ['APP_ZK_PROVER', 'APP_SP1_PROVER'],
  spellProver: ['SPELL_ZK_PROVER', 'SPELL_SP1_PROVER'],
  networkPrivateKey: ['NETWORK_PRIVATE_KEY'],
  networkRpcUrl: ['NETWORK_RPC_URL'],
  gpuServiceUrl: ['ZK_GPU_SERVICE_URL', 'SP1_GPU_SERVICE_URL'],
  feeSettings: ['SVC_FEE_SETTINGS', 'CHARMS_FEE_SETTINGS'],
  cardanoProtocolParams: ['SVC_CARDANO_PROTOCOL_PARAMS', 'CHARMS_CARDANO_PROTOCOL_PARAMS'],
  cacheUrl: ['CACHE_URL', 'REDIS_URL'],
  cacheSecret: ['CACHE_SECRET'],
  proofThreads: ['SVC_PROOF_THREADS'],
  appCacheDir: ['SVC_APP_CACHE_DIR'],
  maxFeeRate: ['SVC_MAX_FEE_RATE'],
  artifactHosts: ['SVC_ARTIFACT_HOSTS'],
  metricsAddr: ['SVC_METRICS_ADDR'],
  esploraUrl: ['ESPLORA_URL'],
  rpcUrl: ['BITCOIN_RPC_URL'],
  rpcCookie: ['BITCOIN_RPC_COOKIE'],
  rpcUser: ['BITCOIN_RPC_USER'],
  rpcPassword: ['BITCOIN_RPC_PASSWORD'],
  zmqUrl: ['BITCOIN_ZMQ_URL'],
  indexDbUrl: ['INDEX_DB_URL'],
  indexVerifyWorkers: ['INDEX_VERIFY_WORKERS'],
  indexChain: ['INDEX_CHAIN'],
  ogmiosUrl: ['OGMIOS_URL'],
  nodeCli: ['BITCOIN_CLI'],
  nodeCliArgs: ['BITCOIN_CLI_ARGS'],
  scrollsHost: ['SCROLLS_HOST'],
  scrollsCardanoCanisterId: ['SCROLLS_CARDANO_CANISTER_ID'],
  scrollsBitcoinCanisterId: ['SCROLLS_BITCOIN_CANISTER_ID'],
  scrollsRootKey: ['SCROLLS_ROOT_KEY'],
  // the app runner (settings/runner.ts)
  appMemoryLimitMb: ['APP_MEMORY_LIMIT_MB'],
  appRunConcurrency: ['APP_RUN_CONCURRENCY'],
  appRunIsolation: ['APP_RUN_ISOLATION'],
  // start-up (util/bundle.ts)
  noBundle: ['CHARMS_NO_BUNDLE'],
  // server limits (settings/limits.ts)
  maxBodyBytes: ['SVC_MAX_BODY_BYTES'],
  inflightBodyBytes: ['SVC_INFLIGHT_BODY_BYTES'],
  maxConnections: ['SVC_MAX_CONNECTIONS'],
  maxConnectionsPerClient: ['SVC_MAX_CONNECTIONS_PER_CLIENT'],
  trustedProxies: ['SVC_TRUSTED_PROXIES'],
  headersTimeoutMs: ['SVC_HEADERS_TIMEOUT_MS'],
  bodyTimeoutMs: ['SVC_BODY_TIMEOUT_MS'],
  idleTimeoutMs: ['SVC_IDLE_TIMEOUT_MS'],
  maxStreamsPerConnection: ['SVC_MAX_STREAMS_PER_CONNECTION'],
  cacheBytes: ['SVC_CACHE_BYTES'],
  drainTimeoutMs: ['SVC_DRAIN_TIMEOUT_MS'],
} as const;

/** The first non-empty value among `names`. */
export function envValue(env: Env, names: readonly string[]): string | undefined {
  for (const n of names) {
    const v = env[n];
    if (v !== undefined && v !== '') return v;
  }
  return undefined;
}

export const truthy = (v: string | undefined): boolean => v !== undefined && !['', '0', 'false', 'no', 'off'].includes(v.toLowerCase());

/**
 * `CHARMS_NO_BUNDLE=1`: the CLI and its worker threads run from the ES modules of `dist/`
 * instead of the bundles (util/bundle.ts). Here, in this small module, so that the CLI's entry
 * reads it before loading anything else.
 */
export const noBundleOf = (env: Env): boolean => envValue(env, ENV_NAMES.noBundle) === '1';
