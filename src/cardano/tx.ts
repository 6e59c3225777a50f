/**
 * Cardano transactions (Conway CDDL `[body, witness_set, is_valid, auxiliary_data]`), read with
 * our CBOR codec. The raw body bytes are kept: the tx hash is blake2b-256 of exactly those bytes
 * (Charms stores it byte-reversed, the Bitcoin convention, so the displayed Charms txid equals the
 * Cardano tx hash hex). Only the fields the read side needs are typed and validated (inputs,
 * outputs, redeemers); anything malformed there is an INVALID_TX error, never a crash.
 * Browser-safe: no Node built-ins.
 */
import { blake2b } from '@noble/hashes/blake2.js';
import { CharmsError } from '../errors.js';
import { CborReader, decodeCbor } from '../codec/cbor.js';
import { Tagged, ValueMap, type Value } from '../codec/value.js';
import { reversed, toHex } from '../util/bytes.js';
import type { UtxoId } from '../model/primitives.js';
import { isPlutusData } from './plutus-data.js';
import { validateShelleyAddress } from './address.js';

export interface CardanoTx {
  body: ValueMap;
  /** The body exactly as it appears in the transaction (what the tx hash is computed over). */
  bodyBytes: Uint8Array;
  witnessSet: ValueMap;
  isValid: boolean;
  auxiliaryData: Value;
}

/** Native assets: policy id hex → asset name hex → quantity. */
export type Assets = Map<string, Map<string, bigint>>;

export interface CardanoOutput {
  /** Raw address bytes (what a spell's `coins[i].dest` holds). */
  address: Uint8Array;
  lovelace: bigint;
  assets: Assets;
  datum?: { hash: Uint8Array } | { inline: Value };
  /** The decoded script reference `[kind, script]` (tag-24 contents). */
  scriptRef?: Value;
}

export interface Redeemer {
  /** 0 spend, 1 mint, 2 cert, 3 reward (withdrawal), 4 vote, 5 propose. */
  tag: number;
  index: bigint;
  data: Value;
}

const bad = (m: string, cause?: unknown) => new CharmsError('INVALID_TX', `invalid Cardano transaction: ${m}`, cause === undefined ? undefined : { cause });

const U64_MAX = (1n << 64n) - 1n;
const isUint = (v: Value | undefined, max = U64_MAX): v is bigint => typeof v === 'bigint' && v >= 0n && v <= max;

export function parseCardanoTx(bytes: Uint8Array): CardanoTx {
  const r = new CborReader(bytes);
  let head;
  try {
    head = r.head();
  } catch (e) {
    throw bad('not CBOR', e);
  }
  // Conway txs are 4-element arrays; pre-Alonzo (3 elements) are not Charms transactions.
  if (head.major !== 4 || head.arg !== 4n) throw bad('expected an array of 4 items');
  let body: Value;
  let bodyBytes: Uint8Array;
  let witnessSet: Value;
  let isValid: Value;
  let aux: Value;
  try {
    const start = r.pos;
    body = r.value();
    bodyBytes = bytes.slice(start, r.pos);
    witnessSet = r.value();
    isValid = r.value();
    aux = r.value();
  } catch (e) {
    throw bad((e as Error).message, e);
  }
  if (!r.done) throw bad('trailing bytes');
  if (!(body instanceof ValueMap)) throw bad('body is not a map');
  uintKeyed(body, 'body', BODY_KEYS, BODY_SETS);
  for (const k of [0n, 1n, 2n]) if (!body.entries.some(([x]) => x === k)) throw bad(`body has no key ${k} (inputs, outputs and fee are required)`);
  if (!(witnessSet instanceof ValueMap)) throw bad('witness set is not a map');
  uintKeyed(witnessSet, 'witness set', WITNESS_KEYS, WITNESS_SETS);
  if (typeof isValid !== 'boolean') throw bad('is_valid is not a boolean');
  // auxiliary data: null, Shelley metadata (map), Shelley-MA [metadata, scripts], or #6.259 (Alonzo+)
  if (!(aux === null || isAuxiliaryData(aux))) throw bad('auxiliary data must be null or auxiliary data');
  bodyFieldTypes(body);
  for (const [k, v] of witnessSet.entries) {
    const inner = WITNESS_SETS.has(k as bigint) && v instanceof Tagged ? v.value : v;
    if (!(Array.isArray(inner) || (k === 5n && inner instanceof ValueMap))) throw bad(`witness set key ${k} has the wrong type`);
    if (k !== 5n && !(inner as Value[]).every(WITNESS_ITEM[Number(k)]!)) throw bad(`witness set key ${k}: an item is malformed`);
  }
  return { body, bodyBytes, witnessSet, isValid, auxiliaryData: aux };
}

