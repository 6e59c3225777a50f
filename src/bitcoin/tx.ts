/**
 * Bitcoin transactions: a strict parser and a serializer with the consensus rules of
 * rust-bitcoin 0.32 (what the reference uses). Browser-safe.
 *
 * - Segwit form (BIP144): `version 00 01 inputs outputs witnesses locktime`. A transaction with
 *   no inputs only exists in that form (a legacy `00` input count would read as the marker), and
 *   a segwit-form transaction with inputs must carry at least one non-empty witness.
 * - Compact sizes must be minimal (rust-bitcoin: `NonMinimalVarInt`), nothing may follow the
 *   locktime, and counts may not promise more items than the bytes left can hold.
 */
import { sha256 } from '../util/sha256.js';
import { CharmsError } from '../errors.js';
import { ByteReader, ByteWriter } from '../util/byte-io.js';
import { txidToDisplay } from '../model/primitives.js';

export interface TxIn {
  /** Previous txid, internal byte order. */
  txid: Uint8Array;
  vout: number;
  scriptSig: Uint8Array;
  sequence: number;
  witness: Uint8Array[];
}

export interface TxOut {
  value: bigint;
  script: Uint8Array;
}

export interface BitcoinTx {
  version: number;
  inputs: TxIn[];
  outputs: TxOut[];
  locktime: number;
}

const bad = (msg: string): CharmsError => new CharmsError('INVALID_TX', `invalid Bitcoin transaction: ${msg}`);

/** The Bitcoin consensus reader: compact sizes on top of the shared byte reader. */
class Reader extends ByteReader {
  constructor(b: Uint8Array) {
    super(b, (what, at) => bad(`unexpected end of data reading ${what} at byte ${at}`));
  }
  /** A compact size; the shortest encoding is required, as rust-bitcoin does. */
  varint(what: string): number {
    const at = this.pos;
    const f = this.u8(what);
    let v: number;
    if (f < 0xfd) return f;
    if (f === 0xfd) {
      v = this.u16le(what);
      if (v < 0xfd) throw bad(`non-minimal compact size for ${what} at byte ${at}`);
    } else if (f === 0xfe) {
      v = this.u32le(what);
      if (v <= 0xffff) throw bad(`non-minimal compact size for ${what} at byte ${at}`);
    } else {
      const big = this.u64le(what);
      if (big <= 0xffffffffn) throw bad(`non-minimal compact size for ${what} at byte ${at}`);
      // Anything this large cannot fit the remaining data anyway.
      v = big > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(big);
    }
    return v;
  }
  /** A length-prefixed byte string. */
  varbytes(what: string): Uint8Array {
    return this.copy(this.varint(what), what);
  }
  /** A count of items each at least `minSize` bytes long: must fit in the remaining data. */
  count(minSize: number, what: string): number {
    const n = this.varint(`${what} count`);
    if (n * minSize > this.remaining) throw bad(`${what} count ${n} exceeds the remaining ${this.remaining} bytes`);
    return n;
  }
}

const MIN_INPUT_SIZE = 41; // outpoint 36 + empty script 1 + sequence 4
const MIN_OUTPUT_SIZE = 9; // value 8 + empty script 1

function readInputs(r: Reader): TxIn[] {
  const n = r.count(MIN_INPUT_SIZE, 'input');
  const inputs: TxIn[] = [];
  for (let i = 0; i < n; i++) {
    const txid = r.copy(32, `input ${i} txid`);
    const vout = r.u32le(`input ${i} vout`);
    const scriptSig = r.varbytes(`input ${i} scriptSig`);
    const sequence = r.u32le(`input ${i} sequence`);
    inputs.push({ txid, vout, scriptSig, sequence, witness: [] });
  }
  return inputs;
}

function readOutputs(r: Reader): TxOut[] {
  const n = r.count(MIN_OUTPUT_SIZE, 'output');
  const outputs: TxOut[] = [];
  for (let i = 0; i < n; i++) {
    const value = r.u64le(`output ${i} value`);
    outputs.push({ value, script: r.varbytes(`output ${i} script`) });
  }
  return outputs;
}

