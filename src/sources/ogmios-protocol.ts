/**
 * Ogmios' chain-sync answers, decoded and checked (JSON-RPC 2.0 frames; the schema is
 * CardanoSolutions/ogmios `docs/static/api/v6.14` and `v7.0`, `ogmios.json` + `cardano.json`).
 * Pure: no I/O, so the fake Ogmios, the client and the fuzzer share it.
 *
 * What is read, and checked, from each frame:
 * - `nextBlock` → `{direction: "forward", block, tip}` or `{direction: "backward", point, tip}`;
 * - a block: `type` (`ebb` / `bft` Byron, `praos` Shelley onwards), `era`, `id`, `ancestor`,
 *   `height`, `slot` (absent on Byron epoch-boundary blocks), `transactions` (absent or empty:
 *   an empty block);
 * - a transaction: `id` and `cbor`, the raw transaction Ogmios sends only when it runs with
 *   `--include-transaction-cbor` (without it: a CONFIG error naming the flag). The id must be the
 *   blake2b-256 of the transaction body's bytes inside `cbor` (element 0 of the transaction
 *   array; for Byron, Ogmios sends `[tx, witnesses]` and the id hashes `tx`): Ogmios gives no
 *   block CBOR, so each transaction is what can be checked, not the block body hash.
 * Everything else in the JSON (outputs, values, witnesses, …) is ignored: the index reads the
 * transaction from its CBOR, as `tx show-spell --chain cardano` does.
 *
 * v6 and v7 differ, for what is read here, in: v7 omits a transaction's `outputs` (and
 * `validityInterval`) when empty, adds the `dijkstra` era (and `plutus:v4`, `guard` purposes,
 * sub-transactions inside the CBOR-described body), and encodes Byron bootstrap witnesses
 * differently. None of those fields is read: both decode the same way (tested on both shapes).
 */
import { blake2b } from '@noble/hashes/blake2.js';
import { CborReader } from '../codec/cbor.js';
import { CharmsError } from '../errors.js';
import { toHex } from '../util/bytes.js';

interface CardanoPoint {
  slot: number;
  /** Block header hash, 64 lowercase hex digits. */
  id: string;
}

export type PointOrOrigin = CardanoPoint | 'origin';

export interface CardanoTip extends CardanoPoint {
  height: number;
}

interface OgmiosTx {
  /** The transaction id (= its body hash), hex as Ogmios and explorers show it. */
  id: string;
  /** The raw transaction, checked against `id`. */
  cbor: Uint8Array;
}

interface CardanoBlock {
  /** `ebb` (Byron epoch boundary: no slot, no transactions), `bft` (Byron), `praos` (Shelley on). */
  type: 'ebb' | 'bft' | 'praos';
  era: string;
  id: string;
  /** The previous block's hash; `genesis` for the first block after the genesis. */
  ancestor: string;
  height: number;
  /** Absent on epoch-boundary blocks (Ogmios gives them none: they cannot be an intersection point). */
  slot: number | undefined;
  transactions: OgmiosTx[];
}

export type ChainSyncEvent =
  | { direction: 'forward'; block: CardanoBlock; tip: CardanoTip }
  | { direction: 'backward'; point: PointOrOrigin; tip: CardanoTip | 'origin' };

/** A JSON-RPC 2.0 answer: `result` or `error`, the `id` mirrored back. */
export interface RpcAnswer {
  method: string | undefined;
  id: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** The flag without which Ogmios sends no transaction CBOR. */
const CBOR_FLAG = '--include-transaction-cbor';

const failed = (m: string, cause?: unknown) => new CharmsError('UPSTREAM_FAILED', `Ogmios answered ${m}`, cause === undefined ? undefined : { cause });

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

const HASH = /^[0-9a-f]{64}$/;
const HEX = /^(?:[0-9a-f]{2})*$/;

function hash(v: unknown, what: string): string {
  if (typeof v !== 'string' || !HASH.test(v)) throw failed(`${what} that is not a 32-byte hex hash`);
  return v;
}

function uint(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw failed(`${what} that is not a non-negative integer`);
  return v;
}

/** One WebSocket text frame as a JSON-RPC answer (UPSTREAM_FAILED on anything else). */
export function decodeFrame(text: string): RpcAnswer {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw failed('a frame that is not JSON', e);
  }
  if (!isObject(v) || v.jsonrpc !== '2.0') throw failed('a frame that is not a JSON-RPC 2.0 message');
  const method = typeof v.method === 'string' ? v.method : undefined;
  if ('error' in v && v.error !== undefined) {
    const e = v.error;
    if (!isObject(e) || typeof e.code !== 'number' || typeof e.message !== 'string') throw failed('an error that is not {code, message}');
    return { method, id: v.id, error: { code: e.code, message: e.message, data: e.data } };
  }
  if (!('result' in v)) throw failed('a message with neither result nor error');
  return { method, id: v.id, result: v.result };
}

function decodePoint(v: unknown, what: string): PointOrOrigin {
  if (v === 'origin') return 'origin';
  if (!isObject(v)) throw failed(`${what} that is neither a point nor "origin"`);
  return { slot: uint(v.slot, `${what} slot`), id: hash(v.id, `${what} id`) };
}

function decodeTip(v: unknown, what: string): CardanoTip | 'origin' {
  if (v === 'origin') return 'origin';
  if (!isObject(v)) throw failed(`${what} that is neither a tip nor "origin"`);
  return { slot: uint(v.slot, `${what} slot`), id: hash(v.id, `${what} id`), height: uint(v.height, `${what} height`) };
}

