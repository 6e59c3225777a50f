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

export async function readSpellInputs(opts: Options<typeof spellInputOptions>, ctx: CliContext): Promise<SpellInputs> {
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
  if (chain === 'bitcoin') await fetchMissingPrevTxs(spell, prevTxs, ctx);
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
async function fetchMissingPrevTxs(spell: NormalizedSpell, prevTxs: ChainTx[], ctx: CliContext): Promise<void> {
  const source = sourceFromConfig(loadSettings(ctx.env).querySource);
  if (!source) return;
  const have = new Set(prevTxs.map(chainTxId));
  const wanted = [...(spell.tx.ins ?? []), ...(spell.tx.refs ?? [])].map((u) => txidToDisplay(u.txid));
  for (const txid of new Set(wanted)) {
    if (have.has(txid)) continue;
    const { hex } = await fetchCheckedTx(source, txid);
    prevTxs.push({ chain: 'bitcoin', hex });
    have.add(txid);
    ctx.stderr(`fetched prev tx ${txid} from ${source.name}\n`);
  }
}
