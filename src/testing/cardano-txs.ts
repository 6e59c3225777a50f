/**
 * Fabricated Cardano transactions for the Cardano index's tests: Conway transactions with any
 * inputs and outputs (native assets, inline datum bytes), valid or phase-2 invalid (collateral
 * inputs and a collateral return), and Byron transactions as Ogmios sends them (`[tx,
 * witnesses]`). Nothing checks witnesses or scripts here: a fabricated transaction may spend any
 * output. `realCardanoVectors()` reads the real Cardano transactions of `vectors/chain`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { blake2b } from '@noble/hashes/blake2.js';
import { CborReader, CborWriter } from '../codec/cbor.js';
import { fromHex, toHex } from '../util/bytes.js';
import { sharedPath } from './shared.js';

export interface TxRef {
  /** Cardano tx hash hex (as explorers show it). */
  txid: string;
  index: number;
}

interface TxOutSpec {
  address: Uint8Array;
  lovelace: bigint;
  /** [policy hex, asset name hex, quantity] */
  assets?: [string, string, bigint][];
  /** An inline datum holding these Plutus bytes. */
  datumBytes?: Uint8Array;
}

export interface ConwayTxSpec {
  inputs: TxRef[];
  outputs: TxOutSpec[];
  /** Default true; false: a phase-2 failure (collateral inputs are spent, the collateral return is output #outputs.length). */
  isValid?: boolean;
  collateral?: TxRef[];
  collateralReturn?: TxOutSpec;
  /** Makes otherwise equal transactions differ (the fee). */
  salt?: number;
}

function writeOutput(w: CborWriter, o: TxOutSpec): void {
  w.mapHeader(o.datumBytes ? 3 : 2);
  w.int(0);
  w.bytes(o.address);
  w.int(1);
  if (!o.assets?.length) w.int(o.lovelace);
  else {
    const byPolicy = new Map<string, [string, bigint][]>();
    for (const [p, n, q] of o.assets) byPolicy.set(p, [...(byPolicy.get(p) ?? []), [n, q]]);
    w.arrayHeader(2);
    w.int(o.lovelace);
    w.mapHeader(byPolicy.size);
    for (const [p, names] of byPolicy) {
      w.bytes(fromHex(p));
      w.mapHeader(names.length);
      for (const [n, q] of names) {
        w.bytes(fromHex(n));
        w.int(q);
      }
    }
  }
  if (o.datumBytes) {
    w.int(2);
    w.arrayHeader(2);
    w.int(1);
    const inner = new CborWriter();
    inner.bytes(o.datumBytes);
    w.head(6, 24);
    w.bytes(inner.finish());
  }
}

function writeRefs(w: CborWriter, refs: TxRef[]): void {
  w.head(6, 258);
  w.arrayHeader(refs.length);
  for (const r of refs) {
    w.arrayHeader(2);
    w.bytes(fromHex(r.txid));
    w.int(r.index);
  }
}

/** A Conway transaction's bytes. */
export function conwayTx(s: ConwayTxSpec): Uint8Array {
  const w = new CborWriter();
  w.arrayHeader(4);
  const keys = 3 + (s.collateral ? 1 : 0) + (s.collateralReturn ? 1 : 0);
  w.mapHeader(keys);
  w.int(0);
  writeRefs(w, s.inputs);
  w.int(1);
  w.arrayHeader(s.outputs.length);
  for (const o of s.outputs) writeOutput(w, o);
  w.int(2);
  w.int(170_000 + (s.salt ?? 0));
  if (s.collateral) {
    w.int(13);
    writeRefs(w, s.collateral);
  }
  if (s.collateralReturn) {
    w.int(16);
    writeOutput(w, s.collateralReturn);
  }
  w.mapHeader(0);
  w.byte(s.isValid === false ? 0xf4 : 0xf5);
  w.byte(0xf6);
  return w.finish();
}

/** A Byron transaction as Ogmios' `cbor` carries it, `[tx, witnesses]`, and its id (the hash of `tx`). */
export function byronTx(spends: TxRef, salt: number): { cbor: Uint8Array; id: string } {
  const tx = new CborWriter();
  tx.arrayHeader(3);
  tx.byte(0x9f); // inputs: an indefinite list, as Byron encodes it
  tx.arrayHeader(2);
  tx.int(0);
  const inp = new CborWriter();
  inp.arrayHeader(2);
  inp.bytes(fromHex(spends.txid));
  inp.int(spends.index);
  tx.head(6, 24);
  tx.bytes(inp.finish());
  tx.byte(0xff);
  tx.byte(0x9f);
  tx.arrayHeader(2);
  tx.bytes(new Uint8Array(43).fill(0x82));
  tx.int(1_000_000 + salt);
  tx.byte(0xff);
  tx.mapHeader(0);
  const txBytes = tx.finish();
  const out = new Uint8Array(txBytes.length + 2);
  out[0] = 0x82;
  out.set(txBytes, 1);
  out[out.length - 1] = 0x80; // no witnesses
  return { cbor: out, id: toHex(blake2b(txBytes, { dkLen: 32 })) };
}

/** A Shelley+ transaction's id: the hash of its body (element 0). */
export function conwayTxId(tx: Uint8Array): string {
  const r = new CborReader(tx);
  r.head();
  const start = r.pos;
  r.value();
  return toHex(blake2b(tx.subarray(start, r.pos), { dkLen: 32 }));
}

export interface CardanoVector {
  txid: string;
  bytes: Uint8Array;
}

/** The real Cardano transactions of vectors/chain (`<txid>.cardano.hex`), by txid. */
export function realCardanoVectors(): Map<string, CardanoVector> {
  const dir = sharedPath('vectors', 'chain');
  const out = new Map<string, CardanoVector>();
  for (const f of readdirSync(dir).sort()) {
    const m = /^([0-9a-f]{64})\.cardano\.hex$/.exec(f);
    if (!m) continue;
    out.set(m[1]!, { txid: m[1]!, bytes: fromHex(readFileSync(join(dir, f), 'utf8').trim()) });
  }
  return out;
}
