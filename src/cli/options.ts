/**
 * The option and argument tables of the `charms` commands, `as const` so each handler's options
 * are typed from its own table (`Args<typeof …>` in define.ts). They live apart from the command
 * tree (commands.ts), which loads the handlers lazily, so a handler can name its table's type
 * without an import cycle.
 */
import { SHELLS } from './completions.js';
import type { ArgDef, OptionDef } from './define.js';

const chainOpt = (help: string) => ({ name: 'chain', value: 'CHAIN', choices: ['bitcoin', 'cardano'], default: 'bitcoin', help }) as const;
const mockOpt = (help: string) => ({ name: 'mock', help }) as const;

/** What `spell check` and `spell prove` read into the model's SpellInputs (spell-inputs.ts). */
export const spellInputOptions = [
  { name: 'spell', value: 'FILE', default: '/dev/stdin', help: 'Spell YAML/JSON file' },
  { name: 'private-inputs', value: 'FILE', help: 'YAML/JSON map tag/identity_hex/vk_hex -> app private input data' },
  { name: 'beamed-from', value: 'STRING', help: 'YAML/JSON map input_index -> ["txid:vout"] or ["txid:vout", nonce]' },
  { name: 'app-bins', value: 'WASM', repeatable: true, help: 'App .wasm binaries (repeatable)' },
  { name: 'app-signatures', value: 'FILE', help: 'YAML/JSON map vk_hex -> {public_key, signature} for versioned apps' },
  {
    name: 'prev-txs',
    value: 'HEX',
    repeatable: true,
    help: 'Prerequisite transactions: plain hex, YAML (!bitcoin/!cardano), JSON {"bitcoin": ...}, or a finality-proof object',
  },
  chainOpt('Target chain'),
] as const satisfies readonly OptionDef[];

/** Where a server listens (serve.ts); each server has its own default port. */
const listenOptions = <P extends string>(port: P) =>
  [
    { name: 'ip', value: 'IP', type: 'ip', default: '0.0.0.0', help: 'IP address to listen on' },
    { name: 'port', value: 'PORT', type: 'u16', default: port, help: 'Port to listen on' },
  ] as const satisfies readonly OptionDef[];

export const serverOptions = [...listenOptions('17784'), mockOpt('Serve mock proofs (offline, for development); same as MOCK=1')] as const;

export const queryServerOptions = [
  ...listenOptions('17785'),
  { name: 'esplora-url', value: 'URL', help: 'Esplora-compatible API base URL (env ESPLORA_URL)' },
  { name: 'rpc-url', value: 'URL', help: 'Bitcoin Core JSON-RPC URL (env BITCOIN_RPC_URL)' },
  { name: 'rpc-cookie', value: 'FILE', help: "bitcoind's .cookie file (env BITCOIN_RPC_COOKIE)" },
  mockOpt('Also return mock spells'),
] as const satisfies readonly OptionDef[];

export const indexOptions = [
  { name: 'ip', value: 'IP', default: '0.0.0.0', help: 'IP address to listen on' },
  { name: 'port', value: 'PORT', default: '17786', help: 'Port to listen on' },
  { name: 'db', value: 'URL', help: 'SQLite file path or postgres:// URL (env INDEX_DB_URL)' },
  { name: 'rpc-url', value: 'URL', help: 'Bitcoin Core JSON-RPC URL (env BITCOIN_RPC_URL)' },
  { name: 'rpc-cookie', value: 'FILE', help: "bitcoind's .cookie file (env BITCOIN_RPC_COOKIE)" },
  { name: 'esplora-url', value: 'URL', help: 'Esplora-compatible API base URL (env ESPLORA_URL)' },
  { name: 'zmq-url', value: 'URL', help: "bitcoind's ZMQ publisher, e.g. tcp://127.0.0.1:28332 (env BITCOIN_ZMQ_URL)" },
  {
    name: 'chain',
    value: 'CHAIN',
    choices: ['bitcoin', 'cardano'],
    help: 'Chain indexed (env INDEX_CHAIN; default bitcoin); one chain per database',
  },
  { name: 'ogmios-url', value: 'URL', help: 'Cardano: Ogmios (run with --include-transaction-cbor), e.g. ws://127.0.0.1:1337 (env OGMIOS_URL)' },
  {
    name: 'network',
    value: 'NETWORK',
    choices: ['mainnet', 'testnet', 'testnet4', 'signet', 'regtest', 'preprod', 'preview'],
    help: "Network (default: the node's; Cardano: mainnet, preprod or preview)",
  },
  {
    name: 'start-height',
    value: 'HEIGHT',
    help: "First block to index on a new index (default: a block below the network's first charms block, docs/index.md; 0 on regtest)",
  },
  {
    name: 'start-point',
    value: 'SLOT.HASH',
    help: "Cardano: the block a new index starts after, <slot>.<block hash> (default: a block before the network's first charms transaction, docs/index.md)",
  },
  { name: 'start-slot', value: 'SLOT', help: 'Cardano: 0 starts a new index at the origin (the genesis)' },
  {
    name: 'max-reorg-depth',
    value: 'BLOCKS',
    help: 'Deeper reorgs stop the index (status 503) until it is rebuilt (default 100 on Bitcoin, 2160 = k on Cardano)',
  },
  {
    name: 'verify-workers',
    value: 'N',
    help: 'Threads verifying spells off the event loop (env INDEX_VERIFY_WORKERS; default: the cores; 0: on the event loop)',
  },
  { name: 'poll-interval', value: 'SECONDS', default: '5', help: 'How often the node is polled (also with ZMQ)' },
  {
    name: 'fetch-ahead',
    value: 'BLOCKS',
    default: '4',
    help: 'Blocks fetched while one is verified and written; their spells are verified while they wait (memory: up to this many blocks)',
  },
  {
    name: 'commit-blocks',
    value: 'BLOCKS',
    default: '8',
    help: 'Blocks per database transaction while further than this behind the node (1 = one per block; near the tip always one)',
  },
  {
    name: 'recent-tx-blocks',
    value: 'BLOCKS',
    default: '144',
    help: "The last blocks whose transactions' heights are kept, for confirmations a node without -txindex cannot give (0: none; at most 1008)",
  },
  { name: 'answer-cache-mb', value: 'MB', default: '32', help: 'Memory for API answers kept until the index moves (0: none)' },
  { name: 'likes', help: "Keep the explorer's likes (POST/DELETE /v1/charms/like, taken by the indexer; counted in its charm answers): off by default" },
  { name: 'api-only', help: 'Serve the database without following a node (API replicas; a SQLite reader follows a file rebuilt or moved to its path)' },
  mockOpt('Also index mock spells (regtest, testing); such an index refuses to open without --mock'),
] as const satisfies readonly OptionDef[];