/**
 * The keys cml-chain 6.2.0 (the reference's parser) knows in a Conway body / witness set: any
 * other key is refused, not skipped. Checked against CML itself in tx-cml.test.ts.
 */
const BODY_KEYS = new Set([0, 1, 2, 3, 4, 5, 7, 8, 9, 11, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22].map(BigInt));
const WITNESS_KEYS = new Set([0, 1, 2, 3, 4, 5, 6, 7].map(BigInt));
/** Fields that are CDDL sets: an optional tag in front of them must be 258. */
const BODY_SETS = new Set([0, 4, 13, 14, 18, 20].map(BigInt));
const WITNESS_SETS = new Set([0, 1, 2, 3, 4, 6, 7].map(BigInt));
/** Post-Alonzo output: address, amount, datum option, script reference. */
const OUTPUT_KEYS = new Set([0n, 1n, 2n, 3n]);
const NO_SETS = new Set<bigint>();

/** The shapes CML checks for the body fields we do not read further (scalars, hashes, sets). */
function bodyFieldTypes(body: ValueMap): void {
  for (const [k, v] of body.entries) {
    const key = Number(k);
    const inner = BODY_SETS.has(k as bigint) && v instanceof Tagged ? v.value : v;
    const ok = [2, 3, 8, 17, 21, 22].includes(key)
      ? isUint(inner)
      : [7, 11].includes(key)
        ? isBytes(inner, 32)
        : key === 13 || key === 18
          ? Array.isArray(inner) && inner.every(isTxInput)
          : key === 14
            ? Array.isArray(inner) && inner.every((h) => isBytes(h, 28))
            : key === 9
              ? isMint(inner)
              : key === 20
                ? Array.isArray(inner) && inner.every(isProposal)
                : key === 4
                  ? Array.isArray(inner) && inner.every(isCertificate)
                  : BODY_SETS.has(k as bigint) || key === 1
                    ? Array.isArray(inner)
                    : key === 5
                      ? isWithdrawals(inner)
                      : key === 19
                        ? isVotes(inner)
                        : key === 16
                          ? (parseOutput(inner, 'collateral return'), true)
                          : key === 15
                            ? isUint(inner, 0xffn)
                            : true;
    if (!ok) throw bad(`body key ${key} has the wrong type`);
  }
}

const isBytes = (v: Value | undefined, n?: number): v is Uint8Array => v instanceof Uint8Array && (n === undefined || v.length === n);

/** What CML reads each witness-set list item as (key 5, the redeemers, is read by parseRedeemers). */
const WITNESS_ITEM: Record<number, (v: Value) => boolean> = {
  0: (w) => Array.isArray(w) && w.length === 2 && isBytes(w[0], 32) && isBytes(w[1], 64), // vkey witness
  1: (ns) => isNativeScript(ns, 0),
  // bootstrap witness: vkey, signature, chain code, attributes (CBOR of a map)
  2: (w) => Array.isArray(w) && w.length === 4 && isBytes(w[0], 32) && isBytes(w[1], 64) && isBytes(w[2], 32) && isBytes(w[3]) && embedsMap(w[3]),
  3: (s) => isBytes(s),
  4: (d) => isPlutusData(d),
  6: (s) => isBytes(s),
  7: (s) => isBytes(s),
};

/** Bytes that start with a CBOR map (bytes after it are not read, as CML). */
function embedsMap(b: Uint8Array): boolean {
  try {
    return decodeCbor(b, { allowTrailing: true }) instanceof ValueMap;
  } catch {
    return false;
  }
}

const utf8Length = (s: string): number => new TextEncoder().encode(s).length;

/** `transaction_metadatum`: int, bytes / text of at most 64 bytes, lists and maps of them. */
function isMetadatum(v: Value, depth: number): boolean {
  if (depth > 64) return false;
  if (typeof v === 'bigint') return v >= -(1n << 64n) && v < 1n << 64n;
  if (v instanceof Uint8Array) return v.length <= 64;
  if (typeof v === 'string') return utf8Length(v) <= 64;
  if (Array.isArray(v)) return v.every((x) => isMetadatum(x, depth + 1));
  if (v instanceof ValueMap) return v.entries.every(([k, x]) => isMetadatum(k, depth + 1) && isMetadatum(x, depth + 1));
  return false;
}

