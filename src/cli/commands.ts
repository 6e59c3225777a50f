/**
 * The `charms` command tree (one definition for parser, help and completions). Handlers are
 * thin shells over library functions, loaded lazily so `--help` stays fast.
 */
import { type ArgDef, type CommandDef, defineCommand, type OptionDef, type Run } from './define.js';
import { completionScript } from './completions.js';
import * as o from './options.js';
import { text } from './output.js';
import { envHelp } from '../settings/env-help.js';

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

/** A handler loaded when its command runs; typed by the handler module's own `Run<…>`. */
const lazy =
  <O extends readonly OptionDef[], A extends readonly ArgDef[]>(load: () => Promise<{ default: Run<O, A> }>): Run<O, A> =>
  async (a, ctx) =>
    (await load()).default(a, ctx);

export function commandTree(binName: string): CommandDef {
  return {
    name: binName,
    about: 'Charms: programmable assets on Bitcoin and Cardano',
    subcommands: [
      defineCommand({
        name: 'server',
        about: 'Start the proving server (POST /spells/prove, GET /ready)',
        long: 'Start the proving server: POST /spells/prove and GET /ready over HTTP/1.1 and h2c on one port.\nMock mode (--mock or MOCK=1) proves locally and offline; real proving uses APP_ZK_PROVER / SPELL_ZK_PROVER.',
        afterHelp: envHelp('server'),
        options: o.serverOptions,
        run: lazy(() => import('./commands/server.js')),
      }),
      defineCommand({
        name: 'query-server',
        about: 'Start the spell-query service (GET/PUT /spells/<txid>) and the wallet page',
        long:
          'Start the spell-query service: GET /spells/<txid> (transaction from the configured source), PUT /spells/<txid> with {"tx_hex": …},\n' +
          'and a wallet page at / — HTTP/1.1 and h2c on one port. 200 spell, 204 no valid spell, 400, 404 unknown tx, 502/503 source failing/unreachable.\n' +
          'Transactions come from ESPLORA_URL or BITCOIN_RPC_URL (below); without a source only PUT works.',
        afterHelp: envHelp('query-server'),
        options: o.queryServerOptions,
        run: lazy(() => import('./commands/query-server.js')),
      }),
      defineCommand({
        name: 'index',
        about: 'Follow a Bitcoin node and serve the charms index (what each address holds)',
        long:
          'Follow a Bitcoin node into an index of charm outputs (every spell verified, reorg-safe) and serve its API on one port\n' +
          '(HTTP/1.1 and h2c): GET /v1/status, /v1/addresses/<address>/balances|utxos|history, POST /v1/addresses/balances,\n' +
          'GET /v1/outputs/<txid>:<vout>, /v1/txs/<txid>, /v1/apps/<app>; plus GET/PUT /spells/<txid> and the wallet page. See docs/index.md.\n' +
          'Explorer-compatible for the official wallet: /v1/wallet/..., /v1/transactions/<txid>, /v1/assets/reference-nft/<identity>;\n' +
          'their plain-BTC parts (address UTXOs, fees, broadcast) come from ESPLORA_URL when set, else the node.',
        afterHelp: envHelp('index'),
        options: o.indexOptions,
        run: lazy(() => import('./commands/index-server.js')),
      }),
      {
        name: 'spell',
        about: 'Work with spells',
        subcommands: [
          defineCommand({
            name: 'check',
            about: 'Check a spell: protocol rules and app contracts, without a proof',
            options: o.spellCheckOptions,
            run: lazy(() => import('./commands/spell-check.js')),
          }),
          defineCommand({
            name: 'prove',
            about: 'Prove a spell and print the unsigned transaction(s)',
            options: o.spellProveOptions,
            run: lazy(() => import('./commands/spell-prove.js')),
          }),
          defineCommand({
            name: 'vk',
            about: 'Print the spell verification key JSON',
            options: o.spellVkOptions,
            run: lazy(() => import('./commands/spell-vk.js')),
          }),
        ],
      },
      {
        name: 'tx',
        about: 'Work with transactions',
        subcommands: [
          defineCommand({
            name: 'show-spell',
            about: 'Extract and verify the spell in a transaction',
            options: o.txShowSpellOptions,
            run: lazy(() => import('./commands/tx-show-spell.js')),
          }),
        ],
      },
      {
        name: 'app',
        about: 'Work with apps',
        subcommands: [
          defineCommand({
            name: 'new',
            about: 'Create a new app project',
            args: o.appNewArgs,
            options: o.appNewOptions,
            run: lazy(() => import('./commands/app-new.js')),
          }),
          defineCommand({
            name: 'build',
            about: 'Build the app to WebAssembly (wasm32-wasip1); prints the .wasm path',
            run: lazy(() => import('./commands/app-build.js')),
          }),
          defineCommand({
            name: 'vk',
            about: 'Print the app verification key (SHA-256 of the binary or of the public key)',
            args: o.appVkArgs,
            options: o.appVkOptions,
            run: lazy(() => import('./commands/app-vk.js')),
          }),
          defineCommand({
            name: 'keygen',
            about: 'Generate a BIP-340 key pair for a versioned app',
            options: o.appKeygenOptions,
            run: lazy(() => import('./commands/app-keygen.js')),
          }),
          defineCommand({
            name: 'sign',
            about: 'Sign an app binary (Schnorr over SHA-256 of the binary)',
            options: o.appSignOptions,
            run: lazy(() => import('./commands/app-sign.js')),
          }),
          defineCommand({
            name: 'verify',
            about: 'Verify app binary signatures',
            options: o.appVerifyOptions,
            run: lazy(() => import('./commands/app-verify.js')),
          }),
        ],
      },
      {
        name: 'wallet',
        about: 'Wallet commands (Bitcoin Core: BITCOIN_RPC_URL, else bitcoin-cli)',
        subcommands: [
          defineCommand({
            name: 'list',
            about: 'List wallet UTXOs carrying charms',
            options: o.walletListOptions,
            run: lazy(() => import('./commands/wallet-list.js')),
          }),
        ],
      },
      {
        name: 'network',
        about: 'SP1 Prover Network account and programs',
        subcommands: [
          defineCommand({
            name: 'status',
            about: 'Account address, $PROVE balance and whether both Charms programs are registered (free, read-only)',
            long:
              'Checks the proving configuration without paying anything: the address of NETWORK_PRIVATE_KEY (the key is never printed),\n' +
              'its $PROVE balance, and whether the spell checker and the proof wrapper are registered where each stage runs.\n' +
              'Environment: APP_ZK_PROVER=network, NETWORK_PRIVATE_KEY, NETWORK_RPC_URL (default https://rpc.mainnet.succinct.xyz),\n' +
              'SPELL_ZK_PROVER=app|network, ZK_GPU_SERVICE_URL (a self-hosted sp1-cluster network-gateway). Exits 1 when it could not prove.',
            run: lazy(() => import('./commands/network-status.js')),
          }),
        ],
      },
      {
        name: 'util',
        about: 'Utilities',
        subcommands: [
          defineCommand({
            name: 'dest',
            about: 'Compute the hex `dest` for tx.coins[].dest',
            options: o.utilDestOptions,
            run: lazy(() => import('./commands/util-dest.js')),
          }),
          defineCommand({
            name: 'install-circuit-files',
            about: 'Not needed in this build: explains why (circuits live on the proving network; verifying keys are built in)',
            hidden: true,
            run: lazy(() => import('./commands/util-install-circuit-files.js')),
          }),
        ],
      },
      defineCommand({
        name: 'completions',
        about: 'Print shell completions (static; dynamic: COMPLETE=<shell> charms)',
        args: o.completionsArgs,
        afterHelp: completionsHelp(binName),
        // The tree itself is the input, so this handler lives here (no module cycle).
        run: async (a) => text(completionScript(a.args.SHELL, commandTree(binName))),
      }),
    ],
  };
}
