/**
 * Writes the Cardano builder's transaction: outputs, input sets, redeemers, the
 * `script_data_hash` and the whole Conway transaction (body, witness set with redeemers and
 * PlutusV3 scripts, is_valid, no auxiliary data), with canonical (sorted) map orders.
 */
import { blake2b } from '@noble/hashes/blake2.js';
import { CborWriter } from '../codec/cbor.js';
import { compareBytes, concatBytes, fromHex, reversed } from '../util/bytes.js';
import type { UtxoId } from '../model/primitives.js';
import type { Assets } from './tx.js';
import type { OutputContentParts } from './content.js';
import { writeMultiAsset } from './multiasset.js';
import { writePlutusBytes } from './plutus-encode.js';
import type { CardanoProtocolParams } from './protocol-params.js';
import { SCROLLS_VKEY_HASH_HEX } from './constants.js';

/** One output as written: address, lovelace and the parts of its content. */
export interface OutputSpec extends OutputContentParts {
  address: Uint8Array;
  lovelace: bigint;
}

function writeOutput(w: CborWriter, o: OutputSpec): void {
  const n = 2 + (o.datum ? 1 : 0) + (o.scriptRef ? 1 : 0);
  w.mapHeader(n);
  w.int(0);
  w.bytes(o.address);
  w.int(1);
  const hasAssets = [...o.assets.values()].some((m) => m.size > 0);
  if (hasAssets) {
    w.arrayHeader(2);
    w.int(o.lovelace);
    writeMultiAsset(w, o.assets);
  } else w.int(o.lovelace);
  if (o.datum) {
    w.int(2);
    w.arrayHeader(2);
    if ('hash' in o.datum) {
      w.int(0);
      w.bytes(o.datum.hash);
    } else {
      w.int(1);
      w.head(6, 24);
      w.bytes(o.datum.inlineCbor);
    }
  }
  if (o.scriptRef) {
    w.int(3);
    const inner = new CborWriter();
    inner.arrayHeader(2);
    inner.int(o.scriptRef[0]);
    inner.bytes(o.scriptRef[1]);
    w.head(6, 24);
    w.bytes(inner.finish());
  }
}

const outputSize = (o: OutputSpec): number => {
  const w = new CborWriter();
  writeOutput(w, o);
  return w.finish().length;
};

/** The ledger's minimum lovelace of an output (Babbage rule: (160 + size) × coinsPerUTxOByte). */
export const minLovelace = (o: OutputSpec, p: CardanoProtocolParams): bigint => (160n + BigInt(outputSize(o))) * p.utxoCostPerByte;

export interface TxInputRef {
  hash: Uint8Array;
  index: number;
}

export const inputRef = (u: UtxoId): TxInputRef => ({ hash: reversed(u.txid), index: u.vout });
export const compareInputRefs = (a: TxInputRef, b: TxInputRef): number => compareBytes(a.hash, b.hash) || a.index - b.index;

function writeInputSet(w: CborWriter, refs: TxInputRef[]): void {
  w.head(6, 258);
  w.arrayHeader(refs.length);
  for (const r of refs) {
    w.arrayHeader(2);
    w.bytes(r.hash);
    w.int(r.index);
  }
}

export interface RedeemerSpec {
  tag: number;
  index: number;
  data: Uint8Array; // raw bounded bytes
  units: { mem: bigint; steps: bigint };
}

export function redeemersCbor(rs: RedeemerSpec[]): Uint8Array {
  const w = new CborWriter();
  w.arrayHeader(rs.length);
  for (const r of rs) {
    w.arrayHeader(4);
    w.int(r.tag);
    w.int(r.index);
    writePlutusBytes(w, r.data);
    w.arrayHeader(2);
    w.int(r.units.mem);
    w.int(r.units.steps);
  }
  return w.finish();
}

/** The PlutusV3 language view `{2: [cost model]}` as hashed into `script_data_hash`. */
export function plutusV3LanguageView(p: CardanoProtocolParams): Uint8Array {
  const w = new CborWriter();
  w.mapHeader(1);
  w.int(2);
  w.arrayHeader(p.plutusV3CostModel.length);
  for (const c of p.plutusV3CostModel) w.int(c);
  return w.finish();
}

/** `script_data_hash` = blake2b-256(redeemers ‖ language views) (this builder attaches no datums). */
export const scriptDataHash = (redeemers: Uint8Array, p: CardanoProtocolParams): Uint8Array =>
  blake2b(concatBytes(redeemers, plutusV3LanguageView(p)), { dkLen: 32 });

/** Everything the transaction body and witness set are written from. */
export interface TxParts {
  inputs: TxInputRef[];
  outputs: OutputSpec[];
  fee: bigint;
  withdrawal: Uint8Array;
  mint: Assets;
  scriptDataHash: Uint8Array;
  collateral: TxInputRef;
  reference: TxInputRef;
  networkId: number;
  scripts: Uint8Array[];
  redeemers: Uint8Array;
}

export function encodeTx(x: TxParts): Uint8Array {
  const w = new CborWriter();
  w.arrayHeader(4);
  const hasMint = x.mint.size > 0;
  w.mapHeader(9 + (hasMint ? 1 : 0));
  w.int(0);
  writeInputSet(w, x.inputs);
  w.int(1);
  w.arrayHeader(x.outputs.length);
  for (const o of x.outputs) writeOutput(w, o);
  w.int(2);
  w.int(x.fee);
  w.int(5);
  w.mapHeader(1);
  w.bytes(x.withdrawal);
  w.int(0);
  if (hasMint) {
    w.int(9);
    writeMultiAsset(w, x.mint, true);
  }
  w.int(11);
  w.bytes(x.scriptDataHash);
  w.int(13);
  writeInputSet(w, [x.collateral]);
  w.int(14);
  w.head(6, 258);
  w.arrayHeader(1);
  w.bytes(fromHex(SCROLLS_VKEY_HASH_HEX));
  w.int(15);
  w.int(x.networkId);
  w.int(18);
  writeInputSet(w, [x.reference]);
  // witness set: redeemers (5) and PlutusV3 scripts (7); vkey witnesses are added by the signers
  w.mapHeader(x.scripts.length > 0 ? 2 : 1);
  w.int(5);
  w.raw(x.redeemers);
  if (x.scripts.length > 0) {
    w.int(7);
    w.head(6, 258);
    w.arrayHeader(x.scripts.length);
    for (const s of x.scripts) w.bytes(s);
  }
  w.byte(0xf5); // is_valid
  w.byte(0xf6); // no auxiliary data
  return w.finish();
}