/** `metadata = {* uint => transaction_metadatum}` */
const isMetadata = (v: Value | undefined): boolean => v instanceof ValueMap && v.entries.every(([k, x]) => isUint(k) && isMetadatum(x, 0));
const isList = (v: Value | undefined, item: (x: Value) => boolean): boolean => Array.isArray(v) && v.every(item);

/**
 * `auxiliary_data`: Shelley metadata (a map), Shelley-MA `[metadata, [* native_script]]`, or
 * Alonzo+ `#6.259({? 0: metadata, ? 1: [* native_script], ? 2..4: [* plutus script bytes]})`.
 */
function isAuxiliaryData(v: Value): boolean {
  if (v instanceof ValueMap) return isMetadata(v);
  if (Array.isArray(v)) return v.length === 2 && isMetadata(v[0]) && isList(v[1], (ns) => isNativeScript(ns, 0));
  if (!(v instanceof Tagged) || v.tag !== 259n || !(v.value instanceof ValueMap)) return false;
  const seen = new Set<Value>();
  return v.value.entries.every(([k, x]) => {
    if (!isUint(k, 4n) || seen.has(k)) return false;
    seen.add(k);
    const list = x instanceof Tagged && x.tag === 258n && k !== 0n ? x.value : x;
    return k === 0n ? isMetadata(x) : k === 1n ? isList(list, (ns) => isNativeScript(ns, 0)) : isList(list, (s) => isBytes(s));
  });
}

/** `mint = {+ policy_id => {+ asset_name => nonzero int64}}` as CML reads it (zero and empty maps pass). */
const isMint = (v: Value | undefined): boolean =>
  v instanceof ValueMap &&
  v.entries.every(
    ([p, a]) => isBytes(p, 28) && a instanceof ValueMap && a.entries.every(([n, q]) => n instanceof Uint8Array && n.length <= 32 && typeof q === 'bigint'),
  );

const isAnchor = (a: Value | undefined): boolean => Array.isArray(a) && a.length === 2 && typeof a[0] === 'string' && isBytes(a[1], 32);
/** `proposal_procedure = [deposit, reward_account, gov_action, anchor]` (the action's own fields are not typed further). */
const isProposal = (p: Value): boolean =>
  Array.isArray(p) &&
  p.length === 4 &&
  isUint(p[0]) &&
  isBytes(p[1]) &&
  (p[1][0]! >> 4 === 14 || p[1][0]! >> 4 === 15) &&
  validateShelleyAddress(p[1]) &&
  Array.isArray(p[2]) &&
  isAnchor(p[3]);
/** `voting_procedures = {+ voter => {+ gov_action_id => [vote, anchor / null]}}` */
const isVotes = (v: Value | undefined): boolean =>
  v instanceof ValueMap &&
  v.entries.every(
    ([voter, m]) =>
      Array.isArray(voter) &&
      voter.length === 2 &&
      isUint(voter[0], 4n) &&
      isBytes(voter[1], 28) &&
      m instanceof ValueMap &&
      m.entries.every(
        ([id, p]) =>
          Array.isArray(id) &&
          id.length === 2 &&
          isBytes(id[0], 32) &&
          isUint(id[1], 0xffffn) &&
          Array.isArray(p) &&
          p.length === 2 &&
          isUint(p[0], 2n) &&
          (p[1] === null || isAnchor(p[1])),
      ),
  );
/** A certificate: `[kind, ...]` (the kinds' own fields are not typed further). */
const isCertificate = (c: Value): boolean => Array.isArray(c) && isUint(c[0], 18n);

/** `transaction_input = [hash32, uint]` (CML reads the index as a u64). */
const isTxInput = (i: Value): boolean => Array.isArray(i) && i.length === 2 && i[0] instanceof Uint8Array && i[0].length === 32 && isUint(i[1]);

/** `withdrawals = {+ reward_account => coin}`: CML reads each key as an address that must be a reward address. */
const isWithdrawals = (v: Value | undefined): boolean =>
  v instanceof ValueMap &&
  v.entries.every(([k, c]) => k instanceof Uint8Array && k.length > 0 && (k[0]! >> 4 === 14 || k[0]! >> 4 === 15) && validateShelleyAddress(k) && isUint(c));

/**
 * `native_script` as CML reads it: `[0, addr_keyhash]`, `[1, [* script]]` (all), `[2, [* script]]`
 * (any), `[3, n, [* script]]` (n of k), `[4, slot]` (invalid before), `[5, slot]` (invalid
 * hereafter); the inner lists are plain arrays (no set tag). Depth is bounded by the CBOR decoder.
 */
