/**
 * Writing Plutus data (Conway `plutus_data`) with our CBOR writer, and the inverse of the
 * detailed-schema JSON that Cardano `content` commits to (for outputs a spell asks us to build).
 * Bounded bytes longer than 64 bytes are written as an indefinite byte string of 64-byte chunks,
 * as the ledger requires. Browser-safe: no Node built-ins.
 */
import { CharmsError } from '../errors.js';
import { CborWriter } from '../codec/cbor.js';
import { Tagged, ValueMap, type Value } from '../codec/value.js';
import { fromHex } from '../util/bytes.js';

const MAX_DEPTH = 256;
const U64_LIMIT = 1n << 64n;

/** Plutus bounded bytes: plain up to 64 bytes, else `5f (chunks of ≤ 64) ff`. */
export function writePlutusBytes(w: CborWriter, b: Uint8Array): void {
  if (b.length <= 64) return w.bytes(b);
  w.byte(0x5f);
  for (let i = 0; i < b.length; i += 64) w.bytes(b.subarray(i, Math.min(b.length, i + 64)));
  w.byte(0xff);
}

function magnitudeBytes(n: bigint): Uint8Array {
  const hex = n.toString(16);
  return fromHex(hex.length % 2 ? `0${hex}` : hex);
}

/** Writes a Plutus data value (already checked with `isPlutusData`); big integers as tags 2/3. */
function writePlutusData(w: CborWriter, d: Value, depth = 0): void {
  if (depth > MAX_DEPTH) throw new CharmsError('INVALID_INPUT', 'Plutus data nests too deeply');
  if (typeof d === 'bigint') {
    if (d >= 0n && d < U64_LIMIT) return w.int(d);
    if (d < 0n && -1n - d < U64_LIMIT) return w.int(d);
    w.head(6, d >= 0n ? 2 : 3);
    return writePlutusBytes(w, magnitudeBytes(d >= 0n ? d : -1n - d));
  }
  if (d instanceof Uint8Array) return writePlutusBytes(w, d);
  if (Array.isArray(d)) {
    w.arrayHeader(d.length);
    for (const x of d) writePlutusData(w, x, depth + 1);
    return;
  }
  if (d instanceof ValueMap) {
    w.mapHeader(d.entries.length);
    for (const [k, v] of d.entries) {
      writePlutusData(w, k, depth + 1);
      writePlutusData(w, v, depth + 1);
    }
    return;
  }
  if (d instanceof Tagged) {
    w.head(6, d.tag);
    if ((d.tag === 2n || d.tag === 3n) && d.value instanceof Uint8Array) return writePlutusBytes(w, d.value);
    if (d.tag === 102n && Array.isArray(d.value) && d.value.length === 2) {
      w.arrayHeader(2);
      w.value(d.value[0]!);
      return writePlutusData(w, d.value[1]!, depth + 1);
    }
    return writePlutusData(w, d.value, depth + 1);
  }
  throw new CharmsError('INVALID_INPUT', 'not Plutus data');
}

export function plutusDataCbor(d: Value): Uint8Array {
  const w = new CborWriter();
  writePlutusData(w, d);
  return w.finish();
}

const badJson = (path: string, m: string) => new CharmsError('INVALID_INPUT', `${path}: ${m} (expected the detailed-schema JSON of Plutus data)`);

const onlyKey = (m: ValueMap, path: string): [string, Value] => {
  if (m.entries.length === 0) throw badJson(path, 'empty object');
  const [k, v] = m.entries[0]!;
  if (typeof k !== 'string') throw badJson(path, 'non-text key');
  return [k, v];
};

/**
 * The detailed-schema JSON (`{"int": n}`, `{"bytes": hex}`, `{"list": [...]}`,
 * `{"map": [{"k", "v"}]}`, `{"constructor": n, "fields": [...]}`) → Plutus data.
 */
export function plutusDataFromDetailedJson(j: Value, path = 'datum', depth = 0): Value {
  if (depth > MAX_DEPTH) throw badJson(path, 'nests too deeply');
  if (!(j instanceof ValueMap)) throw badJson(path, 'not an object');
  const ctor = j.get('constructor');
  if (ctor !== undefined) {
    const fields = j.get('fields');
    if (typeof ctor !== 'bigint' || ctor < 0n || ctor >= U64_LIMIT || !Array.isArray(fields) || j.entries.length !== 2) throw badJson(path, 'bad constructor');
    const fs = fields.map((f, i) => plutusDataFromDetailedJson(f, `${path}.fields[${i}]`, depth + 1));
    if (ctor < 7n) return new Tagged(121n + ctor, fs);
    if (ctor < 128n) return new Tagged(1280n + ctor - 7n, fs);
    return new Tagged(102n, [ctor, fs]);
  }
  if (j.entries.length !== 1) throw badJson(path, 'expected exactly one key');
  const [k, v] = onlyKey(j, path);
  switch (k) {
    case 'int':
      if (typeof v !== 'bigint') throw badJson(path, 'int must be an integer (values beyond 64 bits cannot be given exactly)');
      return v;
    case 'bytes':
      if (typeof v !== 'string') throw badJson(path, 'bytes must be hex text');
      return fromHex(v, `${path}.bytes`);
    case 'list':
      if (!Array.isArray(v)) throw badJson(path, 'list must be an array');
      return v.map((x, i) => plutusDataFromDetailedJson(x, `${path}.list[${i}]`, depth + 1));
    case 'map': {
      if (!Array.isArray(v)) throw badJson(path, 'map must be an array of {k, v}');
      return new ValueMap(
        v.map((e, i) => {
          const kv = e instanceof ValueMap ? e : undefined;
          const kk = kv?.get('k');
          const vv = kv?.get('v');
          if (kk === undefined || vv === undefined || kv!.entries.length !== 2) throw badJson(`${path}.map[${i}]`, 'expected {k, v}');
          return [plutusDataFromDetailedJson(kk, `${path}.map[${i}].k`, depth + 1), plutusDataFromDetailedJson(vv, `${path}.map[${i}].v`, depth + 1)];
        }),
      );
    }
    default:
      throw badJson(path, `unknown key ${JSON.stringify(k)}`);
  }
}
