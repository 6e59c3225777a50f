/**
 * NormalizedSpell and the types inside it, with the exact field order, omission rules and
 * absent-vs-empty distinctions of the reference (charms-client `NormalizedSpell`,
 * `NormalizedTransaction`; charms-data `NativeOutput`, `VersionedApp`, `AppSignature`).
 */
import { CiboriumReader } from './ciborium.js';
import { ValueMap, type Value } from '../codec/value.js';
import { encodeCbor } from '../codec/cbor.js';
import { compareBytes, toHex } from '../util/bytes.js';
import {
  type App,
  type B32,
  type Data,
  type UtxoId,
  appMapToValue,
  appToString,
  asArray,
  asBool,
  asMap,
  asU32,
  asUint,
  b32FromValue,
  b32ToValue,
  bytesFromBinary,
  bytesToBinary,
  compareApps,
  expected,
  hexFromHr,
  invalid,
  sortedAppMapFromValue,
  utxoIdFromBytes,
  utxoIdFromValue,
  utxoIdToValue,
} from './primitives.js';

export const CURRENT_VERSION = 15;

/** Charms in one output: app index (into the sorted `app_public_inputs`) → data. */
export type NormalizedCharms = Map<number, Data>;

/** Charms of one output resolved to their apps: `[App, Data]` pairs in App order (what app contracts see). */
export type Charms = [App, Data][];

export interface NativeOutput {
  amount: bigint;
  /** Bitcoin: scriptPubKey; Cardano: address bytes. */
  dest: Uint8Array;
  /** Cardano only: the output's non-ADA contents. */
  content?: Data;
}

export interface VersionedApp {
  version: number;
  wasm_hash: B32;
}

export interface NormalizedTransaction {
  ins?: UtxoId[];
  refs?: UtxoId[];
  outs: NormalizedCharms[];
  beamed_outs?: Map<number, B32>;
  coins?: NativeOutput[];
  scrolls?: number[];
}

export interface NormalizedSpell {
  version: number;
  tx: NormalizedTransaction;
  app_public_inputs: [App, Data][];
  /** Sorted by vk bytes; omitted on the wire when empty. */
  versioned_apps: [B32, VersionedApp][];
  mock: boolean;
}

// ------------------------------------------------------------------------------ u32-keyed maps

/** A `BTreeMap<u32, T>`: YAML has integer keys, JSON string keys; output in ascending order. */
export function u32MapFromValue<T>(v: Value, hr: boolean, path: string, item: (v: Value, p: string) => T): Map<number, T> {
  const m = asMap(v, path);
  const out = new Map<number, T>();
  for (const [k, x] of m.entries) {
    let n: number;
    if (typeof k === 'bigint') n = asU32(k, `${path} key`);
    else if (hr && typeof k === 'string' && /^\d+$/.test(k)) n = asU32(BigInt(k), `${path} key`);
    else throw expected(`${path} key`, 'u32', k);
    out.set(n, item(x, `${path}.${n}`));
  }
  return new Map([...out.entries()].sort((a, b) => a[0] - b[0]));
}

export const u32MapToValue = <T>(m: Map<number, T>, item: (x: T) => Value): ValueMap =>
  new ValueMap([...m.entries()].sort((a, b) => a[0] - b[0]).map(([k, x]) => [BigInt(k), item(x)]));

// ------------------------------------------------------------------------------ NativeOutput

export function nativeOutputToValue(o: NativeOutput, hr: boolean): Value {
  const m = new ValueMap([
    ['amount', o.amount],
    ['dest', hr ? toHex(o.dest) : bytesToBinary(o.dest)],
  ]);
  if (o.content !== undefined) m.set('content', o.content);
  return m;
}