function isNativeScript(v: Value, depth: number): boolean {
  if (!Array.isArray(v) || depth > 64) return false;
  const list = (x: Value | undefined) => Array.isArray(x) && x.every((s) => isNativeScript(s, depth + 1));
  switch (v[0]) {
    case 0n:
      return v.length === 2 && v[1] instanceof Uint8Array && v[1].length === 28;
    case 1n:
    case 2n:
      return v.length === 2 && list(v[1]);
    case 3n:
      return v.length === 3 && isUint(v[1]) && list(v[2]);
    case 4n:
    case 5n:
      return v.length === 2 && isUint(v[1]);
    default:
      return false;
  }
}

function uintKeyed(m: ValueMap, what: string, known: Set<bigint>, sets: Set<bigint>): void {
  const seen = new Set<bigint>();
  for (const [k, v] of m.entries) {
    // a tagged key is not an integer key either (CML refuses it)
    if (!isUint(k, 0xffffn)) throw bad(`${what} has a non-integer key`);
    if (!known.has(k)) throw bad(`${what} has an unknown key ${k}`);
    if (seen.has(k)) throw bad(`${what} has a duplicate key ${k}`);
    if (sets.has(k) && v instanceof Tagged && v.tag !== 258n) throw bad(`${what} key ${k}: a set may only carry tag 258, not ${v.tag}`);
    seen.add(k);
  }
}

/** The Cardano tx hash: blake2b-256 of the original body bytes (natural order). */
export const cardanoTxHash = (tx: CardanoTx): Uint8Array => blake2b(tx.bodyBytes, { dkLen: 32 });

/** The tx hash in Charms' internal (reversed) order, as in `UtxoId`s. */
export const cardanoTxid = (tx: CardanoTx): Uint8Array => reversed(cardanoTxHash(tx));

const field = (m: ValueMap, key: number): Value | undefined => m.entries.find(([k]) => k === BigInt(key))?.[1];
export const bodyField = (tx: CardanoTx, key: number): Value | undefined => field(tx.body, key);

/** Conway sets may carry tag 258. */
const untagSet = (v: Value | undefined): Value | undefined => (v instanceof Tagged && v.tag === 258n ? v.value : v);

/** The transaction inputs in the order they appear (Cardano orders them canonically). */
export function parseInputs(tx: CardanoTx): UtxoId[] {
  const ins = untagSet(bodyField(tx, 0));
  if (!Array.isArray(ins)) throw bad('inputs are not a list');
  return ins.map((i, n) => {
    if (!Array.isArray(i) || i.length !== 2 || !(i[0] instanceof Uint8Array) || i[0].length !== 32 || !isUint(i[1], 0xffffffffn))
      throw bad(`input #${n} is not [hash32, index]`);
    return { txid: reversed(i[0]), vout: Number(i[1]) };
  });
}

function parseAmount(v: Value | undefined, where: string): { lovelace: bigint; assets: Assets } {
  if (isUint(v)) return { lovelace: v, assets: new Map() };
  if (!Array.isArray(v) || v.length !== 2 || !isUint(v[0]) || !(v[1] instanceof ValueMap)) throw bad(`${where}: bad value`);
  const assets: Assets = new Map();
  for (const [p, inner] of v[1].entries) {
    if (!(p instanceof Uint8Array) || p.length !== 28 || !(inner instanceof ValueMap)) throw bad(`${where}: bad multi-asset entry`);
    const m = new Map<string, bigint>();
    for (const [n, q] of inner.entries) {
      if (!(n instanceof Uint8Array) || n.length > 32 || !isUint(q)) throw bad(`${where}: bad asset entry`);
      m.set(toHex(n), q);
    }
    assets.set(toHex(p), m);
  }
  return { lovelace: v[0], assets };
}

function parseAddress(v: Value | undefined, where: string): Uint8Array {
  // Shelley (base, pointer, enterprise, reward) or Byron (header type 8, CBOR inside)
  if (!(v instanceof Uint8Array) || !(validateShelleyAddress(v) || isByronAddress(v))) throw bad(`${where}: bad address`);
  return v;
}

