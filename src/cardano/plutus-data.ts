/**
 * Plutus data (Conway CDDL `plutus_data`) on top of our generic CBOR values: a shape check, and
 * the cardano-node "detailed schema" JSON that the reference commits to inside a Cardano output's
 * `content` (objects with sorted keys, as serde_json without `preserve_order` prints them;
 * integers beyond u64/i64 become f64, as serde_json without `arbitrary_precision` parses them).
 */
import { CharmsError } from '../errors.js';
import { Tagged, ValueMap, type Value } from '../codec/value.js';
import { longestChunk } from '../codec/cbor.js';
import { bigEndianToBigInt, toHex } from '../util/bytes.js';

const isConstrTag = (t: bigint): boolean => (t >= 121n && t <= 127n) || (t >= 1280n && t <= 1400n);
const isUint = (v: Value | undefined): v is bigint => typeof v === 'bigint' && v >= 0n && v < 1n << 64n;

/**
 * `bounded_bytes`: at most 64 bytes, or chunked with every chunk at most 64 bytes (the ledger's
 * and CML's rule for byte strings and bignums inside Plutus data).
 */
const isBoundedBytes = (b: Value): boolean => b instanceof Uint8Array && (longestChunk.get(b) ?? b.length) <= 64;

/** True iff `v` is a well-formed Plutus data value. */
export function isPlutusData(v: Value, depth = 0): boolean {
  if (depth > 256) return false;
  if (typeof v === 'bigint') return true;
  if (v instanceof Uint8Array) return isBoundedBytes(v);
  if (Array.isArray(v)) return v.every((x) => isPlutusData(x, depth + 1));
  if (v instanceof ValueMap) return v.entries.every(([k, x]) => isPlutusData(k, depth + 1) && isPlutusData(x, depth + 1));
  if (v instanceof Tagged) {
    if (v.tag === 2n || v.tag === 3n) return isBoundedBytes(v.value);
    if (isConstrTag(v.tag)) return Array.isArray(v.value) && v.value.every((x) => isPlutusData(x, depth + 1));
    if (v.tag === 102n)
      return (
        Array.isArray(v.value) && v.value.length === 2 && isUint(v.value[0]) && Array.isArray(v.value[1]) && v.value[1].every((x) => isPlutusData(x, depth + 1))
      );
  }
  return false;
}

const I64_MIN = -(1n << 63n);
const U64_LIMIT = 1n << 64n;

/** The integer as serde_json holds it: u64 / i64 exactly, anything larger as the nearest f64. */
const jsonInt = (n: bigint): Value => (n >= I64_MIN && n < U64_LIMIT ? n : Number(n));

/** Plutus data → the detailed-schema JSON value (as our Value tree). */
export function plutusDataToDetailedJson(d: Value): Value {
  if (typeof d === 'bigint') return ValueMap.of({ int: jsonInt(d) });
  if (d instanceof Uint8Array) return ValueMap.of({ bytes: toHex(d) });
  if (Array.isArray(d)) return ValueMap.of({ list: d.map(plutusDataToDetailedJson) });
  if (d instanceof ValueMap)
    return ValueMap.of({ map: d.entries.map(([k, v]) => ValueMap.of({ k: plutusDataToDetailedJson(k), v: plutusDataToDetailedJson(v) })) });
  if (d instanceof Tagged) {
    if ((d.tag === 2n || d.tag === 3n) && d.value instanceof Uint8Array) {
      const n = bigEndianToBigInt(d.value);
      return ValueMap.of({ int: jsonInt(d.tag === 2n ? n : -1n - n) });
    }
    let alternative: bigint | undefined;
    let fields: Value = d.value;
    if (d.tag >= 121n && d.tag <= 127n) alternative = d.tag - 121n;
    else if (d.tag >= 1280n && d.tag <= 1400n) alternative = d.tag - 1280n + 7n;
    else if (d.tag === 102n && Array.isArray(d.value) && typeof d.value[0] === 'bigint') {
      alternative = d.value[0];
      fields = d.value[1];
    }
    if (alternative !== undefined && Array.isArray(fields))
      // keys in sorted order: "constructor" < "fields"
      return ValueMap.of({ constructor: alternative, fields: fields.map(plutusDataToDetailedJson) });
  }
  throw new CharmsError('INVALID_TX', 'datum is not Plutus data');
}