export function nativeOutputFromValue(v: Value, hr: boolean, path: string): NativeOutput {
  const m = asMap(v, path);
  const amount = m.get('amount');
  const dest = m.get('dest');
  if (amount === undefined) throw invalid(path, 'missing field `amount`');
  if (dest === undefined) throw invalid(path, 'missing field `dest`');
  const out: NativeOutput = {
    amount: asUint(amount, `${path}.amount`),
    dest: hr ? hexFromHr(dest, `${path}.dest`) : bytesFromBinary(dest, `${path}.dest`),
  };
  const content = m.get('content');
  if (content !== undefined && content !== null) out.content = content;
  return out;
}

// ------------------------------------------------------------------------------ VersionedApp

export const versionedAppToValue = (a: VersionedApp, hr: boolean): Value =>
  new ValueMap([
    ['version', BigInt(a.version)],
    ['wasm_hash', b32ToValue(a.wasm_hash, hr)],
  ]);

export function versionedAppFromValue(v: Value, hr: boolean, path: string): VersionedApp {
  const m = asMap(v, path);
  const version = m.get('version');
  const hash = m.get('wasm_hash');
  if (version === undefined) throw invalid(path, 'missing field `version`');
  if (hash === undefined) throw invalid(path, 'missing field `wasm_hash`');
  return { version: asU32(version, `${path}.version`), wasm_hash: b32FromValue(hash, hr, `${path}.wasm_hash`) };
}

/** A `BTreeMap<B32, T>`: sorted by raw bytes on output; duplicates: last wins (BTreeMap insert). */
export function b32MapFromValue<T>(v: Value, hr: boolean, path: string, item: (v: Value, p: string) => T): [B32, T][] {
  const m = asMap(v, path);
  const byHex = new Map<string, [B32, T]>();
  for (const [k, x] of m.entries) {
    const key = b32FromValue(k, hr, `${path} key`);
    byHex.set(toHex(key), [key, item(x, `${path}.${toHex(key)}`)]);
  }
  return [...byHex.values()].sort((a, b) => compareBytes(a[0], b[0]));
}

export const b32MapToValue = <T>(entries: [B32, T][], hr: boolean, item: (x: T) => Value): ValueMap =>
  new ValueMap([...entries].sort((a, b) => compareBytes(a[0], b[0])).map(([k, x]) => [b32ToValue(k, hr), item(x)]));

// ------------------------------------------------------------------------------ transaction

const charmsFromValue = (v: Value, hr: boolean, path: string): NormalizedCharms => u32MapFromValue(v, hr, path, (x) => x);

function optionalList<T>(m: ValueMap, key: string, path: string, item: (v: Value, p: string) => T): T[] | undefined {
  const v = m.get(key);
  if (v === undefined || v === null) return undefined;
  return asArray(v, `${path}.${key}`).map((x, i) => item(x, `${path}.${key}[${i}]`));
}

function transactionFromValue(v: Value, hr: boolean, path = 'tx'): NormalizedTransaction {
  const m = asMap(v, path);
  const outsV = m.get('outs');
  if (outsV === undefined) throw invalid(path, 'missing field `outs`');
  const tx: NormalizedTransaction = {
    outs: asArray(outsV, `${path}.outs`).map((x, i) => charmsFromValue(x, hr, `${path}.outs[${i}]`)),
  };
  const ins = optionalList(m, 'ins', path, (x, p) => utxoIdFromValue(x, hr, p));
  if (ins) tx.ins = ins;
  const refs = optionalList(m, 'refs', path, (x, p) => utxoIdFromValue(x, hr, p));
  if (refs) tx.refs = refs;
  const beamed = m.get('beamed_outs');
  if (beamed !== undefined && beamed !== null) tx.beamed_outs = u32MapFromValue(beamed, hr, `${path}.beamed_outs`, (x, p) => b32FromValue(x, hr, p));
  const coins = optionalList(m, 'coins', path, (x, p) => nativeOutputFromValue(x, hr, p));
  if (coins) tx.coins = coins;
  const scrolls = optionalList(m, 'scrolls', path, (x, p) => asU32(x, p));
  if (scrolls) tx.scrolls = [...new Set(scrolls)].sort((a, b) => a - b); // BTreeSet
  // Fields are read in whatever order; output order is fixed below.
  return tx;
}

