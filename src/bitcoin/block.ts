/**
 * Bitcoin blocks: the 80-byte header, a block split into its transactions without parsing
 * them, and the checks that make a block from an untrusted node safe to index: its header hashes
 * to the hash that was asked for, and its transactions hash to the header's merkle root.
 *
 * A block's witnesses are checked too (BIP141, Bitcoin Core's `CheckWitnessMalleation`): the txids
 * and the header's merkle root leave out witnesses, so without this check a node could strip a
 * transaction's witness (where pre-v9 spells live) and the block would still hash right.
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
import { parseTx, serializeTx } from './tx.js';

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
/** Set by `walkTx` when a walked transaction carries witness data. */
let sawWitness = false;

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
 * `32 * index`, and its wtxid to `wids` at the same place (hashed now, while its bytes are in
 * cache: a transaction without witness has wtxid = txid, only a copy), and returns where it ends.
 */
function walkTx(b: Uint8Array, start: number, index: number, ids: Uint8Array, wids: Uint8Array): number {
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
  if (segwit) {
    let items = 0;
    for (let i = 0; i < inputs; i++) {
      const n = count(b, 1, 'witness item', index);
      items += n;
      for (let j = 0; j < n; j++) skipVarbytes(b, 'witness item', index);
    }
    // as Bitcoin Core's deserializer: the segwit form without a witness is not a transaction
    if (items === 0) throw bad(`tx ${index}: witness flag set but no witnesses present`);
    sawWitness = true;
  }
  need(b, 4, 'locktime', index);
  at += 4;
  // The txid hashes the legacy form: version, inputs and outputs, locktime (no marker, no
  // witnesses): three ranges of the block, hashed in place. The wtxid hashes all of it.
  const o = 32 * index;
  if (segwit) {
    sha256dInto(b, ids, o, start, start + 4, bodyStart, bodyEnd, at - 4, at);
    sha256dInto(b, wids, o, start, at);
  } else {
    sha256dInto(b, ids, o, start, at);
    for (let k = 0; k < 32; k++) wids[o + k] = ids[o + k]!;
  }
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

/** A witness commitment output's script: OP_RETURN, push 36, the tag aa21a9ed, 32 bytes (BIP141). */
const COMMITMENT_TAG = [0x6a, 0x24, 0xaa, 0x21, 0xa9, 0xed] as const;
const COMMITMENT_MIN_SIZE = 38;

/**
 * The coinbase's witness commitment (the last output whose script is at least 38 bytes and starts
 * with the tag, as Core's `GetWitnessCommitmentIndex`) and the coinbase's first input's witness
 * items, as offsets into `b`. The coinbase was walked once already: lengths are known to fit.
 */
function coinbaseWitness(b: Uint8Array, start: number): { commitment: number; items: [number, number][] } {
  at = start + 4;
  let inputs = varint(b, 'input count', 0);
  const segwit = inputs === 0;
  if (segwit) {
    at++;
    inputs = varint(b, 'input count', 0);
  }
  for (let i = 0; i < inputs; i++) {
    at += 36;
    skipVarbytes(b, 'scriptSig', 0);
    at += 4;
  }
  let commitment = -1;
  const outputs = varint(b, 'output count', 0);
  for (let i = 0; i < outputs; i++) {
    at += 8;
    const n = varint(b, 'script', 0);
    if (n >= COMMITMENT_MIN_SIZE && COMMITMENT_TAG.every((x, k) => b[at + k] === x)) commitment = at + 6;
    at += n;
  }
  const items: [number, number][] = [];
  if (segwit && inputs > 0) {
    const n = varint(b, 'witness item', 0);
    for (let j = 0; j < n; j++) {
      const len = varint(b, 'witness item', 0);
      items.push([at, at + len]);
      at += len;
    }
  }
  return { commitment, items };
}

/**
 * BIP141's rule (Core's `CheckWitnessMalleation`): with a witness commitment in the coinbase, the
 * coinbase's witness is one 32-byte reserved value and SHA256d(wtxid merkle root ‖ reserved value)
 * is the commitment (the coinbase's wtxid counts as zero); without one, no transaction carries a
 * witness. `wids` is overwritten.
 */
function checkWitnesses(bytes: Uint8Array, offsets: Uint32Array, wids: Uint8Array, n: number, hash: string, anyWitness: boolean): void {
  const { commitment, items } = coinbaseWitness(bytes, offsets[0]!);
  if (commitment < 0) {
    if (anyWitness) throw bad(`block ${hash}: transactions carry witness data but the coinbase commits to none (unexpected-witness)`);
    return;
  }
  const reserved = items.length === 1 && items[0]![1] - items[0]![0] === 32 ? items[0]! : undefined;
  if (!reserved) throw bad(`block ${hash}: the coinbase's witness is not one 32-byte reserved value (bad-witness-nonce-size)`);
  wids.fill(0, 0, 32);
  const pair = new Uint8Array(64);
  pair.set(merkleRoot(wids, n), 0);
  pair.set(bytes.subarray(reserved[0], reserved[1]), 32);
  sha256dInto(pair, pair, 0, 0, 64);
  if (!sameHash(pair, bytes, commitment)) throw bad(`block ${hash}: the witnesses do not match the coinbase's witness commitment (bad-witness-merkle-match)`);
}

/** Whether the 32 bytes at `x[0]` equal those at `y[yAt]`. */
const sameHash = (x: Uint8Array, y: Uint8Array, yAt: number): boolean => {
  for (let k = 0; k < 32; k++) if (x[k] !== y[yAt + k]) return false;
  return true;
};

/**
 * Splits a serialized block into its header and transactions and checks it: when `expectedHash`
 * is given the header must hash to it; the transactions must hash to the header's merkle root,
 * with no txid twice (the duplicate-transaction mutation of CVE-2012-2459 keeps the root) and no
 * byte after the last transaction; the witnesses must match the coinbase's witness commitment
 * (`checkWitnesses`). Throws UPSTREAM_FAILED otherwise: a node that sends such a block is faulty
 * or hostile.
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
  const wids = new Uint8Array(32 * n);
  sawWitness = false;
  let p = at;
  for (let i = 0; i < n; i++) {
    offsets[i] = p;
    p = walkTx(bytes, p, i, ids, wids);
  }
  offsets[n] = p;
  if (p !== bytes.length) throw bad(`${bytes.length - p} trailing bytes after the last transaction`);
  const dup = duplicateAt(ids, n);
  if (dup >= 0) throw bad(`transaction ${txidToDisplay(ids.subarray(32 * dup, 32 * dup + 32))} appears twice`);
  if (!equalBytes(merkleRoot(ids, n), header.merkleRoot)) throw bad(`block ${header.hash}: transactions do not match the merkle root`);
  checkWitnesses(bytes, offsets, wids, n, header.hash, sawWitness);
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

/**
 * Serializes a block from header fields and serialized transactions (tests, fake nodes). When a
 * transaction carries a witness and the coinbase (the first) commits to none, the coinbase gets
 * what a miner adds (BIP141): a 32-byte zero reserved value as its witness and a commitment output.
 */
export function serializeBlock(fields: HeaderFields, given: Uint8Array[]): Uint8Array {
  const { joined, ids, txs } = withWitnessCommitment(given);
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

function walkAll(txs: Uint8Array[]): { joined: Uint8Array; ids: Uint8Array; wids: Uint8Array; witness: boolean } {
  const all = new ByteWriter();
  for (const t of txs) all.bytes(t);
  const joined = all.finish();
  const ids = new Uint8Array(32 * txs.length);
  const wids = new Uint8Array(32 * txs.length);
  sawWitness = false;
  let p = 0;
  for (let i = 0; i < txs.length; i++) p = walkTx(joined, p, i, ids, wids);
  if (p !== joined.length) throw bad('a transaction has trailing bytes');
  return { joined, ids, wids, witness: sawWitness };
}

function withWitnessCommitment(txs: Uint8Array[]): { joined: Uint8Array; ids: Uint8Array; txs: Uint8Array[] } {
  if (txs.length === 0) throw bad('a block has at least one transaction');
  const walked = walkAll(txs);
  if (!walked.witness || coinbaseWitness(walked.joined, 0).commitment >= 0) return { joined: walked.joined, ids: walked.ids, txs };
  const reserved = new Uint8Array(32);
  walked.wids.fill(0, 0, 32);
  const commitment = sha256d(Uint8Array.from([...merkleRoot(walked.wids, txs.length), ...reserved]));
  const coinbase = parseTx(txs[0]!);
  coinbase.inputs[0]!.witness = [reserved];
  coinbase.outputs.push({ value: 0n, script: Uint8Array.from([...COMMITMENT_TAG, ...commitment]) });
  const out = [serializeTx(coinbase), ...txs.slice(1)];
  const again = walkAll(out);
  return { joined: again.joined, ids: again.ids, txs: out };
}
