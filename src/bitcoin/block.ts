/**
 * Bitcoin blocks: the 80-byte header, a block split into its transactions without parsing
 * them, and the checks that make a block from an untrusted node safe to index: its header hashes
 * to the hash that was asked for, and its transactions hash to the header's merkle root.
 *
 * Transactions are returned as views into the block bytes (no copy) with their txid, so a
 * caller can prefilter by bytes and parse only the few transactions that may carry a spell.
 * Browser-safe.
 */
import { CharmsError } from '../errors.js';
import { ByteReader, ByteWriter } from '../util/byte-io.js';
import { equalBytes, fromHex, reversed } from '../util/bytes.js';
import { sha256, sha256Parts } from '../util/sha256.js';
import { hashToDisplayHex } from './tx.js';

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

export interface Block {
  header: BlockHeader;
  txs: BlockTx[];
}

const bad = (msg: string): CharmsError => new CharmsError('UPSTREAM_FAILED', `invalid Bitcoin block: ${msg}`);

const sha256d = (b: Uint8Array): Uint8Array => sha256(sha256(b));

class Reader extends ByteReader {
  constructor(b: Uint8Array) {
    super(b, (what, at) => bad(`unexpected end of data reading ${what} at byte ${at}`));
  }
  /** A compact size (not checked for minimality: the txid and merkle checks catch changed bytes). */
  varint(what: string): number {
    const f = this.u8(what);
    if (f < 0xfd) return f;
    if (f === 0xfd) return this.u16le(what);
    if (f === 0xfe) return this.u32le(what);
    const big = this.u64le(what);
    return big > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(big);
  }
  skipVarbytes(what: string): void {
    this.take(this.varint(what), what);
  }
  /** A count of items of at least `minSize` bytes each, bounded by what is left. */
  count(minSize: number, what: string): number {
    const n = this.varint(`${what} count`);
    if (n * minSize > this.remaining) throw bad(`${what} count ${n} exceeds the remaining ${this.remaining} bytes`);
    return n;
  }
}

/** The block hash (display order) of an 80-byte header. */
export const headerHash = (raw: Uint8Array): string => hashToDisplayHex(sha256d(raw));

export function parseBlockHeader(raw: Uint8Array): BlockHeader {
  if (raw.length !== HEADER_SIZE) throw bad(`a header is ${HEADER_SIZE} bytes, got ${raw.length}`);
  const r = new Reader(raw);
  const version = r.u32le('version');
  const prevHash = hashToDisplayHex(r.take(32, 'previous block hash'));
  const merkleRoot = r.copy(32, 'merkle root');
  const time = r.u32le('time');
  const bits = r.u32le('bits');
  const nonce = r.u32le('nonce');
  return { version, prevHash, merkleRoot, time, bits, nonce, hash: headerHash(raw), raw: raw.slice() };
}

/** A transaction's extent in the block, with its txid in internal byte order. */
interface TxExtent {
  tx: BlockTx;
  id: Uint8Array;
}

/** Reads one transaction's extent at the reader's position; returns it with its txid. */
function readTx(r: Reader, bytes: Uint8Array, index: number): TxExtent {
  const start = r.pos;
  r.u32le('version');
  let segwit = false;
  let inputs = r.count(41, `tx ${index} input`);
  if (inputs === 0) {
    const flag = r.u8(`tx ${index} segwit flag`);
    if (flag !== 1) throw bad(`tx ${index}: unsupported segwit flag ${flag}`);
    segwit = true;
    inputs = r.count(41, `tx ${index} input`);
  }
  const bodyStart = segwit ? start + 6 : start + 4;
  for (let i = 0; i < inputs; i++) {
    r.take(36, 'outpoint');
    r.skipVarbytes('scriptSig');
    r.u32le('sequence');
  }
  const outputs = r.count(9, `tx ${index} output`);
  for (let i = 0; i < outputs; i++) {
    r.u64le('value');
    r.skipVarbytes('script');
  }
  const bodyEnd = r.pos;
  if (segwit)
    for (let i = 0; i < inputs; i++) {
      const items = r.count(1, `tx ${index} witness item`);
      for (let j = 0; j < items; j++) r.skipVarbytes('witness item');
    }
  r.u32le('locktime');
  const end = r.pos;
  // The txid hashes the legacy form: version, inputs and outputs, locktime (no marker, no
  // witnesses): three slices of the block, hashed without being copied together.
  const first = segwit
    ? sha256Parts([bytes.subarray(start, start + 4), bytes.subarray(bodyStart, bodyEnd), bytes.subarray(end - 4, end)])
    : sha256(bytes.subarray(start, end));
  const id = sha256(first);
  return { tx: { index, txid: hashToDisplayHex(id), raw: bytes.subarray(start, end) }, id };
}

/** The merkle root (internal order) of txids given in internal byte order. */
function merkleRoot(txids: Uint8Array[]): Uint8Array {
  if (txids.length === 0) throw bad('a block has at least one transaction');
  let level = txids;
  while (level.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i < level.length; i += 2) {
      const a = level[i]!;
      const b = level[i + 1] ?? a;
      const pair = new Uint8Array(64);
      pair.set(a, 0);
      pair.set(b, 32);
      next.push(sha256d(pair));
    }
    level = next;
  }
  return level[0]!;
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
  const r = new Reader(bytes);
  r.pos = HEADER_SIZE;
  const n = r.count(60, 'transaction');
  if (n === 0) throw bad('a block has at least one transaction');
  const txs: BlockTx[] = [];
  const ids: Uint8Array[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < n; i++) {
    const { tx, id } = readTx(r, bytes, i);
    if (seen.has(tx.txid)) throw bad(`transaction ${tx.txid} appears twice`);
    seen.add(tx.txid);
    txs.push(tx);
    ids.push(id);
  }
  if (r.remaining !== 0) throw bad(`${r.remaining} trailing bytes after the last transaction`);
  if (!equalBytes(merkleRoot(ids), header.merkleRoot)) throw bad(`block ${header.hash}: transactions do not match the merkle root`);
  return { header, txs };
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
  const ids: Uint8Array[] = [];
  const all = new ByteWriter();
  for (const t of txs) all.bytes(t);
  const joined = all.finish();
  const r = new Reader(joined);
  for (let i = 0; i < txs.length; i++) ids.push(readTx(r, joined, i).id);
  if (r.remaining !== 0) throw bad('a transaction has trailing bytes');
  const root = merkleRoot(ids);
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
