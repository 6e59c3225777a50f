/**
 * What the reference accepts when it decodes a spell from CBOR: ciborium 0.2.2 driving serde's
 * derived deserializers (`ciborium/src/de/mod.rs`). This pass rewrites a decoded CBOR value tree
 * into the plain shape the typed readers (model/spell.ts) expect, following those rules:
 *
 * - tags in front of any typed item are skipped (every `deserialize_*` loops over `Header::Tag`),
 *   except that tags 2/3 in front of a byte string are bignums where an integer is expected;
 * - struct field names (`deserialize_identifier`) may be text or byte strings, definite-length and
 *   at most 4096 bytes (the scratch buffer); a chunked field name is refused; unknown fields are
 *   ignored and a repeated known field is an error (serde derive);
 * - sequences (`Vec<u8>`, `[u8; 32]`, lists) may also arrive as a byte string; a `UtxoId` is a
 *   definite byte string only (`deserialize_bytes` with a visitor that has no `visit_seq`);
 * - `bool` and maps do not accept null (only `Option` fields do);
 * - inside `Data` (a ciborium `Value`, read with `deserialize_any`): tags are kept, except a tag 2/3
 *   on a definite byte string of at most 16 bytes, which is an integer; `undefined` is null.
 *
 * Tested with re-encoded real spells from both chains in ciborium-view.test.ts.
 */
import { indefiniteByteStrings } from '../codec/cbor.js';
import { bigEndianToBigInt } from '../util/bytes.js';
import { Tagged, ValueMap, type Value } from '../codec/value.js';
import { expected, invalid } from './primitives.js';

const SCRATCH = 4096;
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Skips tags in front of a typed item. */
function untag(v: Value): Value {
  while (v instanceof Tagged) v = v.value;
  return v;
}

/** An integer where serde asks for one: tags skipped, tags 2/3 on bytes are bignums (≤ 16 bytes). */
function integer(v: Value, path: string): Value {
  while (v instanceof Tagged) {
    if (v.tag === 2n || v.tag === 3n) {
      const b = v.value;
      if (!(b instanceof Uint8Array)) throw expected(path, 'bytes', b);
      let i = 0;
      while (i < b.length && b[i] === 0) i++;
      if (b.length - i > 16) throw invalid(path, 'bigint too large');
      const n = bigEndianToBigInt(b.subarray(i));
      return v.tag === 2n ? n : -1n - n;
    }
    v = v.value;
  }
  return v;
}

/** A sequence: an array, or a byte string read as a sequence of u8. */
function seq(v: Value, path: string, item: (x: Value, p: string) => Value): Value {
  v = untag(v);
  if (v instanceof Uint8Array) return Array.from(v, (b) => BigInt(b));
  if (!Array.isArray(v)) return v; // the typed reader names the error
  return v.map((x, i) => item(x, `${path}[${i}]`));
}

function map(v: Value, path: string, key: (k: Value, p: string) => Value, value: (x: Value, p: string) => Value): Value {
  v = untag(v);
  if (!(v instanceof ValueMap)) return v;
  return new ValueMap(v.entries.map(([k, x]) => [key(k, `${path} key`), value(x, `${path}.${String(k)}`)]));
}

/** The fields of a struct (by name), as serde derive reads them through ciborium. */
function struct(v: Value, path: string, fields: readonly string[]): Map<string, Value> | Value {
  v = untag(v);
  if (!(v instanceof ValueMap)) return v;
  const out = new Map<string, Value>();
  v.entries.forEach(([k, x], i) => {
    const key = untag(k);
    let name: string | undefined;
    if (typeof key === 'string' || key instanceof Uint8Array) {
      const chunked = typeof key === 'string' ? v.indefiniteKeys?.has(i) === true : indefiniteByteStrings.has(key);
      const len = typeof key === 'string' ? new TextEncoder().encode(key).length : key.length;
      if (chunked || len > SCRATCH) throw expected(`${path} field name`, 'str or bytes', chunked ? 'an indefinite-length string' : 'a string longer than 4096 bytes');
      if (typeof key === 'string') name = key;
      else
        try {
          name = UTF8.decode(key);
        } catch {
          name = undefined; // not UTF-8: no field has that name, so it is an unknown field
        }
    } else throw expected(`${path} field name`, 'str or bytes', key);
    if (name === undefined || !fields.includes(name)) return; // unknown fields are ignored
    if (out.has(name)) throw invalid(path, `duplicate field \`${name}\``);
    out.set(name, x);
  });
  return out;
}

