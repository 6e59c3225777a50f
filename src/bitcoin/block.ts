/**
 * Bitcoin blocks: the 80-byte header, a block split into its transactions without parsing
 * them, and the checks that make a block from an untrusted node safe to index: its header hashes
 * to the hash that was asked for, and its transactions hash to the header's merkle root.
 *
 * Transactions are returned as offsets into the block bytes (no copy) and their txids in one
 * array, so a caller can prefilter by bytes and parse only the few transactions that may carry a
 * spell. Hashing is done in place (`sha256dInto`). Browser-safe.
 */
import { CharmsError } from '../errors.js';
import { ByteReader, ByteWriter } from '../util/byte-io.js';
import { equalBytes, fromHex, reversed } from '../util/bytes.js';
import { sha256, sha256dInto } from '../util/sha256.js';
import { txidToDisplay } from '../model/primitives.js';

const HEADER_SIZE = 80;

export interface BlockHeader {
  version: number;
  /** Previous block hash, display order (as RPC shows it). */
  prevHash: string;
  /** Merkle root, internal byte order. */
  merkleRoot: Uint8Array;
  time: number;
  bits: number;
  nonce: number;
  /** This block's hash, display order. */
  hash: string;
  /** The 80 header bytes. */
  raw: Uint8Array;
}

interface BlockTx {
  /** Position in the block (0 = coinbase). */
  index: number;
  /** Txid, display order. */
  txid: string;
  /** The whole serialized transaction (with witnesses): a view into the block bytes. */
  raw: Uint8Array;
}

/**
 * A checked block. The transactions are kept as offsets into the block bytes and txids in one
 * array, so that a reader can scan and pick the few transactions it cares about without an object
 * per transaction; `txs` builds those objects on first use.
 */
export interface Block {
  header: BlockHeader;
  /** The serialized block. */
  bytes: Uint8Array;
  /** Transaction i is `bytes[offsets[i], offsets[i + 1])` (length: transactions + 1). */
  offsets: Uint32Array;
  /** The txids in internal byte order, 32 bytes each, in block order. */
  ids: Uint8Array;
  /** Every transaction as an object (built on first use). */
  readonly txs: BlockTx[];
}

class CheckedBlock implements Block {
  private list: BlockTx[] | undefined;
  constructor(
    readonly header: BlockHeader,
    readonly bytes: Uint8Array,
    readonly offsets: Uint32Array,
    readonly ids: Uint8Array,
  ) {}
  get txs(): BlockTx[] {
    this.list ??= Array.from({ length: this.offsets.length - 1 }, (_, i) => ({ index: i, txid: blockTxid(this, i), raw: blockTxRaw(this, i) }));
    return this.list;
  }
}

/** The txid (display order) of the block's transaction `i`. */
export const blockTxid = (b: Block, i: number): string => txidToDisplay(b.ids.subarray(32 * i, 32 * i + 32));

/** The serialized transaction `i` of the block: a view into the block bytes. */
export const blockTxRaw = (b: Block, i: number): Uint8Array => b.bytes.subarray(b.offsets[i]!, b.offsets[i + 1]!);

const bad = (msg: string): CharmsError => new CharmsError('UPSTREAM_FAILED', `invalid Bitcoin block: ${msg}`);

const sha256d = (b: Uint8Array): Uint8Array => sha256(sha256(b));

class Reader extends ByteReader {
  constructor(b: Uint8Array) {
    super(b, (what, at) => bad(`unexpected end of data reading ${what} at byte ${at}`));
  }
}

/** The block hash (display order) of an 80-byte header. */
export const headerHash = (raw: Uint8Array): string => txidToDisplay(sha256d(raw));

export function parseBlockHeader(raw: Uint8Array): BlockHeader {
  if (raw.length !== HEADER_SIZE) throw bad(`a header is ${HEADER_SIZE} bytes, got ${raw.length}`);
  const r = new Reader(raw);
  const version = r.u32le('version');
  const prevHash = txidToDisplay(r.take(32, 'previous block hash'));
  const merkleRoot = r.copy(32, 'merkle root');
  const time = r.u32le('time');
  const bits = r.u32le('bits');
  const nonce = r.u32le('nonce');
  return { version, prevHash, merkleRoot, time, bits, nonce, hash: headerHash(raw), raw: raw.slice() };
}

// ------------------------------------------------------------------ the transaction walker
// Transactions are walked by offsets over the block bytes, without a reader object, sub-views or
// strings per field: a full block has thousands. Error texts are built only when one is thrown.

/** The walker's cursor into the bytes being walked. */
let at = 0;

