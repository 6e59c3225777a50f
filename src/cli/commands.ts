/**
 * The `charms` command tree (one definition for parser, help and completions). Handlers are
 * thin shells over library functions, loaded lazily so `--help` stays fast.
 */
import type { CommandDef, OptionDef } from './define.js';
import { SHELLS, completionScript, type Shell } from './completions.js';

const chainOpt = (help = 'Target chain'): OptionDef => ({ name: 'chain', value: 'CHAIN', choices: ['bitcoin', 'cardano'], default: 'bitcoin', help });
const mockOpt = (help: string): OptionDef => ({ name: 'mock', help });

const spellCheckOptions: OptionDef[] = [
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
  chainOpt(),
  mockOpt('Accept mock proofs when resolving prerequisite spells'),
];

/** How to set completions up, dynamic (recommended, clap's CompleteEnv) or static. */
const completionsHelp = (bin: string): string => `Dynamic completions (recommended): they follow the installed ${bin}.
  Bash (add to ~/.bashrc):        source <(COMPLETE=bash ${bin})
  Zsh (add to ~/.zshrc):          source <(COMPLETE=zsh ${bin})
  Fish (add to ~/.config/fish/completions/${bin}.fish):   COMPLETE=fish ${bin} | source
  Elvish (add to ~/.elvish/rc.elv):   eval (E:COMPLETE=elvish ${bin} | slurp)
  PowerShell (add to $PROFILE):   $env:COMPLETE = "powershell"; ${bin} | Out-String | Invoke-Expression; Remove-Item Env:\\COMPLETE
Static completions: a generated script, for shells where the dynamic ones cannot run.
  Bash:        source <(${bin} completions bash)
  Zsh:         source <(${bin} completions zsh)
  Fish:        ${bin} completions fish > ~/.config/fish/completions/${bin}.fish
  PowerShell:  ${bin} completions powershell | Out-String | Invoke-Expression
  Elvish:      eval (${bin} completions elvish | slurp)
Then open a new shell and type \`${bin} <TAB>\`.`;

const lazy =
  (load: () => Promise<{ default: NonNullable<CommandDef['run']> }>): NonNullable<CommandDef['run']> =>
  async (a, ctx) =>
    (await load()).default(a, ctx);

