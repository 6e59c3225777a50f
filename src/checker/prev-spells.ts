/**
 * The spells of prerequisite transactions as the checker sees them (the reference's
 * `virtual_spell`): a verified spell with `coins` = all outputs, or, for a transaction without a
 * valid spell, an empty spell whose `ins` are all its inputs and `coins` all its outputs.
 */
import { CharmsError } from '../errors.js';
import { fromHex, toHex } from '../util/bytes.js';
import { parseTx, txid as bitcoinTxid, type BitcoinTx } from '../bitcoin/tx.js';
import { extractAndVerifyBitcoin } from '../verify/bitcoin.js';
import type { ChainTx } from '../model/request.js';
import { cardanoTxid, parseCardanoTx } from '../cardano/tx.js';
import { extractAndVerifyCardanoTx, parseInputs, parseOutputs } from '../cardano/extract.js';
import type { NormalizedSpell } from '../model/spell.js';

export interface PrevSpell {
  /** Internal byte order. */
  txid: Uint8Array;
  spell: NormalizedSpell;
  /** Number of outputs of the transaction. */
  numOuts: number;
  tx: ChainTx;
  /** Whether the transaction carried a valid spell. */
  verified: boolean;
}

const allCoins = (tx: BitcoinTx) => tx.outputs.map((o) => ({ amount: o.value, dest: o.script }));

function cardanoVirtualSpell(t: ChainTx, mock: boolean): PrevSpell {
  const bytes = fromHex(t.hex, 'prev_txs');
  const tx = parseCardanoTx(bytes);
  const txid = cardanoTxid(tx);
  const outs = parseOutputs(tx);
  const coins = outs.map((o) => ({ amount: o.lovelace, dest: o.address }));
  try {
    const spell = extractAndVerifyCardanoTx(bytes, mock);
    return { txid, spell: { ...spell, tx: { ...spell.tx, coins } }, numOuts: outs.length, tx: t, verified: true };
  } catch (e) {
    if (e instanceof CharmsError && e.code === 'INVALID_TX') throw e;
    // Charms held as plain native tokens (moved by ordinary wallets) are not read back yet.
    const spell: NormalizedSpell = { version: 0, tx: { ins: parseInputs(tx), outs: [], coins }, app_public_inputs: [], versioned_apps: [], mock: false };
    return { txid, spell, numOuts: outs.length, tx: t, verified: false };
  }
}

export function virtualSpell(t: ChainTx, mock: boolean): PrevSpell {
  if (t.chain === 'cardano') return cardanoVirtualSpell(t, mock);
  const bytes = fromHex(t.hex, 'prev_txs');
  const tx = parseTx(bytes);
  const txid = bitcoinTxid(tx);
  try {
    const spell = extractAndVerifyBitcoin(bytes, mock);
    return { txid, spell: { ...spell, tx: { ...spell.tx, coins: allCoins(tx) } }, numOuts: tx.outputs.length, tx: t, verified: true };
  } catch (e) {
    if (e instanceof CharmsError && e.code === 'INVALID_TX') throw e;
    const spell: NormalizedSpell = {
      version: 0,
      tx: { ins: tx.inputs.map((i) => ({ txid: i.txid, vout: i.vout })), outs: [], coins: allCoins(tx) },
      app_public_inputs: [],
      versioned_apps: [],
      mock: false,
    };
    return { txid, spell, numOuts: tx.outputs.length, tx: t, verified: false };
  }
}

/** Prev spells by txid (hex of internal order). */
export function prevSpells(prevTxs: ChainTx[], mock: boolean): Map<string, PrevSpell> {
  const out = new Map<string, PrevSpell>();
  for (const t of prevTxs) {
    const p = virtualSpell(t, mock);
    out.set(toHex(p.txid), p);
  }
  return out;
}