function transactionToValue(tx: NormalizedTransaction, hr: boolean): ValueMap {
  const m = new ValueMap();
  if (tx.ins)
    m.set(
      'ins',
      tx.ins.map((u) => utxoIdToValue(u, hr)),
    );
  if (tx.refs)
    m.set(
      'refs',
      tx.refs.map((u) => utxoIdToValue(u, hr)),
    );
  m.set(
    'outs',
    tx.outs.map((c) => u32MapToValue(c, (x) => x)),
  );
  if (tx.beamed_outs)
    m.set(
      'beamed_outs',
      u32MapToValue(tx.beamed_outs, (b) => b32ToValue(b, hr)),
    );
  if (tx.coins)
    m.set(
      'coins',
      tx.coins.map((c) => nativeOutputToValue(c, hr)),
    );
  if (tx.scrolls)
    m.set(
      'scrolls',
      tx.scrolls.map((n) => BigInt(n)),
    );
  return m;
}

// ------------------------------------------------------------------------------ spell

export function spellFromValue(v: Value, hr: boolean, path = 'spell'): NormalizedSpell {
  // The binary face is read from CBOR bytes, as the reference reads it (see spellFromCbor).
  if (!hr) return spellFromCbor(encodeCbor(v), path);
  const m = asMap(v, path);
  const version = m.get('version');
  const tx = m.get('tx');
  const api = m.get('app_public_inputs');
  if (version === undefined) throw invalid(path, 'missing field `version`');
  if (tx === undefined) throw invalid(path, 'missing field `tx`');
  if (api === undefined) throw invalid(path, 'missing field `app_public_inputs`');
  const va = m.get('versioned_apps');
  const mock = m.get('mock');
  return {
    version: asU32(version, `${path}.version`),
    tx: transactionFromValue(tx, hr, `${path}.tx`),
    app_public_inputs: sortedAppMapFromValue(api, hr, `${path}.app_public_inputs`, (x) => x),
    versioned_apps: va === undefined || va === null ? [] : b32MapFromValue(va, hr, `${path}.versioned_apps`, (x, p) => versionedAppFromValue(x, hr, p)),
    mock: mock === undefined || mock === null ? false : asBool(mock, `${path}.mock`),
  };
}

// ------------------------------------------------------------------------------ binary face

/*
 * The binary face read as the reference's serde derives read it through ciborium (model/ciborium.ts
 * has the rules): every type by its own deserializer, streaming over the bytes.
 */

/** A `UtxoId` (its visitor takes bytes only, through `deserialize_bytes`). */
const utxoIdCbor = (r: CiboriumReader, p: string): UtxoId => {
  const b = r.definiteBytes(p, 'a 36-byte UTXO id as a definite byte string');
  if (b.length !== 36) throw invalid(p, `invalid utxo_id bytes: expected 36 bytes, got ${b.length}`);
  return utxoIdFromBytes(b, p);
};

/** `App`: `deserialize_tuple(3)`: three items read, the declared count never checked. */
function appFromCbor(r: CiboriumReader, path: string): App {
  return r.seq(
    path,
    (next) => {
      if (!next()) throw invalid(path, 'missing field `tag`');
      const tag = r.char(`${path}.tag`);
      if (!next()) throw invalid(path, 'missing field `identity`');
      const identity = r.b32(`${path}.identity`);
      if (!next()) throw invalid(path, 'missing field `vk`');
      return { tag, identity, vk: r.b32(`${path}.vk`) };
    },
    (bytes) => {
      if (bytes.length === 0) throw invalid(path, 'missing field `tag`');
      throw invalid(`${path}.tag`, `invalid type: integer \`${bytes[0]}\`, expected a character`);
    },
  );
}

/** An item that cannot be read from a byte string's `u8` (a struct, a map, a `UtxoId`). */
const notAByte =
  (what: string) =>
  (b: number, p: string): never => {
    throw invalid(p, `invalid type: integer \`${b}\`, expected ${what}`);
  };