/** Parses a complete serialized transaction (segwit or legacy form); INVALID_TX on any defect. */
export function parseTx(bytes: Uint8Array): BitcoinTx {
  const r = new Reader(bytes);
  const version = r.u32le('version');
  let inputs = readInputs(r);
  let outputs: TxOut[];
  if (inputs.length === 0) {
    // A zero input count is the segwit marker; the flag must follow.
    const flag = r.u8('segwit flag');
    if (flag !== 1) throw bad(`unsupported segwit flag ${flag}`);
    inputs = readInputs(r);
    outputs = readOutputs(r);
    for (let i = 0; i < inputs.length; i++) {
      const n = r.count(1, `input ${i} witness item`);
      for (let j = 0; j < n; j++) inputs[i]!.witness.push(r.varbytes(`input ${i} witness item ${j}`));
    }
    if (inputs.length > 0 && inputs.every((i) => i.witness.length === 0)) throw bad('witness flag set but no witnesses present');
  } else {
    outputs = readOutputs(r);
  }
  const locktime = r.u32le('locktime');
  if (r.remaining !== 0) throw bad(`${r.remaining} trailing bytes after the locktime`);
  return { version, inputs, outputs, locktime };
}

/** The Bitcoin consensus writer: compact sizes on top of the shared byte writer. */
class Writer extends ByteWriter {
  varint(n: number): void {
    if (n < 0xfd) this.byte(n);
    else if (n <= 0xffff)
      this.byte(0xfd)
        .byte(n & 0xff)
        .byte(n >> 8);
    else if (n <= 0xffffffff) this.byte(0xfe).u32le(n);
    else this.byte(0xff).u64le(BigInt(n));
  }
  varbytes(b: Uint8Array): void {
    this.varint(b.length);
    this.bytes(b);
  }
}

/** Whether consensus serialization uses the segwit form (rust-bitcoin `uses_segwit_serialization`). */
const usesSegwitSerialization = (tx: BitcoinTx): boolean => tx.inputs.length === 0 || tx.inputs.some((i) => i.witness.length > 0);

/**
 * Serializes. `witness: true` (default) is the consensus form, segwit when any input has a
 * witness or there are no inputs; `witness: false` is the legacy form the txid hashes.
 */
export function serializeTx(tx: BitcoinTx, opts: { witness: boolean } = { witness: true }): Uint8Array {
  const w = new Writer();
  const segwit = opts.witness && usesSegwitSerialization(tx);
  w.u32le(tx.version);
  if (segwit) {
    w.byte(0);
    w.byte(1);
  }
  w.varint(tx.inputs.length);
  for (const i of tx.inputs) {
    w.bytes(i.txid);
    w.u32le(i.vout);
    w.varbytes(i.scriptSig);
    w.u32le(i.sequence);
  }
  w.varint(tx.outputs.length);
  for (const o of tx.outputs) {
    w.u64le(o.value);
    w.varbytes(o.script);
  }
  if (segwit)
    for (const i of tx.inputs) {
      w.varint(i.witness.length);
      for (const item of i.witness) w.varbytes(item);
    }
  w.u32le(tx.locktime);
  return w.finish();
}

const sha256d = (b: Uint8Array): Uint8Array => sha256(sha256(b));

/** The txid in internal byte order (double SHA-256 of the legacy serialization). */
export const txid = (tx: BitcoinTx): Uint8Array => sha256d(serializeTx(tx, { witness: false }));
/** The wtxid in internal byte order (double SHA-256 of the consensus serialization). */
export const wtxid = (tx: BitcoinTx): Uint8Array => sha256d(serializeTx(tx, { witness: true }));
/** The txid as displayed (reversed hex). */
export const txidHex = (tx: BitcoinTx): string => txidToDisplay(txid(tx));

/** BIP141 weight: 3 × legacy size + consensus size (rust-bitcoin `Transaction::weight`). */
export const txWeight = (tx: BitcoinTx): number => 3 * serializeTx(tx, { witness: false }).length + serializeTx(tx, { witness: true }).length;
/** Virtual size: weight / 4 rounded up. */
export const txVsize = (tx: BitcoinTx): number => Math.ceil(txWeight(tx) / 4);
