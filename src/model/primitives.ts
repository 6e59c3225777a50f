/**
 * Charms' primitive types and their two faces: the binary (CBOR) face and the human-readable
 * (JSON/YAML) face, as the Rust types serialize them with `is_human_readable()` false or true.
 * Conversions go through the generic `Value` tree; `hr` selects the face.
 */
import { CharmsError } from '../errors.js';
import { Tagged, ValueMap, type Value } from '../codec/value.js';
import { compareBytes, fromHex, reversed, toHex } from '../util/bytes.js';

export type Data = Value;
export type B32 = Uint8Array;

export interface App {
  tag: string;
  identity: B32;
  vk: B32;
}

export interface UtxoId {
  /** Transaction id in internal byte order (as hashed; display order is reversed). */
  txid: Uint8Array;
  vout: number;
}

export const invalid = (path: string, msg: string, cause?: unknown): CharmsError =>
  new CharmsError('INVALID_INPUT', path ? `${path}: ${msg}` : msg, cause === undefined ? undefined : { cause });

const describe = (v: Value): string => {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (typeof v === 'bigint') return `integer \`${v}\``;
  if (typeof v === 'number') return `float \`${v}\``;
  if (typeof v === 'string') return `string ${JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v)}`;
  if (typeof v === 'boolean') return `boolean \`${v}\``;
  if (v instanceof Uint8Array) return 'byte string';
  if (Array.isArray(v)) return 'sequence';
  if (v instanceof ValueMap) return 'map';
  if (v instanceof Tagged) return 'tagged value';
  return typeof v;
};

export const expected = (path: string, what: string, got: Value): CharmsError => invalid(path, `invalid type: ${describe(got)}, expected ${what}`);

// ------------------------------------------------------------------------------ scalars

export function asUint(v: Value, path: string, bits: 8 | 32 | 64 = 64): bigint {
  if (typeof v !== 'bigint') throw expected(path, `u${bits}`, v);
  if (v < 0n || v >= 1n << BigInt(bits)) throw invalid(path, `invalid value: integer \`${v}\`, expected u${bits}`);
  return v;
}

export const asU32 = (v: Value, path: string): number => Number(asUint(v, path, 32));

export function asString(v: Value, path: string): string {
  if (typeof v !== 'string') throw expected(path, 'a string', v);
  return v;
}

export function asBool(v: Value, path: string): boolean {
  if (typeof v !== 'boolean') throw expected(path, 'a boolean', v);
  return v;
}

/** f64 fields (`fee_rate`): binary face rejects integers as ciborium does; JSON accepts both. */
export function asF64(v: Value, path: string, hr: boolean): number {
  if (typeof v === 'number') return v;
  if (hr && typeof v === 'bigint') return Number(v);
  throw expected(path, 'float', v);
}

export function asArray(v: Value, path: string): Value[] {
  if (!Array.isArray(v)) throw expected(path, 'a sequence', v);
  return v;
}

export function asMap(v: Value, path: string): ValueMap {
  if (!(v instanceof ValueMap)) throw expected(path, 'a map', v);
  return v;
}

/** A `Vec<u8>`/`[u8; N]` in the binary face: an array of uints (or, leniently, a byte string). */
export function bytesFromBinary(v: Value, path: string, len?: number): Uint8Array {
  let out: Uint8Array;
  if (v instanceof Uint8Array) out = v;
  else if (Array.isArray(v)) {
    out = new Uint8Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = Number(asUint(v[i]!, `${path}[${i}]`, 8));
  } else throw expected(path, len ? `an array of ${len} bytes` : 'a byte array', v);
  if (len !== undefined && out.length !== len) throw invalid(path, `invalid length ${out.length}, expected ${len} bytes`);
  return out;
}

export const bytesToBinary = (b: Uint8Array): Value => Array.from(b, (x) => BigInt(x));

export function hexFromHr(v: Value, path: string, len?: number): Uint8Array {
  const s = asString(v, path);
  if (len !== undefined && s.length !== len * 2) throw invalid(path, `expected ${len * 2} hex characters, got ${s.length}`);
  return fromHex(s, path);
}

// ------------------------------------------------------------------------------ B32

export const b32FromValue = (v: Value, hr: boolean, path: string): B32 => (hr ? hexFromHr(v, path, 32) : bytesFromBinary(v, path, 32));

export const b32ToValue = (b: B32, hr: boolean): Value => (hr ? toHex(b) : bytesToBinary(b));

// ------------------------------------------------------------------------------ TxId / UtxoId

/** A 32-byte hash (txid, block hash) in display order: reversed, hex. */
export const txidToDisplay = (txid: Uint8Array): string => toHex(reversed(txid));
export const txidFromDisplay = (s: string, path = 'txid'): Uint8Array => {
  if (s.length !== 64) throw invalid(path, `expected 64 hex characters, got ${s.length}`);
  return reversed(fromHex(s, path));
};

export const utxoIdToString = (u: UtxoId): string => `${txidToDisplay(u.txid)}:${u.vout}`;

export function utxoIdFromString(s: string, path = 'utxo_id'): UtxoId {
  const parts = s.split(':');
  if (parts.length !== 2) throw invalid(path, `expected format txid:vout, got ${JSON.stringify(s)}`);
  const [t, o] = parts as [string, string];
  if (!/^\d{1,10}$/.test(o) || Number(o) > 0xffffffff) throw invalid(path, `invalid vout ${JSON.stringify(o)}`);
  return { txid: txidFromDisplay(t, path), vout: Number(o) };
}

