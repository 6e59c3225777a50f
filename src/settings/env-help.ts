/**
 * What each environment setting of `ENV_NAMES` means and which commands read it: the servers'
 * `--help` lists their variables from this table (`envHelp`), so the help cannot name a variable
 * the settings loader does not read, nor leave out one it does. A row per `ENV_NAMES` key: the
 * compiler asks for the row of a new setting.
 */
import { ENV_NAMES } from './env.js';

/** The commands whose `--help` lists environment variables. */
export type EnvCommand = 'server' | 'query-server' | 'index';

interface EnvHelp {
  readonly help: string;
  /** The servers that read it (none: a setting of the other commands only). */
  readonly for: readonly EnvCommand[];
}

const SERVERS = ['server', 'query-server', 'index'] as const;
const SOURCE_READERS = ['query-server', 'index'] as const;

export const ENV_HELP: { readonly [K in keyof typeof ENV_NAMES]: EnvHelp } = {
  mock: { help: 'mock proving, same as --mock (query-server and index take --mock only)', for: ['server'] },
  debug: { help: 'errors with stack traces', for: SERVERS },
  logLevel: { help: 'error, warn, info (default), debug or trace', for: SERVERS },
  proveApiUrl: { help: 'the proving service a relaying (non-mock `charms`) server forwards to', for: ['server'] },
  appProver: { help: 'charms-prover: cpu or network (the SP1 Prover Network)', for: ['server'] },
  spellProver: { help: 'charms-prover: app or network', for: ['server'] },
  networkPrivateKey: { help: 'SP1 Prover Network account key (never logged)', for: ['server'] },
  networkRpcUrl: { help: 'SP1 Prover Network RPC (default https://rpc.mainnet.succinct.xyz)', for: ['server'] },
  gpuServiceUrl: { help: 'a self-hosted sp1-cluster network gateway', for: ['server'] },
  feeSettings: { help: 'protocol fee settings YAML file', for: ['server'] },
  cardanoProtocolParams: { help: 'Cardano protocol parameters JSON (embedded mainnet ones otherwise)', for: ['server'] },
  cacheUrl: { help: 'Redis for the cache (redis://…); in-process cache without it', for: SERVERS },
  cacheSecret: { help: 'key the Redis entries are authenticated with (never logged)', for: SERVERS },
  proofThreads: { help: 'proof threads of a local prover (default the cores, at most 4; 0: on the event loop)', for: ['server'] },
  appCacheDir: { help: 'where spell check / spell prove keep prepared app modules (off: none)', for: [] },
  maxFeeRate: { help: 'Bitcoin fee-rate cap in sat/vB (default 10000)', for: ['server'] },
  artifactHosts: { help: 'artifact-store hosts the prover network may name besides public https hosts', for: ['server'] },
  metricsAddr: { help: 'GET /metrics: public (default, this port), off, or [host]:port of its own', for: SERVERS },
  esploraUrl: { help: 'Esplora-compatible API base, e.g. https://mempool.space/testnet4/api', for: SOURCE_READERS },
  rpcUrl: { help: 'Bitcoin Core JSON-RPC URL, e.g. http://127.0.0.1:48332 (query-server: needs -txindex)', for: SOURCE_READERS },
  rpcCookie: { help: "path of bitcoind's .cookie file (the RPC credentials), or:", for: SOURCE_READERS },
  rpcUser: { help: 'RPC user (with BITCOIN_RPC_PASSWORD)', for: SOURCE_READERS },
  rpcPassword: { help: 'RPC password', for: SOURCE_READERS },
  zmqUrl: { help: "the node's ZMQ publisher (hashblock, sequence): faster than polling alone", for: ['index'] },
  indexDbUrl: { help: 'the database: a SQLite file path (default $XDG_DATA_HOME/charms-ts/index-<network>.sqlite) or postgres://…', for: ['index'] },
  indexVerifyWorkers: { help: 'spell verification threads (default the cores; 0: on the event loop)', for: ['index'] },
  indexChain: { help: 'the chain indexed (bitcoin or cardano)', for: [] },
  ogmiosUrl: { help: "the Cardano index's Ogmios", for: [] },
  nodeCli: { help: 'the node client wallet list runs without BITCOIN_RPC_URL (default bitcoin-cli)', for: [] },
  nodeCliArgs: { help: 'its extra arguments, e.g. -testnet4', for: [] },
  scrollsHost: { help: 'the Scrolls canisters a real prover calls (default https://ic0.app)', for: ['server'] },
  scrollsCardanoCanisterId: { help: 'the Cardano Scrolls canister', for: ['server'] },
  scrollsBitcoinCanisterId: { help: 'the Bitcoin Scrolls canister', for: ['server'] },
  scrollsRootKey: { help: "the Internet Computer's root key (a local replica)", for: ['server'] },
  appMemoryLimitMb: { help: 'linear memory of one app run, MiB', for: ['server'] },
  appRunConcurrency: { help: 'app preparations and runs at once', for: ['server'] },
  appRunIsolation: { help: 'where spell check / spell prove run contracts (a server: always worker)', for: [] },
  noBundle: { help: 'run from the ES modules of dist/ instead of the bundles (debugging)', for: SERVERS },
  maxBodyBytes: { help: `largest request body`, for: SERVERS },
  inflightBodyBytes: { help: `request bodies in memory at once`, for: SERVERS },
  maxConnections: { help: `connections at once`, for: SERVERS },
  maxConnectionsPerClient: { help: `connections of one client address`, for: SERVERS },
  trustedProxies: { help: 'reverse proxies whose X-Forwarded-For is believed (addresses or CIDRs)', for: SERVERS },
  headersTimeoutMs: { help: `time a client has to send its headers`, for: SERVERS },
  bodyTimeoutMs: { help: `time a client has to send its body`, for: SERVERS },
  idleTimeoutMs: { help: `idle connection timeout`, for: SERVERS },
  maxStreamsPerConnection: { help: `HTTP/2 streams per connection`, for: SERVERS },
  cacheBytes: { help: 'memory of the in-process cache (default 64 MiB)', for: SERVERS },
  drainTimeoutMs: { help: 'after SIGTERM/SIGINT, how long requests in progress may finish (default 30000)', for: SERVERS },
};

const COLUMN = 30;

/** The `Environment` section of a server's `--help`: its variables (aliases in parentheses), from the table. */
export function envHelp(command: EnvCommand): string {
  const rows = (Object.keys(ENV_HELP) as (keyof typeof ENV_NAMES)[])
    .filter((k) => ENV_HELP[k].for.includes(command))
    .map((k) => {
      const [name, ...aliases] = ENV_NAMES[k];
      return [aliases.length ? `${name} (${aliases.join(', ')})` : name, ENV_HELP[k].help] as const;
    });
  // as clap: a name longer than the column puts its help on the next line
  const width = Math.min(COLUMN, Math.max(...rows.map(([n]) => n.length))) + 2;
  const lines = rows.map(([n, h]) => (n.length > COLUMN ? `  ${n}\n  ${' '.repeat(width)}${h}` : `  ${n.padEnd(width)}${h}`));
  return ['Environment (options override it; server limits: docs/server.md "Limits"):', ...lines].join('\n');
}