/** A `BTreeMap<u32, T>`: sorted, a repeated key keeps the last value. */
function u32MapFromCbor<T>(r: CiboriumReader, path: string, item: (p: string) => T): Map<number, T> {
  const out = new Map<number, T>();
  for (const [k, x] of r.map(
    path,
    (p) => r.u32(p),
    (p) => item(p),
  ))
    out.set(k, x);
  return new Map([...out.entries()].sort((a, b) => a[0] - b[0]));
}

function nativeOutputFromCbor(r: CiboriumReader, path: string): NativeOutput {
  const o: Partial<NativeOutput> = {};
  r.struct(
    path,
    {
      amount: (p) => (o.amount = r.uint(p, 64)),
      dest: (p) => (o.dest = r.byteVec(p)),
      content: (p) => {
        const c = r.option(() => r.any(p));
        if (c !== undefined) o.content = c;
        else delete o.content;
      },
    },
    ['amount', 'dest'],
  );
  return o as NativeOutput;
}

function transactionFromCbor(r: CiboriumReader, path: string): NormalizedTransaction {
  const tx: Partial<NormalizedTransaction> = {};
  const set = <K extends keyof NormalizedTransaction>(k: K, v: NormalizedTransaction[K] | undefined) => {
    if (v === undefined) delete tx[k];
    else tx[k] = v;
  };
  const utxoIds = (p: string) => r.vec(p, (q) => utxoIdCbor(r, q), notAByte('a 36-byte UTXO id'));
  r.struct(
    path,
    {
      ins: (p) =>
        set(
          'ins',
          r.option(() => utxoIds(p)),
        ),
      refs: (p) =>
        set(
          'refs',
          r.option(() => utxoIds(p)),
        ),
      outs: (p) =>
        set(
          'outs',
          r.vec(p, (q) => u32MapFromCbor(r, q, (x) => r.any(x)), notAByte('a map')),
        ),
      beamed_outs: (p) =>
        set(
          'beamed_outs',
          r.option(() => u32MapFromCbor(r, p, (x) => r.b32(x))),
        ),
      coins: (p) =>
        set(
          'coins',
          r.option(() => r.vec(p, (q) => nativeOutputFromCbor(r, q), notAByte('struct NativeOutput'))),
        ),
      scrolls: (p) =>
        set(
          'scrolls',
          r.option(() =>
            [
              ...new Set(
                r.vec(
                  p,
                  (q) => r.u32(q),
                  (b) => b,
                ),
              ),
            ].sort((a, b) => a - b),
          ), // BTreeSet
        ),
    },
    ['outs'],
  );
  return tx as NormalizedTransaction;
}

function versionedAppFromCbor(r: CiboriumReader, path: string): VersionedApp {
  const a: Partial<VersionedApp> = {};
  r.struct(path, { version: (p) => (a.version = r.u32(p)), wasm_hash: (p) => (a.wasm_hash = r.b32(p)) }, ['version', 'wasm_hash']);
  return a as VersionedApp;
}

/** `app_public_inputs` with the reference's `sorted_app_map`: keys strictly increasing. */
function sortedAppMapFromCbor(r: CiboriumReader, path: string): [App, Data][] {
  const out: [App, Data][] = [];
  r.map(
    path,
    (p) => appFromCbor(r, p),
    (p, app) => {
      const data = r.any(p);
      const prev = out[out.length - 1];
      if (prev && compareApps(app, prev[0]) <= 0)
        throw invalid(path, `app keys must be in sorted order, but '${appToString(app)}' comes after '${appToString(prev[0])}'`);
      out.push([app, data]);
    },
  );
  return out;
}