export function utxoIdToBytes(u: UtxoId): Uint8Array {
  const out = new Uint8Array(36);
  out.set(u.txid, 0);
  new DataView(out.buffer).setUint32(32, u.vout, true);
  return out;
}

export function utxoIdFromBytes(b: Uint8Array, path: string): UtxoId {
  if (b.length !== 36) throw invalid(path, `expected 36 bytes for a UTXO id, got ${b.length}`);
  return { txid: b.slice(0, 32), vout: new DataView(b.buffer, b.byteOffset).getUint32(32, true) };
}

export const utxoIdToValue = (u: UtxoId, hr: boolean): Value => (hr ? utxoIdToString(u) : utxoIdToBytes(u));

export function utxoIdFromValue(v: Value, hr: boolean, path: string): UtxoId {
  if (hr) return utxoIdFromString(asString(v, path), path);
  if (v instanceof Uint8Array) return utxoIdFromBytes(v, path);
  if (Array.isArray(v)) return utxoIdFromBytes(bytesFromBinary(v, path), path);
  throw expected(path, 'a 36-byte UTXO id', v);
}

// ------------------------------------------------------------------------------ App

const APP_FORMAT = 'expected format: tag_char/identity_hex/vk_hex';

export function appFromString(s: string, path = 'app'): App {
  let tag: string;
  let rest: string;
  if (s.startsWith('//')) {
    tag = '/';
    rest = s.slice(2);
  } else {
    const cp = s.codePointAt(0);
    if (cp === undefined) throw invalid(path, APP_FORMAT);
    tag = String.fromCodePoint(cp);
    if (s[tag.length] !== '/') throw invalid(path, `${APP_FORMAT}, got ${JSON.stringify(s)}`);
    rest = s.slice(tag.length + 1);
  }
  const parts = rest.split('/');
  if (parts.length !== 2) throw invalid(path, `${APP_FORMAT}, got ${JSON.stringify(s)}`);
  return {
    tag,
    identity: hexFromHr(parts[0]!, `${path} identity`, 32),
    vk: hexFromHr(parts[1]!, `${path} vk`, 32),
  };
}

export const appToString = (a: App): string => `${a.tag}/${toHex(a.identity)}/${toHex(a.vk)}`;

/** Rust's derived Ord for App: tag (char code point), then identity bytes, then vk bytes. */
export function compareApps(a: App, b: App): number {
  const ta = a.tag.codePointAt(0)!;
  const tb = b.tag.codePointAt(0)!;
  if (ta !== tb) return ta - tb;
  return compareBytes(a.identity, b.identity) || compareBytes(a.vk, b.vk);
}

export const appEquals = (a: App, b: App): boolean => compareApps(a, b) === 0;

export const appToValue = (a: App, hr: boolean): Value => (hr ? appToString(a) : [a.tag, bytesToBinary(a.identity), bytesToBinary(a.vk)]);

export function appFromValue(v: Value, hr: boolean, path: string): App {
  if (hr) return appFromString(asString(v, path), path);
  const arr = asArray(v, path);
  if (arr.length !== 3) throw invalid(path, `expected an app as [tag, identity, vk], got ${arr.length} items`);
  const tag = asString(arr[0]!, `${path}.tag`);
  if ([...tag].length !== 1) throw invalid(`${path}.tag`, 'expected a single character');
  return { tag, identity: b32FromValue(arr[1]!, false, `${path}.identity`), vk: b32FromValue(arr[2]!, false, `${path}.vk`) };
}

/**
 * A `BTreeMap<App, T>` read with the reference's `sorted_app_map` rule: keys must arrive in
 * strictly increasing App order.
 */
export function sortedAppMapFromValue<T>(v: Value, hr: boolean, path: string, item: (v: Value, path: string) => T): [App, T][] {
  const m = asMap(v, path);
  const out: [App, T][] = [];
  let prevKey: Value | undefined;
  for (const [k, x] of m.entries) {
    const app = appFromValue(k, hr, `${path} key`);
    if (out.length > 0 && compareApps(out[out.length - 1]![0], app) >= 0) {
      const show = (kv: Value, a: App) => (typeof kv === 'string' ? kv : appToString(a));
      throw invalid(path, `app keys must be in sorted order, but '${show(k, app)}' comes after '${show(prevKey!, out[out.length - 1]![0])}'`);
    }
    prevKey = k;
    out.push([app, item(x, `${path}.${typeof k === 'string' ? k : appToString(app)}`)]);
  }
  return out;
}

/** Sorts entries by App (for maps we build ourselves), rejecting duplicates. */
export function sortAppEntries<T>(entries: [App, T][], path: string): [App, T][] {
  const out = [...entries].sort((a, b) => compareApps(a[0], b[0]));
  for (let i = 1; i < out.length; i++) if (compareApps(out[i - 1]![0], out[i]![0]) === 0) throw invalid(path, `duplicate app ${appToString(out[i]![0])}`);
  return out;
}

export const appMapToValue = <T>(entries: [App, T][], hr: boolean, item: (x: T) => Value): ValueMap =>
  new ValueMap(entries.map(([a, x]) => [appToValue(a, hr), item(x)]));