/** Rebuilds a struct map from its known fields (in the given order), each through `read`. */
function rebuild(fields: Map<string, Value> | Value, read: Record<string, (x: Value, p: string) => Value>, path: string): Value {
  if (!(fields instanceof Map)) return fields;
  const out = new ValueMap();
  for (const [name, x] of fields) out.set(name, read[name]!(x, `${path}.${name}`));
  return out;
}

/** `bool` and non-optional maps: tags skipped, null refused (as serde asks for a bool/map). */
const notNull = (read: (x: Value, p: string) => Value, what: string) => (v: Value, p: string): Value => {
  const u = untag(v);
  if (u === null || u === undefined) throw expected(p, what, u);
  return read(u, p);
};
const u8 = (v: Value, p: string): Value => integer(v, p);
const b32 = (v: Value, p: string): Value => seq(v, p, u8);
/** A `Vec<u8>` (e.g. the proof): an array of u8 or a byte string, tags skipped. */
export const ciboriumByteSeq = b32;

/** `Option<T>`: null and undefined are None (no tag skipping in front of them, as ciborium). */
const option = (read: (x: Value, p: string) => Value) => (v: Value, p: string): Value => (v === null || v === undefined ? null : read(v, p));

function utxoId(v: Value, path: string): Value {
  v = untag(v);
  if (!(v instanceof Uint8Array) || indefiniteByteStrings.has(v) || v.length > SCRATCH)
    throw expected(path, 'a 36-byte UTXO id as a definite byte string', v instanceof Uint8Array ? 'an indefinite-length byte string' : v);
  return v;
}

/** `App` in the binary face: `(char, B32, B32)`. */
const app = (v: Value, path: string): Value => seq(v, path, (x, p) => (p.endsWith('[0]') ? untag(x) : b32(x, p)));

/** `Data` (a ciborium `Value` via `deserialize_any`). */
function ciboriumData(v: Value): Value {
  if (v === undefined) return null;
  if (v instanceof Tagged) {
    if ((v.tag === 2n || v.tag === 3n) && v.value instanceof Uint8Array && !indefiniteByteStrings.has(v.value) && v.value.length <= 16)
      return integer(v, '');
    return new Tagged(v.tag, ciboriumData(v.value));
  }
  if (Array.isArray(v)) return v.map(ciboriumData);
  if (v instanceof ValueMap) return new ValueMap(v.entries.map(([k, x]) => [ciboriumData(k), ciboriumData(x)]));
  return v;
}

const data = (v: Value): Value => ciboriumData(v);
const u32Map = (value: (x: Value, p: string) => Value) => (v: Value, p: string): Value => map(v, p, integer, value);

const nativeOutput = (v: Value, path: string): Value =>
  rebuild(struct(v, path, ['amount', 'dest', 'content']), { amount: integer, dest: b32, content: option(data) }, path);

const versionedApp = (v: Value, path: string): Value =>
  rebuild(struct(v, path, ['version', 'wasm_hash']), { version: integer, wasm_hash: b32 }, path);

const transaction = (v: Value, path: string): Value =>
  rebuild(
    struct(v, path, ['ins', 'refs', 'outs', 'beamed_outs', 'coins', 'scrolls']),
    {
      ins: option((x, p) => seq(x, p, utxoId)),
      refs: option((x, p) => seq(x, p, utxoId)),
      outs: (x, p) => seq(x, p, u32Map(data)),
      beamed_outs: option(u32Map(b32)),
      coins: option((x, p) => seq(x, p, nativeOutput)),
      scrolls: option((x, p) => seq(x, p, integer)),
    },
    path,
  );

/**
 * A `NormalizedSpell` as ciborium + serde read it, rewritten into the plain binary face. Throws
 * INVALID_INPUT where the reference's decoder fails; other shape errors are left to the typed
 * readers.
 */
export function ciboriumSpellView(v: Value, path: string): Value {
  return rebuild(
    struct(v, path, ['version', 'tx', 'app_public_inputs', 'versioned_apps', 'mock']),
    {
      version: integer,
      tx: transaction,
      app_public_inputs: (x, p) => map(x, p, app, data),
      versioned_apps: notNull((x, p) => map(x, p, b32, versionedApp), 'a map'),
      mock: notNull((x) => x, 'a boolean'),
    },
    path,
  );
}
