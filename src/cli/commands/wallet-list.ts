import type { Run } from '../define.js';
import type { walletListOptions } from '../options.js';
import { documents } from '../output.js';
import { ValueMap } from '../../codec/value.js';
import { useFastProofBackend } from '../../groth16/init.js';
import { loadSettings } from '../../settings/settings.js';
import { walletNodeOf } from '../../sources/bitcoin-node.js';
import { listWalletCharms } from '../../query/wallet-list.js';

/**
 * `wallet list [--json] [--mock]`: the wallet's UTXOs that carry charms (query/wallet-list.ts),
 * through Bitcoin Core RPC when `BITCOIN_RPC_URL` is set, else `bitcoin-cli`. `Looking at tx
 * <txid>...` on stderr per transaction; each match as a YAML document after a `---` line (then an
 * empty line) or as pretty JSON, as the reference prints them.
 */
const run: Run<typeof walletListOptions> = async ({ opts }, ctx) => {
  const mock = opts.mock;
  const settings = loadSettings(ctx.env);
  const found = await listWalletCharms(walletNodeOf(settings.querySource, settings.nodeClient, ctx.env), {
    mock,
    onTx: (txid) => ctx.stderr(`Looking at tx ${txid}...\n`),
    // for more than a few spells, loading the WASM pairing backend (≈60–100 ms) pays for itself
    beforeVerify: async (n) => {
      if (n >= 8) await useFastProofBackend((m) => ctx.stderr(`${m}\n`), { mockProofs: mock });
    },
  });
  const entries = found.map(
    (w) =>
      new ValueMap([
        ['utxo_id', w.utxoId],
        ['confirmations', BigInt(w.confirmations)],
        ['sats', w.sats],
        ['charms', new ValueMap(w.charms)],
      ]),
  );
  return documents(entries, opts.json ? 'json' : 'yaml');
};
export default run;
