/**
 * What apps receive on stdin: CBOR of the tuple `(App, Transaction, x, w)` with
 * `charms_data::Transaction` = `{ins, refs, outs, coin_ins?, coin_outs?, prev_txs, app_public_inputs}`
 * (ins/refs as `[UtxoId, Charms]` pairs, Charms as App-sorted maps, prev_txs by txid).
 */
import { CborWriter } from '../codec/cbor.js';
import { ValueMap, type Value } from '../codec/value.js';
import { compareBytes } from '../util/bytes.js';
import { appToValue, compareApps, utxoIdToBytes, type App, type Data, type UtxoId } from '../model/primitives.js';
import { nativeOutputToValue, type NativeOutput } from '../model/spell.js';
import { chainTxToValue, type ChainTx } from '../model/request.js';

/** Charms of one output: App → Data, App-sorted. */
export type Charms = [App, Data][];

export interface AppTransaction {
  ins: [UtxoId, Charms][];
  refs: [UtxoId, Charms][];
  outs: Charms[];
  coinIns?: NativeOutput[];
  coinOuts?: NativeOutput[];
  prevTxs: [Uint8Array, ChainTx][];
  appPublicInputs: [App, Data][];
}

const charmsValue = (c: Charms): ValueMap =>
  new ValueMap([...c].sort((a, b) => compareApps(a[0], b[0])).map(([a, d]) => [appToValue(a, false), d]));

export function transactionValue(tx: AppTransaction): ValueMap {
  const m = new ValueMap();
  m.set('ins', tx.ins.map(([u, c]) => [utxoIdToBytes(u), charmsValue(c)] as Value));
  m.set('refs', tx.refs.map(([u, c]) => [utxoIdToBytes(u), charmsValue(c)] as Value));
  m.set('outs', tx.outs.map(charmsValue));
  if (tx.coinIns) m.set('coin_ins', tx.coinIns.map((o) => nativeOutputToValue(o, false)));
  if (tx.coinOuts) m.set('coin_outs', tx.coinOuts.map((o) => nativeOutputToValue(o, false)));
  m.set(
    'prev_txs',
    new ValueMap([...tx.prevTxs].sort((a, b) => compareBytes(a[0], b[0])).map(([id, t]) => [id, chainTxToValue(t)])),
  );
  m.set('app_public_inputs', charmsValue(tx.appPublicInputs));
  return m;
}

export function appStdin(app: App, tx: AppTransaction, x: Data, w: Data): Uint8Array {
  const wr = new CborWriter();
  wr.arrayHeader(4);
  wr.value(appToValue(app, false));
  wr.value(transactionValue(tx));
  wr.value(x ?? null);
  wr.value(w ?? null);
  return wr.finish();
}
