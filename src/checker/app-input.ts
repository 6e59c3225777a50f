/**
 * What apps receive on stdin: CBOR (binary face) of the tuple `(App, Transaction, x, w)`, where
 * `Transaction` is charms-data's, as the reference's `to_tx` builds it from the spell:
 *
 *   { ins: [[UtxoId, Charms]…], refs: [[UtxoId, Charms]…], outs: [Charms…],
 *     coin_ins?: [NativeOutput…], coin_outs?: [NativeOutput…],
 *     prev_txs: {TxId: Tx…}, app_public_inputs: {App: Data…} }
 *
 * UtxoId = 36-byte string (txid + vout LE), TxId = 32-byte string, App = [tag, [32 uints],
 * [32 uints]], Charms = map App → Data in App order, NativeOutput = {amount, dest: [uints],
 * content?}, Tx = `{bitcoin: hex}` / `{bitcoin: {tx, proof, headers}}` / `{cardano: …}`.
 */
import { CharmsError } from '../errors.js';
import { CborWriter } from '../codec/cbor.js';
import { ValueMap, type Value } from '../codec/value.js';
import { compareBytes, toHex } from '../util/bytes.js';
import { appToValue, compareApps, utxoIdToBytes, utxoIdToString, type App, type Data, type UtxoId } from '../model/primitives.js';
import { nativeOutputToValue, type BeamSource, type Charms, type NativeOutput, type NormalizedSpell } from '../model/spell.js';
import { chainTxToValue, type ChainTx } from '../model/request.js';
import { charmsHeldBy, charmsOf, type PrevSpell } from './prev-spells.js';

export interface AppTransaction {
  ins: [UtxoId, Charms][];
  refs: [UtxoId, Charms][];
  outs: Charms[];
  coinIns?: NativeOutput[];
  coinOuts?: NativeOutput[];
  /** Internal-order txid → the transaction. */
  prevTxs: [Uint8Array, ChainTx][];
  appPublicInputs: [App, Data][];
}

const charmsValue = (c: Charms): ValueMap => new ValueMap([...c].sort((a, b) => compareApps(a[0], b[0])).map(([a, d]) => [appToValue(a, false), d]));

const utxoCharmsValue = ([u, c]: [UtxoId, Charms]): Value => [utxoIdToBytes(u), charmsValue(c)];

/** `charms_data::Transaction` in the binary face. */
function transactionValue(tx: AppTransaction): ValueMap {
  const m = new ValueMap();
  m.set('ins', tx.ins.map(utxoCharmsValue));
  m.set('refs', tx.refs.map(utxoCharmsValue));
  m.set('outs', tx.outs.map(charmsValue));
  if (tx.coinIns)
    m.set(
      'coin_ins',
      tx.coinIns.map((o) => nativeOutputToValue(o, false)),
    );
  if (tx.coinOuts)
    m.set(
      'coin_outs',
      tx.coinOuts.map((o) => nativeOutputToValue(o, false)),
    );
  const byId = new Map<string, [Uint8Array, ChainTx]>();
  for (const [id, t] of tx.prevTxs) byId.set(toHex(id), [id, t]); // BTreeMap: one entry per txid, last wins
  m.set('prev_txs', new ValueMap([...byId.values()].sort((a, b) => compareBytes(a[0], b[0])).map(([id, t]) => [id, chainTxToValue(t)])));
  m.set('app_public_inputs', charmsValue(tx.appPublicInputs));
  return m;
}

/** The stdin of one app run: CBOR of `[app, tx, x, w]` (null for empty data). */
export function appStdin(app: App, tx: AppTransaction, x: Data, w: Data): Uint8Array {
  const wr = new CborWriter();
  wr.arrayHeader(4);
  wr.value(appToValue(app, false));
  wr.value(transactionValue(tx));
  wr.value(x ?? null);
  wr.value(w ?? null);
  return wr.finish();
}

/**
 * `to_tx`: the transaction the apps see. Inputs and refs carry the charms their UTXO holds (a
 * beamed input: its beaming source's); `coin_ins` are the spent outputs' coins (for a beamed input,
 * the destination UTXO's own coin); `coin_outs` the spell's `coins`.
 */
export function appTransaction(spell: NormalizedSpell, prev: Map<string, PrevSpell>, beamedFrom: Map<number, BeamSource>): AppTransaction {
  const ins = spell.tx.ins;
  if (!ins) throw new CharmsError('INVALID_SPELL', 'spell.tx.ins must be present');
  const beamSourceOf = new Map<string, UtxoId>();
  for (const [i, b] of beamedFrom) {
    const u = ins[i];
    if (!u) throw new CharmsError('INVALID_SPELL', `beamed-from refers to input #${i}, but the spell has ${ins.length} input(s)`);
    beamSourceOf.set(utxoIdToString(u), b.utxo);
  }
  const fromUtxo = (u: UtxoId): [UtxoId, Charms] => [u, charmsHeldBy(prev, u, beamSourceOf.get(utxoIdToString(u)))];
  const coinIn = (u: UtxoId, i: number): NativeOutput => {
    const p = prev.get(toHex(u.txid));
    const c = p?.spell.tx.coins?.[u.vout];
    if (!p || !c)
      throw new CharmsError('INVALID_SPELL', `input #${i} ${utxoIdToString(u)} is not created by the given prev_txs (its transaction has no such output)`);
    if (p.unrenderedCoins?.has(u.vout))
      throw new CharmsError(
        'UNSUPPORTED',
        `input ${utxoIdToString(u)}: its Cardano output carries a datum or script reference, which cannot be given to apps as coin_ins yet`,
      );
    return c;
  };
  const tx: AppTransaction = {
    ins: ins.map(fromUtxo),
    refs: (spell.tx.refs ?? []).map(fromUtxo),
    outs: spell.tx.outs.map((n) => charmsOf(spell, n)),
    coinIns: ins.map(coinIn),
    prevTxs: [...prev.values()].map((p) => [p.txid, p.tx] as [Uint8Array, ChainTx]),
    appPublicInputs: spell.app_public_inputs,
  };
  if (spell.tx.coins) tx.coinOuts = spell.tx.coins;
  return tx;
}