/** A `NormalizedSpell` read from a ciborium stream. */
export function spellFromCiborium(r: CiboriumReader, path = 'spell'): NormalizedSpell {
  const s: Partial<NormalizedSpell> = { versioned_apps: [], mock: false };
  r.struct(
    path,
    {
      version: (p) => (s.version = r.u32(p)),
      tx: (p) => (s.tx = transactionFromCbor(r, p)),
      app_public_inputs: (p) => (s.app_public_inputs = sortedAppMapFromCbor(r, p)),
      versioned_apps: (p) => {
        const byHex = new Map<string, [B32, VersionedApp]>(); // BTreeMap: a repeated key keeps the last
        for (const [k, a] of r.map(
          p,
          (q) => r.b32(q),
          (q) => versionedAppFromCbor(r, q),
        ))
          byHex.set(toHex(k), [k, a]);
        s.versioned_apps = [...byHex.values()].sort((a, b) => compareBytes(a[0], b[0]));
      },
      mock: (p) => (s.mock = r.bool(p)),
    },
    ['version', 'tx', 'app_public_inputs'],
  );
  return s as NormalizedSpell;
}

/** A `NormalizedSpell` from its CBOR bytes (`util::read`: nothing after the spell is read). */
export const spellFromCbor = (bytes: Uint8Array, path = 'spell'): NormalizedSpell => spellFromCiborium(new CiboriumReader(bytes), path);

export function spellToValue(s: NormalizedSpell, hr: boolean): ValueMap {
  const m = new ValueMap([
    ['version', BigInt(s.version)],
    ['tx', transactionToValue(s.tx, hr)],
    ['app_public_inputs', appMapToValue(s.app_public_inputs, hr, (x) => x)],
  ]);
  if (s.versioned_apps.length > 0)
    m.set(
      'versioned_apps',
      b32MapToValue(s.versioned_apps, hr, (a) => versionedAppToValue(a, hr)),
    );
  if (s.mock) m.set('mock', true);
  return m;
}

export const encodeSpellCbor = (s: NormalizedSpell): Uint8Array => encodeCbor(spellToValue(s, false));

/** A spell as it goes on chain: `tx.ins` and `tx.coins` cleared. */
export function stripForChain(s: NormalizedSpell): NormalizedSpell {
  const { ins: _ins, coins: _coins, ...tx } = s.tx;
  return { ...s, tx };
}

// ------------------------------------------------------------------------------ AppSignature

export interface AppSignature {
  public_key: B32;
  signature: Uint8Array; // 64 bytes
}

export function appSignatureToValue(s: AppSignature, hr: boolean): Value {
  return new ValueMap([
    ['public_key', b32ToValue(s.public_key, hr)],
    ['signature', hr ? toHex(s.signature) : s.signature],
  ]);
}

export function appSignatureFromValue(v: Value, hr: boolean, path: string): AppSignature {
  const m = asMap(v, path);
  const pk = m.get('public_key');
  const sig = m.get('signature');
  if (pk === undefined) throw invalid(path, 'missing field `public_key`');
  if (sig === undefined) throw invalid(path, 'missing field `signature`');
  return {
    public_key: b32FromValue(pk, hr, `${path}.public_key`),
    signature: hr ? hexFromHr(sig, `${path}.signature`, 64) : bytesFromBinary(sig, `${path}.signature`, 64),
  };
}

// ------------------------------------------------------------------------------ BeamSource

export interface BeamSource {
  utxo: UtxoId;
  nonce?: bigint;
}

export function beamSourceToValue(b: BeamSource, hr: boolean): Value {
  const out: Value[] = [utxoIdToValue(b.utxo, hr)];
  if (b.nonce !== undefined) out.push(b.nonce);
  return out;
}

export function beamSourceFromValue(v: Value, hr: boolean, path: string): BeamSource {
  const a = asArray(v, path);
  if (a.length < 1 || a.length > 2) throw invalid(path, 'expected ["txid:vout"] or ["txid:vout", nonce]');
  const b: BeamSource = { utxo: utxoIdFromValue(a[0]!, hr, `${path}[0]`) };
  if (a.length === 2 && a[1] !== null) b.nonce = asUint(a[1]!, `${path}[1]`);
  return b;
}
