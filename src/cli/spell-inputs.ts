/** Reads the options `spell check` and `spell prove` share into the model's SpellInputs. */
import { resolve } from 'node:path';
import type { CliContext, Options } from './define.js';
import type { spellInputOptions } from './options.js';
import { readFileBytes, readFileText, readInput } from './io.js';
import { parseAppSignatures, parseBeamedFrom, parsePrevTx, parsePrivateInputs, parseSpellText } from '../model/inputs.js';
import { chainTxid, detectChain } from '../chains/detect.js';
import type { ChainTx, SpellInputs } from '../model/request.js';
import { txidToDisplay, type B32 } from '../model/primitives.js';
import type { NormalizedSpell } from '../model/spell.js';
import { vkOfBinary } from '../keys/app-key.js';
import { loadSettings } from '../settings/settings.js';
import { fetchCheckedTx, sourceFromConfig } from '../sources/tx-sources.js';
import { blockSourceFromConfig } from '../sources/chain-sources.js';
import { decodeAddress, isTagValidFor } from '../bitcoin/address.js';
import { BITCOIN_NETWORKS, type BitcoinNetwork } from '../model/network.js';
import { CharmsError } from '../errors.js';
import type { SourceConfig } from '../settings/settings.js';

/**
 * `changeAddress` (spell prove): refused when the inputs are known to be on another network than
 * it (their transactions came from the configured source, whose network is asked).
 */
export async function readSpellInputs(opts: Options<typeof spellInputOptions>, ctx: CliContext, changeAddress?: string): Promise<SpellInputs> {
  const file = (p: string | undefined, what: string) => (p === undefined ? undefined : readFileText(resolve(ctx.cwd, p), what));
  const spell = parseSpellText(await readInput(ctx, opts.spell, 'spell'));
  const pi = file(opts['private-inputs'], 'private inputs');
  const sigs = file(opts['app-signatures'], 'app signatures');
  const beamed = opts['beamed-from'];
  const binaries = opts['app-bins'].map((p) => {
    const wasm = readFileBytes(resolve(ctx.cwd, p), 'app binary');
    return [vkOfBinary(wasm), wasm] as [B32, Uint8Array];
  });
  const chain = opts.chain;
  const prevTxs = opts['prev-txs'].map((s, i) => parsePrevTx(s, detectChain, i));
  if (chain === 'bitcoin') await fetchMissingPrevTxs(spell, prevTxs, ctx, changeAddress);
  return {
    spell,
    app_private_inputs: pi === undefined ? [] : parsePrivateInputs(pi),
    tx_ins_beamed_source_utxos: beamed === undefined ? new Map() : parseBeamedFrom(beamed),
    binaries,
    app_signatures: sigs === undefined ? [] : parseAppSignatures(sigs),
    prev_txs: prevTxs,
    chain,
  };
}

/** The Charms txid (display hex) of a prerequisite transaction. */
const chainTxId = (t: ChainTx): string => txidToDisplay(chainTxid(t, 'prev-txs'));

/**
 * Beyond the reference: when a transaction source is configured (ESPLORA_URL, or the Bitcoin Core
 * RPC settings of the query service), the transactions creating `tx.ins` and `tx.refs` that
 * `--prev-txs` does not give are fetched, each checked to hash to the txid asked for, and named
 * on stderr.
 */
async function fetchMissingPrevTxs(spell: NormalizedSpell, prevTxs: ChainTx[], ctx: CliContext, changeAddress: string | undefined): Promise<void> {
  const config = loadSettings(ctx.env).querySource;
  const source = sourceFromConfig(config);
  if (!source) return;
  let fetched = false;
  const have = new Set(prevTxs.map(chainTxId));
  const wanted = [...(spell.tx.ins ?? []), ...(spell.tx.refs ?? [])].map((u) => txidToDisplay(u.txid));
  for (const txid of new Set(wanted)) {
    if (have.has(txid)) continue;
    const { hex } = await fetchCheckedTx(source, txid);
    prevTxs.push({ chain: 'bitcoin', hex });
    have.add(txid);
    fetched = true;
    ctx.stderr(`fetched prev tx ${txid} from ${source.name}\n`);
  }
  if (fetched && changeAddress !== undefined) await checkChangeNetwork(changeAddress, config);
}

/**
 * The change address against the network of the source the inputs came from: a mainnet address
 * for testnet4 coins (or the reverse) is refused before any contract runs. A source that cannot
 * tell its network (no block routes) is not asked further: the check is the CLI's own, beyond
 * the reference.
 */
async function checkChangeNetwork(changeAddress: string, config: SourceConfig): Promise<void> {
  const blocks = blockSourceFromConfig(config);
  let net: BitcoinNetwork;
  try {
    net = await blocks!.network();
  } catch {
    return;
  }
  const { tag } = decodeAddress(changeAddress);
  if (isTagValidFor(tag, net.coreChain)) return;
  const hrp = net.hrp === 'bc' ? 'bc1…' : net.hrp === 'tb' ? 'tb1…' : 'bcrt1…';
  const own = (['mainnet', 'testnet', 'regtest'] as const).find((n) => isTagValidFor(tag, BITCOIN_NETWORKS[n].coreChain)) ?? 'unknown';
  throw new CharmsError(
    'INVALID_INPUT',
    `--change-address ${changeAddress}: a ${own} address, but the inputs are on ${net.name} (their transactions came from ${blocks!.name}): give a ${net.name} change address (${hrp})`,
  );
}