/** `findIntersection`'s result: the intersection and the node's tip. */
export function decodeIntersection(result: unknown): { intersection: PointOrOrigin; tip: CardanoTip | 'origin' } {
  if (!isObject(result)) throw failed('findIntersection with a result that is not an object');
  return { intersection: decodePoint(result.intersection, 'an intersection'), tip: decodeTip(result.tip, 'a tip') };
}

/**
 * The body bytes of a raw transaction whose id they hash to: element 0 of the transaction array
 * (Shelley `[body, witnesses, metadata]`, Alonzo on `[body, witnesses, valid, aux]`, Byron as
 * Ogmios sends it `[tx, witnesses]`). A Byron transaction sent bare (`[inputs, outputs,
 * attributes]`, whose hash is its id) is matched whole.
 */
export function bodyOfRawTx(cbor: Uint8Array, id: string): Uint8Array {
  const r = new CborReader(cbor);
  let start: number;
  let end: number;
  try {
    const head = r.head();
    if (head.major !== 4) throw failed(`transaction ${id} whose CBOR is not an array`);
    start = r.pos;
    r.value();
    end = r.pos;
  } catch (e) {
    if (e instanceof CharmsError && e.code === 'UPSTREAM_FAILED') throw e;
    throw failed(`transaction ${id} whose CBOR cannot be read`, e);
  }
  const body = cbor.subarray(start, end);
  if (toHex(blake2b(body, { dkLen: 32 })) === id) return body;
  if (toHex(blake2b(cbor, { dkLen: 32 })) === id) return cbor;
  throw failed(`transaction ${id} whose body hashes to ${toHex(blake2b(body, { dkLen: 32 }))}: not its id`);
}

function decodeTx(v: unknown, where: string): OgmiosTx {
  if (!isObject(v)) throw failed(`${where}: a transaction that is not an object`);
  const id = hash(v.id, `${where}: a transaction id`);
  if (v.cbor === undefined)
    throw new CharmsError(
      'CONFIG',
      `Ogmios sends transactions without their CBOR (transaction ${id}): start Ogmios with ${CBOR_FLAG}, which the Cardano index needs to read and verify spells`,
    );
  if (typeof v.cbor !== 'string' || !HEX.test(v.cbor) || v.cbor.length === 0) throw failed(`transaction ${id} with a cbor that is not hex`);
  const cbor = Buffer.from(v.cbor, 'hex');
  const bytes = new Uint8Array(cbor.buffer, cbor.byteOffset, cbor.byteLength);
  bodyOfRawTx(bytes, id);
  return { id, cbor: bytes };
}

const BLOCK_TYPES = new Set(['ebb', 'bft', 'praos']);

function decodeBlock(v: unknown): CardanoBlock {
  if (!isObject(v)) throw failed('a block that is not an object');
  const type = v.type;
  if (typeof type !== 'string' || !BLOCK_TYPES.has(type)) throw failed(`a block of unknown type ${JSON.stringify(type)}`);
  const id = hash(v.id, 'a block id');
  if (typeof v.era !== 'string') throw failed(`block ${id} without an era`);
  const ancestor = v.ancestor === 'genesis' ? 'genesis' : hash(v.ancestor, `block ${id}: an ancestor`);
  const height = uint(v.height, `block ${id}: a height`);
  const slot = type === 'ebb' && v.slot === undefined ? undefined : uint(v.slot, `block ${id}: a slot`);
  const txs = v.transactions;
  if (txs !== undefined && !Array.isArray(txs)) throw failed(`block ${id} whose transactions are not a list`);
  const transactions = (txs ?? []).map((t, i) => decodeTx(t, `block ${id} transaction #${i}`));
  return { type: type as CardanoBlock['type'], era: v.era, id, ancestor, height, slot, transactions };
}

/** `nextBlock`'s result: a roll forward (a checked block) or a roll backward to a point. */
export function decodeNextBlock(result: unknown): ChainSyncEvent {
  if (!isObject(result)) throw failed('nextBlock with a result that is not an object');
  if (result.direction === 'forward') {
    const tip = decodeTip(result.tip, 'a tip');
    if (tip === 'origin') throw failed('a roll forward with the tip at the origin');
    return { direction: 'forward', block: decodeBlock(result.block), tip };
  }
  if (result.direction === 'backward')
    return { direction: 'backward', point: decodePoint(result.point, 'a rollback point'), tip: decodeTip(result.tip, 'a tip') };
  throw failed(`nextBlock with direction ${JSON.stringify(result.direction)}`);
}

/** What `queryNetwork/genesisConfiguration {era: "shelley"}` says of the network. */
export interface ShelleyGenesis {
  networkMagic: number;
  /** `k`: the deepest rollback the node can make, in blocks. */
  securityParameter: number;
}

export function decodeShelleyGenesis(result: unknown): ShelleyGenesis {
  if (!isObject(result) || result.era !== 'shelley') throw failed('queryNetwork/genesisConfiguration with a result that is not the Shelley genesis');
  return { networkMagic: uint(result.networkMagic, 'a network magic'), securityParameter: uint(result.securityParameter, 'a security parameter') };
}

/** `<slot>.<block hash>` (as `--start-point` takes it) or `origin`. */
export function parsePoint(s: string): PointOrOrigin {
  if (s === 'origin') return 'origin';
  const m = /^(\d{1,16})\.([0-9a-fA-F]{64})$/.exec(s.trim());
  const slot = m ? Number(m[1]) : Number.NaN;
  if (!m || !Number.isSafeInteger(slot))
    throw new CharmsError('INVALID_INPUT', `start point ${JSON.stringify(s)}: expected <slot>.<block hash> (e.g. 4492800.<64 hex digits>) or origin`);
  return { slot, id: m[2]!.toLowerCase() };
}