const ended = (what: string, index: number): CharmsError => bad(`unexpected end of data reading ${index < 0 ? '' : `tx ${index} `}${what} at byte ${at}`);

function need(b: Uint8Array, n: number, what: string, index: number): void {
  if (n > b.length - at) throw ended(what, index);
}

/** A compact size (not checked for minimality: the txid and merkle checks catch changed bytes). */
function varint(b: Uint8Array, what: string, index: number): number {
  need(b, 1, what, index);
  const f = b[at++]!;
  if (f < 0xfd) return f;
  if (f === 0xfd) {
    need(b, 2, what, index);
    at += 2;
    return b[at - 2]! | (b[at - 1]! << 8);
  }
  if (f === 0xfe) {
    need(b, 4, what, index);
    at += 4;
    return (b[at - 4]! | (b[at - 3]! << 8) | (b[at - 2]! << 16) | (b[at - 1]! << 24)) >>> 0;
  }
  need(b, 8, what, index);
  at += 8;
  const lo = (b[at - 8]! | (b[at - 7]! << 8) | (b[at - 6]! << 16) | (b[at - 5]! << 24)) >>> 0;
  const hi = (b[at - 4]! | (b[at - 3]! << 8) | (b[at - 2]! << 16) | (b[at - 1]! << 24)) >>> 0;
  return hi >= 0x200000 ? Number.MAX_SAFE_INTEGER : hi * 0x100000000 + lo;
}

/** A count of items of at least `minSize` bytes each, bounded by what is left. */
function count(b: Uint8Array, minSize: number, what: string, index: number): number {
  const n = varint(b, `${what} count`, index);
  if (n * minSize > b.length - at) throw bad(`tx ${index} ${what} count ${n} exceeds the remaining ${b.length - at} bytes`);
  return n;
}

function skipVarbytes(b: Uint8Array, what: string, index: number): void {
  const n = varint(b, what, index);
  need(b, n, what, index);
  at += n;
}

/**
 * Walks the transaction starting at `start`; writes its txid (internal order) to `ids` at
 * `32 * index` and returns where it ends.
 */
function walkTx(b: Uint8Array, start: number, index: number, ids: Uint8Array): number {
  at = start;
  need(b, 4, 'version', index);
  at += 4;
  let segwit = false;
  let inputs = count(b, 41, 'input', index);
  if (inputs === 0) {
    need(b, 1, 'segwit flag', index);
    const flag = b[at++]!;
    if (flag !== 1) throw bad(`tx ${index}: unsupported segwit flag ${flag}`);
    segwit = true;
    inputs = count(b, 41, 'input', index);
  }
  const bodyStart = segwit ? start + 6 : start + 4;
  for (let i = 0; i < inputs; i++) {
    need(b, 36, 'outpoint', index);
    at += 36;
    skipVarbytes(b, 'scriptSig', index);
    need(b, 4, 'sequence', index);
    at += 4;
  }
  const outputs = count(b, 9, 'output', index);
  for (let i = 0; i < outputs; i++) {
    need(b, 8, 'value', index);
    at += 8;
    skipVarbytes(b, 'script', index);
  }
  const bodyEnd = at;
  if (segwit)
    for (let i = 0; i < inputs; i++) {
      const items = count(b, 1, 'witness item', index);
      for (let j = 0; j < items; j++) skipVarbytes(b, 'witness item', index);
    }
  need(b, 4, 'locktime', index);
  at += 4;
  // The txid hashes the legacy form: version, inputs and outputs, locktime (no marker, no
  // witnesses): three ranges of the block, hashed in place.
  if (segwit) sha256dInto(b, ids, 32 * index, start, start + 4, bodyStart, bodyEnd, at - 4, at);
  else sha256dInto(b, ids, 32 * index, start, at);
  return at;
}

/** The merkle root (internal order) of `n` txids given in internal byte order, 32 bytes each. */
function merkleRoot(ids: Uint8Array, n: number): Uint8Array {
  if (n === 0) throw bad('a block has at least one transaction');
  const level = ids.slice(0, 32 * n);
  const pair = new Uint8Array(64);
  for (let len = n; len > 1; len = (len + 1) >> 1) {
    // node i of the next level = H(node 2i ‖ node 2i+1), written over node i (read before written)
    for (let i = 0; 2 * i < len; i++) {
      if (2 * i + 1 < len) sha256dInto(level, level, 32 * i, 64 * i, 64 * i + 64);
      else {
        pair.set(level.subarray(64 * i, 64 * i + 32), 0);
        pair.set(level.subarray(64 * i, 64 * i + 32), 32);
        sha256dInto(pair, level, 32 * i, 0, 64);
      }
    }
  }
  return level.slice(0, 32);
}