export const spellCheckOptions = [...spellInputOptions, mockOpt('Accept mock proofs when resolving prerequisite spells')] as const;

export const spellProveOptions = [
  ...spellInputOptions,
  { name: 'change-address', value: 'CHANGE_ADDRESS', required: true, help: 'Change address on the target chain' },
  { name: 'fee-rate', value: 'FEE_RATE', type: 'f64', default: '2.0', help: 'Bitcoin fee rate in sats/vB (>= 1.0)' },
  { name: 'collateral-utxo', aliases: ['collateral'], value: 'UTXO', help: 'Collateral UTXO txid:vout (required for Cardano)' },
  { name: 'payload', help: 'Print the ProveRequest instead of proving' },
  {
    name: 'output',
    short: 'o',
    value: 'FORMAT',
    choices: ['json', 'cbor'],
    default: 'json',
    requires: 'payload',
    help: 'Payload format (requires --payload)',
  },
  mockOpt('Prove locally in mock mode instead of calling the proving service'),
] as const satisfies readonly OptionDef[];

export const spellVkOptions = [mockOpt('Mock mode: adds "mock": true')] as const;

export const txShowSpellOptions = [
  { name: 'tx', value: 'TX', required: true, help: 'Transaction hex' },
  chainOpt('Chain of the transaction'),
  { name: 'json', help: 'Print JSON instead of YAML' },
  mockOpt('Accept mock proofs'),
] as const satisfies readonly OptionDef[];

export const appNewArgs = [{ name: 'NAME', required: true, help: 'Project directory name' }] as const satisfies readonly ArgDef[];
export const appNewOptions = [
  { name: 'template', value: 'TEMPLATE', choices: ['rust', 'assemblyscript'], default: 'rust', help: 'Project template' },
] as const satisfies readonly OptionDef[];

export const appVkArgs = [{ name: 'PATH', help: 'App .wasm binary' }] as const satisfies readonly ArgDef[];
export const appVkOptions = [{ name: 'pubkey', value: 'FILE', help: 'Public key file (hex, or an app-key JSON)' }] as const satisfies readonly OptionDef[];

export const appKeygenOptions = [{ name: 'out', value: 'FILE', help: 'Output file [default: .svc/app-key.json]' }] as const satisfies readonly OptionDef[];

export const appSignOptions = [
  { name: 'key', value: 'FILE', help: 'Key file [default: .svc/app-key.json]' },
  { name: 'bin', value: 'WASM', help: 'App binary [default: the release build output]' },
  { name: 'out', value: 'FILE', help: 'Output file [default: <wasm>.sig.yaml]; .yaml/.yml: map vk -> signature, else one JSON signature' },
] as const satisfies readonly OptionDef[];

export const appVerifyOptions = [
  { name: 'bin', value: 'WASM', help: 'App binary [default: the release build output]' },
  { name: 'sig', value: 'FILE', help: 'Signature file [default: <wasm>.sig.yaml]' },
] as const satisfies readonly OptionDef[];

export const walletListOptions = [{ name: 'json', help: 'Print JSON instead of YAML' }, mockOpt('Accept mock proofs')] as const;

export const utilDestOptions = [
  { name: 'addr', value: 'ADDRESS', help: 'Address (auto-detected: Cardano first, then Bitcoin)' },
  { name: 'apps', value: 'APP', repeatable: true, help: 'App keys tag/identity/vk: the Cardano proxy-script address' },
  { name: 'chain', value: 'CHAIN', choices: ['bitcoin', 'cardano'], help: 'Chain of the address' },
] as const satisfies readonly OptionDef[];

export const completionsArgs = [
  { name: 'SHELL', required: true, choices: SHELLS, help: 'Shell to generate completions for' },
] as const satisfies readonly ArgDef[];
