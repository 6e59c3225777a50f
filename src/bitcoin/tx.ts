/**
 * Bitcoin transactions: a strict parser (segwit and legacy forms) and serializer. Browser-safe.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { CharmsError } from '../errors.js';
import { reversed, toHex } from '../util/bytes.js';

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

class Reader {
  pos = 0;
  private view: DataView;
  constructor(private b: Uint8Array) {
    this.view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }
  need(n: number): void {
    if (this.pos + n > this.b.length) throw bad('unexpected end of data');
  }
  u8(): number {
    this.need(1);
    return this.b[this.pos++]!;
  }
  u32(): number {
    this.need(4);
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }
  u64(): bigint {
    this.need(8);
    const v = this.view.getBigUint64(this.pos, true);
    this.pos += 8;
    return v;
  }
  varint(): number {
    const f = this.u8();
    if (f < 0xfd) return f;
    if (f === 0xfd) {
      this.need(2);
      const v = this.view.getUint16(this.pos, true);
      this.pos += 2;
      return v;
    }
    if (f === 0xfe) return this.u32();
    const v = this.u64();
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw bad('length too large');
    return Number(v);
  }
  bytes(n: number): Uint8Array {
    this.need(n);
    const out = this.b.slice(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  /** A count of items each at least `minSize` bytes: must fit the remaining data. */
  count(minSize: number): number {
    const n = this.varint();
    if (n * minSize > this.b.length - this.pos) throw bad(`count ${n} exceeds the data`);
    return n;
  }
  get done(): boolean {
    return this.pos === this.b.length;
  }
}

export function parseTx(bytes: Uint8Array): BitcoinTx {
  const r = new Reader(bytes);
  const version = r.u32();
  let segwit = false;
  if (bytes.length > r.pos + 1 && bytes[r.pos] === 0 && bytes[r.pos + 1] === 1) {
    segwit = true;
    r.pos += 2;
  }
  const nIn = r.count(41);
  const inputs: TxIn[] = [];
  for (let i = 0; i < nIn; i++) {
    const txid = r.bytes(32);
    const vout = r.u32();
    const scriptSig = r.bytes(r.varint());
    const sequence = r.u32();
    inputs.push({ txid, vout, scriptSig, sequence, witness: [] });
  }
  const nOut = r.count(9);
  const outputs: TxOut[] = [];
  for (let i = 0; i < nOut; i++) {
    const value = r.u64();
    outputs.push({ value, script: r.bytes(r.varint()) });
  }
  if (segwit) {
    for (const input of inputs) {
      const n = r.count(1);
      for (let j = 0; j < n; j++) input.witness.push(r.bytes(r.varint()));
    }
    if (inputs.every((i) => i.witness.length === 0)) throw bad('segwit marker without witness data');
  }
  const locktime = r.u32();
  if (!r.done) throw bad(`${bytes.length - r.pos} trailing bytes`);
  if (nIn === 0 && !segwit) throw bad('no inputs');
  return { version, inputs, outputs, locktime };
}

class Writer {
  parts: number[] = [];
  u8(v: number) {
    this.parts.push(v & 0xff);
  }
  u32(v: number) {
    for (let i = 0; i < 4; i++) this.parts.push((v >>> (8 * i)) & 0xff);
  }
  u64(v: bigint) {
    for (let i = 0n; i < 8n; i++) this.parts.push(Number((v >> (8n * i)) & 0xffn));
  }
  varint(n: number) {
    if (n < 0xfd) this.u8(n);
    else if (n <= 0xffff) {
      this.u8(0xfd);
      this.u8(n);
      this.u8(n >> 8);
    } else if (n <= 0xffffffff) {
      this.u8(0xfe);
      this.u32(n);
    } else {
      this.u8(0xff);
      this.u64(BigInt(n));
    }
  }
  bytes(b: Uint8Array) {
    for (const x of b) this.parts.push(x);
  }
  varbytes(b: Uint8Array) {
    this.varint(b.length);
    this.bytes(b);
  }
}

/** Serializes; `witness: false` gives the legacy form (what txids hash). */
export function serializeTx(tx: BitcoinTx, opts: { witness: boolean } = { witness: true }): Uint8Array {
  const w = new Writer();
  const segwit = opts.witness && tx.inputs.some((i) => i.witness.length > 0);
  w.u32(tx.version);
  if (segwit) {
    w.u8(0);
    w.u8(1);
  }
  w.varint(tx.inputs.length);
  for (const i of tx.inputs) {
    w.bytes(i.txid);
    w.u32(i.vout);
    w.varbytes(i.scriptSig);
    w.u32(i.sequence);
  }
  w.varint(tx.outputs.length);
  for (const o of tx.outputs) {
    w.u64(o.value);
    w.varbytes(o.script);
  }
  if (segwit)
    for (const i of tx.inputs) {
      w.varint(i.witness.length);
      for (const item of i.witness) w.varbytes(item);
    }
  w.u32(tx.locktime);
  return Uint8Array.from(w.parts);
}

const sha256d = (b: Uint8Array): Uint8Array => sha256(sha256(b));

/** The txid in internal byte order (double SHA-256 of the legacy serialization). */
export const txid = (tx: BitcoinTx): Uint8Array => sha256d(serializeTx(tx, { witness: false }));
/** The txid as displayed (reversed hex). */
export const txidHex = (tx: BitcoinTx): string => toHex(reversed(txid(tx)));
