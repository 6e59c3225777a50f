import type { CommandDef } from '../define.js';
import { optFlag } from '../io.js';
import { ValueMap } from '../../codec/value.js';
import { toJsonPretty } from '../../codec/json.js';
import { toYaml } from '../../codec/yaml.js';
import { useFastProofBackend } from '../../proof/init.js';
import { loadSettings } from '../../settings/settings.js';
import { walletNodeOf } from '../../sources/bitcoin-node.js';
import { listWalletCharms } from '../../query/wallet-list.js';

/**
 * `wallet list [--json] [--mock]`: the wallet's UTXOs that carry charms (query/wallet-list.ts),
 * through Bitcoin Core RPC when `BITCOIN_RPC_URL` is set, else `bitcoin-cli`. `Looking at tx
 * <txid>...` on stderr per transaction; each match as a YAML document after a `---` line (then an
 * empty line) or as pretty JSON, as the reference prints them.
 */
const run: NonNullable<CommandDef['run']> = async (a, ctx) => {
  const mock = optFlag(a, 'mock');
  const json = optFlag(a, 'json');
  const settings = loadSettings(ctx.env);
  const found = await listWalletCharms(walletNodeOf(settings.querySource, settings.nodeClient, ctx.env), {
    mock,
    onTx: (txid) => ctx.stderr(`Looking at tx ${txid}...\n`),
    // for more than a few spells, loading the WASM pairing backend (≈60–100 ms) pays for itself
    beforeVerify: async (n) => {
      if (n >= 8) await useFastProofBackend((m) => ctx.stderr(`${m}\n`), { mockProofs: mock });
    },
  });
  for (const w of found) {
    const entry = new ValueMap([
      ['utxo_id', w.utxoId],
      ['confirmations', BigInt(w.confirmations)],
      ['sats', w.sats],
      ['charms', new ValueMap(w.charms)],
    ]);
    ctx.stdout(json ? `${toJsonPretty(entry)}\n` : `---\n${toYaml(entry)}\n`);
  }
};
export default run;