/**
 * Txids of `n` transactions: the index of the first that repeats an earlier one, else -1. An
 * open-addressed table of positions keyed by each txid's first four bytes; full comparison only
 * when those collide.
 */
function duplicateAt(ids: Uint8Array, n: number): number {
  let size = 16;
  while (size < 2 * n) size <<= 1;
  const slots = new Int32Array(size); // tx index + 1; 0 = empty
  const mask = size - 1;
  for (let i = 0; i < n; i++) {
    const o = 32 * i;
    let s = (ids[o]! | (ids[o + 1]! << 8) | (ids[o + 2]! << 16) | (ids[o + 3]! << 24)) & mask;
    for (;;) {
      const j = slots[s]!;
      if (j === 0) {
        slots[s] = i + 1;
        break;
      }
      if (equalRange(ids, o, 32 * (j - 1), 32)) return i;
      s = (s + 1) & mask;
    }
  }
  return -1;
}

function equalRange(b: Uint8Array, x: number, y: number, n: number): boolean {
  for (let k = 0; k < n; k++) if (b[x + k] !== b[y + k]) return false;
  return true;
}

/**
 * Splits a serialized block into its header and transactions and checks it: when `expectedHash`
 * is given the header must hash to it; the transactions must hash to the header's merkle root,
 * with no txid twice (the duplicate-transaction mutation of CVE-2012-2459 keeps the root) and no
 * byte after the last transaction. Throws UPSTREAM_FAILED otherwise: a node that sends such a
 * block is faulty or hostile.
 */
export function parseBlock(bytes: Uint8Array, expectedHash?: string): Block {
  if (bytes.length < HEADER_SIZE + 1) throw bad(`${bytes.length} bytes is too short for a block`);
  const header = parseBlockHeader(bytes.subarray(0, HEADER_SIZE));
  if (expectedHash !== undefined && header.hash !== expectedHash.toLowerCase()) throw bad(`asked for block ${expectedHash}, got block ${header.hash}`);
  at = HEADER_SIZE;
  const n = varint(bytes, 'transaction count', -1);
  if (n * 60 > bytes.length - at) throw bad(`transaction count ${n} exceeds the remaining ${bytes.length - at} bytes`);
  if (n === 0) throw bad('a block has at least one transaction');
  const offsets = new Uint32Array(n + 1);
  const ids = new Uint8Array(32 * n);
  let p = at;
  for (let i = 0; i < n; i++) {
    offsets[i] = p;
    p = walkTx(bytes, p, i, ids);
  }
  offsets[n] = p;
  if (p !== bytes.length) throw bad(`${bytes.length - p} trailing bytes after the last transaction`);
  const dup = duplicateAt(ids, n);
  if (dup >= 0) throw bad(`transaction ${txidToDisplay(ids.subarray(32 * dup, 32 * dup + 32))} appears twice`);
  if (!equalBytes(merkleRoot(ids, n), header.merkleRoot)) throw bad(`block ${header.hash}: transactions do not match the merkle root`);
  return new CheckedBlock(header, bytes, offsets, ids);
}

/** Fields of a header to build; the merkle root is computed from the transactions. */
export interface HeaderFields {
  version?: number;
  prevHash: string;
  time: number;
  bits?: number;
  nonce?: number;
}

/** Serializes a block from header fields and serialized transactions (tests, fake nodes). */
export function serializeBlock(fields: HeaderFields, txs: Uint8Array[]): Uint8Array {
  const all = new ByteWriter();
  for (const t of txs) all.bytes(t);
  const joined = all.finish();
  const ids = new Uint8Array(32 * txs.length);
  let p = 0;
  for (let i = 0; i < txs.length; i++) p = walkTx(joined, p, i, ids);
  if (p !== joined.length) throw bad('a transaction has trailing bytes');
  const root = merkleRoot(ids, txs.length);
  const w = new ByteWriter();
  w.u32le(fields.version ?? 0x20000000);
  w.bytes(reversed(fromHex(fields.prevHash, 'previous block hash', 32)));
  w.bytes(root);
  w.u32le(fields.time);
  w.u32le(fields.bits ?? 0x207fffff);
  w.u32le(fields.nonce ?? 0);
  if (txs.length < 0xfd) w.byte(txs.length);
  else if (txs.length <= 0xffff)
    w.byte(0xfd)
      .byte(txs.length & 0xff)
      .byte(txs.length >> 8);
  else w.byte(0xfe).u32le(txs.length);
  w.bytes(joined);
  return w.finish();
}