export function commandTree(binName: string): CommandDef {
  return {
    name: binName,
    about: 'Charms: programmable assets on Bitcoin and Cardano',
    subcommands: [
      {
        name: 'server',
        about: 'Start the proving server (POST /spells/prove, GET /ready)',
        long: 'Start the proving server: POST /spells/prove and GET /ready over HTTP/1.1 and h2c on one port.\nMock mode (--mock or MOCK=1) proves locally and offline; real proving uses APP_ZK_PROVER / SPELL_ZK_PROVER.',
        options: [
          { name: 'ip', value: 'IP', type: 'ip', default: '0.0.0.0', help: 'IP address to listen on' },
          { name: 'port', value: 'PORT', type: 'u16', default: '17784', help: 'Port to listen on' },
          mockOpt('Serve mock proofs (offline, for development); same as MOCK=1'),
        ],
        run: lazy(() => import('./commands/server.js')),
      },
      {
        name: 'query-server',
        about: 'Start the spell-query service (GET/PUT /spells/<txid>) and the wallet page',
        long:
          'Start the spell-query service: GET /spells/<txid> (transaction from the configured source), PUT /spells/<txid> with {"tx_hex": …},\n' +
          'and a wallet page at / — HTTP/1.1 and h2c on one port. 200 spell, 204 no valid spell, 400, 404 unknown tx, 502/503 source failing/unreachable.\n' +
          '\n' +
          'Transaction source (options override the environment):\n' +
          '  ESPLORA_URL            Esplora-compatible API base, e.g. https://mempool.space/testnet4/api (GET <base>/tx/<txid>/hex)\n' +
          '  BITCOIN_RPC_URL        Bitcoin Core JSON-RPC URL, e.g. http://127.0.0.1:48332 (getrawtransaction; needs -txindex)\n' +
          "  BITCOIN_RPC_COOKIE     path of bitcoind's .cookie file, or\n" +
          '  BITCOIN_RPC_USER, BITCOIN_RPC_PASSWORD   RPC credentials\n' +
          'Without a source only PUT works. Cache: in-process LRU, or Redis with CACHE_URL=redis://…; LOG_LEVEL sets the log level.',
        options: [
          { name: 'ip', value: 'IP', type: 'ip', default: '0.0.0.0', help: 'IP address to listen on' },
          { name: 'port', value: 'PORT', type: 'u16', default: '17785', help: 'Port to listen on' },
          { name: 'esplora-url', value: 'URL', help: 'Esplora-compatible API base URL (env ESPLORA_URL)' },
          { name: 'rpc-url', value: 'URL', help: 'Bitcoin Core JSON-RPC URL (env BITCOIN_RPC_URL)' },
          { name: 'rpc-cookie', value: 'FILE', help: "bitcoind's .cookie file (env BITCOIN_RPC_COOKIE)" },
          mockOpt('Also return mock spells'),
        ],
        run: lazy(() => import('./commands/query-server.js')),
      },
      {
        name: 'index',
        about: 'Follow a Bitcoin node and serve the charms index (what each address holds)',
        long:
          'Follow a Bitcoin node into an index of charm outputs (every spell verified, reorg-safe) and serve its API on one port\n' +
          '(HTTP/1.1 and h2c): GET /v1/status, /v1/addresses/<address>/balances|utxos|history, POST /v1/addresses/balances,\n' +
          'GET /v1/outputs/<txid>:<vout>, /v1/txs/<txid>, /v1/apps/<app>; plus GET/PUT /spells/<txid> and the wallet page. See docs/index.md.\n' +
          'Explorer-compatible for the official wallet: /v1/wallet/..., /v1/transactions/<txid>, /v1/assets/reference-nft/<identity>;\n' +
          'their plain-BTC parts (address UTXOs, fees, broadcast) come from ESPLORA_URL when set, else the node.\n' +
          '\n' +
          'Environment (options override it):\n' +
          '  INDEX_DB_URL           the database: a SQLite file path (default $XDG_DATA_HOME/charms-ts/index-<network>.sqlite) or postgres://…\n' +
          '  BITCOIN_RPC_URL        Bitcoin Core JSON-RPC URL (+ BITCOIN_RPC_COOKIE, or BITCOIN_RPC_USER and BITCOIN_RPC_PASSWORD)\n' +
          '  ESPLORA_URL            Esplora-compatible API base, instead of a node\n' +
          "  BITCOIN_ZMQ_URL        the node's ZMQ publisher (hashblock, sequence): faster than polling, which always continues",
        options: [
          { name: 'ip', value: 'IP', default: '0.0.0.0', help: 'IP address to listen on' },
          { name: 'port', value: 'PORT', default: '17786', help: 'Port to listen on' },
          { name: 'db', value: 'URL', help: 'SQLite file path or postgres:// URL (env INDEX_DB_URL)' },
          { name: 'rpc-url', value: 'URL', help: 'Bitcoin Core JSON-RPC URL (env BITCOIN_RPC_URL)' },
          { name: 'rpc-cookie', value: 'FILE', help: "bitcoind's .cookie file (env BITCOIN_RPC_COOKIE)" },
          { name: 'esplora-url', value: 'URL', help: 'Esplora-compatible API base URL (env ESPLORA_URL)' },
          { name: 'zmq-url', value: 'URL', help: "bitcoind's ZMQ publisher, e.g. tcp://127.0.0.1:28332 (env BITCOIN_ZMQ_URL)" },
          { name: 'network', value: 'NETWORK', choices: ['mainnet', 'testnet', 'testnet4', 'signet', 'regtest'], help: "Network (default: the node's)" },
          { name: 'start-height', value: 'HEIGHT', help: 'First block to index on a new index (default 0)' },
          { name: 'max-reorg-depth', value: 'BLOCKS', default: '100', help: 'Deeper reorgs stop the index (status 503) until it is rebuilt' },
          { name: 'poll-interval', value: 'SECONDS', default: '5', help: 'How often the node is polled (also with ZMQ)' },
          { name: 'answer-cache-mb', value: 'MB', default: '32', help: 'Memory for API answers kept until the index moves (0: none)' },
          { name: 'api-only', help: 'Serve the database without following a node (API replicas on PostgreSQL)' },
          mockOpt('Also index mock spells (regtest, testing); such an index refuses to open without --mock'),
        ],
        run: lazy(() => import('./commands/index-server.js')),
      },
      {
        name: 'spell',
        about: 'Work with spells',
        subcommands: [
          {
            name: 'check',
            about: 'Check a spell: protocol rules and app contracts, without a proof',
            options: spellCheckOptions,
            run: lazy(() => import('./commands/spell-check.js')),
          },
          {
            name: 'prove',
            about: 'Prove a spell and print the unsigned transaction(s)',
            options: [
              ...spellCheckOptions.filter((o) => o.name !== 'mock'),
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
            ],
            run: lazy(() => import('./commands/spell-prove.js')),
          },
          {
            name: 'vk',
            about: 'Print the spell verification key JSON',
            options: [mockOpt('Mock mode: adds "mock": true')],
            run: lazy(() => import('./commands/spell-vk.js')),
          },
        ],
      },
      {
        name: 'tx',
        about: 'Work with transactions',
        subcommands: [
          {
            name: 'show-spell',
            about: 'Extract and verify the spell in a transaction',
            options: [
              { name: 'tx', value: 'TX', required: true, help: 'Transaction hex' },
              chainOpt('Chain of the transaction'),
              { name: 'json', help: 'Print JSON instead of YAML' },
              mockOpt('Accept mock proofs'),
            ],
            run: lazy(() => import('./commands/tx-show-spell.js')),
          },
        ],
      },
      {
        name: 'app',
        about: 'Work with apps',
        subcommands: [
          {
            name: 'new',
            about: 'Create a new app project',
            args: [{ name: 'NAME', required: true, help: 'Project directory name' }],
            options: [{ name: 'template', value: 'TEMPLATE', choices: ['rust', 'assemblyscript'], default: 'rust', help: 'Project template' }],
            run: lazy(() => import('./commands/app-new.js')),
          },
          {
            name: 'build',
            about: 'Build the app to WebAssembly (wasm32-wasip1); prints the .wasm path',
            run: lazy(() => import('./commands/app-build.js')),
          },
          {
            name: 'vk',
            about: 'Print the app verification key (SHA-256 of the binary or of the public key)',
            args: [{ name: 'PATH', help: 'App .wasm binary' }],
            options: [{ name: 'pubkey', value: 'FILE', help: 'Public key file (hex, or an app-key JSON)' }],
            run: lazy(() => import('./commands/app-vk.js')),
          },
          {
            name: 'keygen',
            about: 'Generate a BIP-340 key pair for a versioned app',
            options: [{ name: 'out', value: 'FILE', help: 'Output file [default: .svc/app-key.json]' }],
            run: lazy(() => import('./commands/app-keygen.js')),
          },
          {
            name: 'sign',
            about: 'Sign an app binary (Schnorr over SHA-256 of the binary)',
            options: [
              { name: 'key', value: 'FILE', help: 'Key file [default: .svc/app-key.json]' },
              { name: 'bin', value: 'WASM', help: 'App binary [default: the release build output]' },
              { name: 'out', value: 'FILE', help: 'Output file [default: <wasm>.sig.yaml]; .yaml/.yml: map vk -> signature, else one JSON signature' },
            ],
            run: lazy(() => import('./commands/app-sign.js')),
          },
          {
            name: 'verify',
            about: 'Verify app binary signatures',
            options: [
              { name: 'bin', value: 'WASM', help: 'App binary [default: the release build output]' },
              { name: 'sig', value: 'FILE', help: 'Signature file [default: <wasm>.sig.yaml]' },
            ],
            run: lazy(() => import('./commands/app-verify.js')),
          },
        ],
      },
      {
        name: 'wallet',
        about: 'Wallet commands (Bitcoin Core: BITCOIN_RPC_URL, else bitcoin-cli)',
        subcommands: [
          {
            name: 'list',
            about: 'List wallet UTXOs carrying charms',
            options: [{ name: 'json', help: 'Print JSON instead of YAML' }, mockOpt('Accept mock proofs')],
            run: lazy(() => import('./commands/wallet-list.js')),
          },
        ],
      },
      {
        name: 'network',
        about: 'SP1 Prover Network account and programs',
        subcommands: [
          {
            name: 'status',
            about: 'Account address, $PROVE balance and whether both Charms programs are registered (free, read-only)',
            long:
              'Checks the proving configuration without paying anything: the address of NETWORK_PRIVATE_KEY (the key is never printed),\n' +
              'its $PROVE balance, and whether the spell checker and the proof wrapper are registered where each stage runs.\n' +
              'Environment: APP_ZK_PROVER=network, NETWORK_PRIVATE_KEY, NETWORK_RPC_URL (default https://rpc.mainnet.succinct.xyz),\n' +
              'SPELL_ZK_PROVER=app|network, ZK_GPU_SERVICE_URL (a self-hosted sp1-cluster network-gateway). Exits 1 when it could not prove.',
            run: lazy(() => import('./commands/network-status.js')),
          },
        ],
      },
      {
        name: 'util',
        about: 'Utilities',
        subcommands: [
          {
            name: 'dest',
            about: 'Compute the hex `dest` for tx.coins[].dest',
            options: [
              { name: 'addr', value: 'ADDRESS', help: 'Address (auto-detected: Cardano first, then Bitcoin)' },
              { name: 'apps', value: 'APP', repeatable: true, help: 'App keys tag/identity/vk: the Cardano proxy-script address' },
              { name: 'chain', value: 'CHAIN', choices: ['bitcoin', 'cardano'], help: 'Chain of the address' },
            ],
            run: lazy(() => import('./commands/util-dest.js')),
          },
          {
            name: 'install-circuit-files',
            about: 'Not needed in this build: explains why (circuits live on the proving network; verifying keys are built in)',
            hidden: true,
            run: lazy(() => import('./commands/util-install-circuit-files.js')),
          },
        ],
      },
      {
        name: 'completions',
        about: 'Print shell completions (static; dynamic: COMPLETE=<shell> charms)',
        args: [{ name: 'SHELL', required: true, choices: [...SHELLS], help: 'Shell to generate completions for' }],
        afterHelp: completionsHelp(binName),
        // The tree itself is the input, so this handler lives here (no module cycle).
        run: async (a, ctx) => void ctx.stdout(completionScript(a.args[0] as Shell, commandTree(binName))),
      },
    ],
  };
}