/** CRC-32 (IEEE), as Byron addresses carry it. */
function crc32(b: Uint8Array): number {
  let c = ~0;
  for (let i = 0; i < b.length; i++) {
    c ^= b[i]!;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

/** A Byron address: `[#6.24(bytes .cbor [root hash28, attributes map, type uint]), crc32 of those bytes]`. */
function isByronAddress(v: Uint8Array): boolean {
  if (v.length < 2 || v[0]! >> 4 !== 8) return false;
  try {
    const a = decodeCbor(v);
    if (!Array.isArray(a) || a.length !== 2 || !(a[0] instanceof Tagged) || a[0].tag !== 24n || !(a[0].value instanceof Uint8Array)) return false;
    if (a[1] !== BigInt(crc32(a[0].value))) return false;
    const inner = decodeCbor(a[0].value);
    return Array.isArray(inner) && inner.length === 3 && isBytes(inner[0], 28) && inner[1] instanceof ValueMap && isUint(inner[2]);
  } catch {
    return false;
  }
}

/**
 * The item inside `#6.24(bytes .cbor item)`. Bytes after that item are ignored, as CML does
 * (it reads one item from the embedded bytes; checked in tx-cml.test.ts).
 */
function tag24(v: Value | undefined, where: string): Value {
  if (!(v instanceof Tagged) || v.tag !== 24n || !(v.value instanceof Uint8Array)) throw bad(`${where}: expected #6.24(bytes)`);
  try {
    return decodeCbor(v.value, { allowTrailing: true });
  } catch (e) {
    throw bad(`${where}: embedded CBOR: ${(e as Error).message}`, e);
  }
}

/** All outputs, legacy (array) and post-Alonzo (map) forms. */
export function parseOutputs(tx: CardanoTx): CardanoOutput[] {
  const outs = bodyField(tx, 1);
  if (!Array.isArray(outs)) throw bad('outputs are not a list');
  return outs.map((o, i) => parseOutput(o, `output #${i}`));
}

/** One output, legacy (array) or post-Alonzo (map) form. */
function parseOutput(o: Value, where: string): CardanoOutput {
  {
    if (Array.isArray(o)) {
      if (o.length !== 2 && o.length !== 3) throw bad(`${where}: expected 2 or 3 items`);
      const out: CardanoOutput = { address: parseAddress(o[0], where), ...parseAmount(o[1], where) };
      if (o.length === 3) {
        if (!(o[2] instanceof Uint8Array) || o[2].length !== 32) throw bad(`${where}: bad datum hash`);
        out.datum = { hash: o[2] };
      }
      return out;
    }
    if (!(o instanceof ValueMap)) throw bad(`${where}: not an array or a map`);
    uintKeyed(o, where, OUTPUT_KEYS, NO_SETS);
    const out: CardanoOutput = { address: parseAddress(field(o, 0), where), ...parseAmount(field(o, 1), where) };
    const d = field(o, 2);
    if (d !== undefined) {
      if (!Array.isArray(d) || d.length !== 2) throw bad(`${where}: bad datum option`);
      if (d[0] === 0n && d[1] instanceof Uint8Array && d[1].length === 32) out.datum = { hash: d[1] };
      else if (d[0] === 1n) {
        const datum = tag24(d[1], `${where} inline datum`);
        if (!isPlutusData(datum)) throw bad(`${where}: inline datum is not Plutus data`);
        out.datum = { inline: datum };
      } else throw bad(`${where}: bad datum option`);
    }
    const sr = field(o, 3);
    if (sr !== undefined) out.scriptRef = tag24(sr, `${where} script reference`);
    return out;
  }
}

/** Redeemers from the witness set, both the legacy array and the Conway map encodings. */
export function parseRedeemers(tx: CardanoTx): Redeemer[] | undefined {
  const red = field(tx.witnessSet, 5);
  if (red === undefined) return undefined;
  const out: Redeemer[] = [];
  const exUnits = (u: Value | undefined): boolean => Array.isArray(u) && u.length === 2 && isUint(u[0]) && isUint(u[1]);
  if (Array.isArray(red)) {
    for (const r of red) {
      if (!Array.isArray(r) || r.length !== 4 || !isUint(r[0], 5n) || !isUint(r[1]) || !isPlutusData(r[2]) || !exUnits(r[3])) throw bad('bad redeemer');
      out.push({ tag: Number(r[0]), index: r[1], data: r[2] });
    }
  } else if (red instanceof ValueMap) {
    const seen = new Set<string>();
    for (const [k, v] of red.entries) {
      if (!Array.isArray(k) || k.length !== 2 || !isUint(k[0], 5n) || !isUint(k[1])) throw bad('bad redeemer key');
      if (!Array.isArray(v) || v.length !== 2 || !isPlutusData(v[0]) || !exUnits(v[1])) throw bad('bad redeemer value');
      const id = `${k[0]}:${k[1]}`;
      if (seen.has(id)) throw bad(`duplicate redeemer key ${id}`);
      seen.add(id);
      out.push({ tag: Number(k[0]), index: k[1], data: v[0] });
    }
  } else throw bad('redeemers are neither a list nor a map');
  return out;
}
