/**
 * `NativeOutput.content` of a Cardano output (protocol V11+): the reference's `OutputContent`
 * (CML serde form) as Charms `Data` — a map with text keys in field order `multiasset`, then
 * `datum` and `script_ref` only when present:
 * - `multiasset`: policy hex → asset name hex → quantity, both levels sorted by raw bytes;
 * - `datum`: `{"Hash": {"datum_hash": hex}}` or `{"Datum": {"datum": <detailed-schema JSON>}}`;
 * - `script_ref`: `{"PlutusV1|V2|V3": {"script": hex}}` (native scripts: not supported yet).
 * The proof commits to these bytes, so the shape must be exact.
 */
import { CharmsError } from '../errors.js';
import { decodeCbor } from '../codec/cbor.js';
import { ValueMap, type Value } from '../codec/value.js';
import { compareBytes, fromHex, toHex } from '../util/bytes.js';
import type { Data } from '../model/primitives.js';
import { plutusDataToDetailedJson } from './plutus-data.js';
import { plutusDataCbor, plutusDataFromDetailedJson } from './plutus-encode.js';
import { addAsset } from './multiasset.js';
import { refuse } from './build-error.js';
import { U64_MAX } from './constants.js';
import type { Assets, CardanoOutput } from './tx.js';

const byBytes = (a: string, b: string): number => compareBytes(fromHex(a), fromHex(b));

export function assetsToValue(assets: Assets): ValueMap {
  return new ValueMap(
    [...assets.keys()].sort(byBytes).map((p) => {
      const inner = assets.get(p)!;
      return [p, new ValueMap([...inner.keys()].sort(byBytes).map((a) => [a, inner.get(a)!]))];
    }),
  );
}

/**
 * `MultiAsset::checked_sub`: `have − take`; every asset of `take` must be present with at least
 * that quantity (else INVALID_SPELL); zero entries and then-empty policies are dropped.
 */
export function subtractAssets(have: Assets, take: Assets, where: string): Assets {
  const rest: Assets = new Map([...have].map(([p, m]) => [p, new Map(m)]));
  for (const [p, m] of take)
    for (const [a, q] of m) {
      const cur = rest.get(p)?.get(a);
      if (cur === undefined || cur < q) throw new CharmsError('INVALID_SPELL', `${where}: native token ${p}.${a} is short of its charms (${cur ?? 0n} < ${q})`);
      if (cur === q) {
        rest.get(p)!.delete(a);
        if (rest.get(p)!.size === 0) rest.delete(p);
      } else rest.get(p)!.set(a, cur - q);
    }
  return rest;
}

function scriptRefToValue(s: Value): Value {
  if (!Array.isArray(s) || s.length !== 2 || typeof s[0] !== 'bigint') throw new CharmsError('INVALID_TX', 'bad script reference');
  if (s[0] === 0n) throw new CharmsError('UNSUPPORTED', 'native script references in Cardano outputs are not supported yet');
  const name = ({ 1: 'PlutusV1', 2: 'PlutusV2', 3: 'PlutusV3' } as Record<string, string>)[String(s[0])];
  if (name === undefined || !(s[1] instanceof Uint8Array)) throw new CharmsError('INVALID_TX', 'bad script reference');
  return new ValueMap([[name, ValueMap.of({ script: toHex(s[1]) })]]);
}

/** The content value of an output whose remaining (non-charm) assets are `rest`. */
export function outputContentValue(out: CardanoOutput, rest: Assets): ValueMap {
  const content = new ValueMap([['multiasset', assetsToValue(rest)]]);
  if (out.datum !== undefined)
    content.set(
      'datum',
      'hash' in out.datum
        ? ValueMap.of({ Hash: ValueMap.of({ datum_hash: toHex(out.datum.hash) }) })
        : ValueMap.of({ Datum: ValueMap.of({ datum: plutusDataToDetailedJson(out.datum.inline) }) }),
    );
  if (out.scriptRef !== undefined) content.set('script_ref', scriptRefToValue(out.scriptRef));
  return content;
}

// ------------------------------------------------------------------------------ the inverse: content → output parts

/** The output parts a coin's `content` stands for (the builder writes them into the output). */
export interface OutputContentParts {
  assets: Assets;
  datum?: { hash: Uint8Array } | { inlineCbor: Uint8Array };
  /** `[kind, bytes]` of the script reference. */
  scriptRef?: [number, Uint8Array];
}

const SCRIPT_KINDS: Record<string, number> = { PlutusV1: 1, PlutusV2: 2, PlutusV3: 3 };

/** A coin's `content` (the CML serde form of `OutputContent`) as the output parts it stands for. */
export function parseContent(content: Data | undefined, path: string): OutputContentParts {
  const out: OutputContentParts = { assets: new Map() };
  if (content === undefined || content === null) return out;
  if (!(content instanceof ValueMap)) throw refuse(`${path}: content must be a map {multiasset, datum?, script_ref?}`);
  for (const [k, v] of content.entries) {
    if (k === 'multiasset') {
      if (!(v instanceof ValueMap)) throw refuse(`${path}.multiasset: expected a map policy → asset → quantity`);
      for (const [p, inner] of v.entries) {
        if (typeof p !== 'string' || fromHex(p, `${path}.multiasset policy`).length !== 28 || !(inner instanceof ValueMap))
          throw refuse(`${path}.multiasset: policy ids are 28-byte hex keys with a map of assets`);
        for (const [a, q] of inner.entries) {
          if (typeof a !== 'string' || fromHex(a, `${path}.multiasset asset name`).length > 32)
            throw refuse(`${path}.multiasset.${p}: asset names are hex of at most 32 bytes`);
          if (typeof q !== 'bigint' || q <= 0n || q > U64_MAX) throw refuse(`${path}.multiasset.${p}.${a}: quantity must be a positive u64`);
          addAsset(out.assets, p.toLowerCase(), a.toLowerCase(), q);
        }
      }
    } else if (k === 'datum') {
      const hash = v instanceof ValueMap ? v.get('Hash') : undefined;
      const inline = v instanceof ValueMap ? v.get('Datum') : undefined;
      if (hash instanceof ValueMap && typeof hash.get('datum_hash') === 'string')
        out.datum = { hash: fromHex(hash.get('datum_hash') as string, `${path}.datum.Hash.datum_hash`, 32) };
      else if (inline instanceof ValueMap && inline.get('datum') !== undefined)
        out.datum = { inlineCbor: plutusDataCbor(plutusDataFromDetailedJson(inline.get('datum')!, `${path}.datum.Datum.datum`)) };
      else throw refuse(`${path}.datum: expected {Hash: {datum_hash}} or {Datum: {datum}}`);
    } else if (k === 'script_ref') {
      const entry = v instanceof ValueMap && v.entries.length === 1 ? v.entries[0]! : undefined;
      const kind = entry && typeof entry[0] === 'string' ? SCRIPT_KINDS[entry[0]] : undefined;
      const script = entry?.[1] instanceof ValueMap ? entry[1].get('script') : undefined;
      if (kind === undefined || typeof script !== 'string')
        throw refuse(`${path}.script_ref: expected {PlutusV1|PlutusV2|PlutusV3: {script: hex}} (native scripts are not supported)`);
      out.scriptRef = [kind, fromHex(script, `${path}.script_ref`)];
    } else throw refuse(`${path}: unknown content field ${JSON.stringify(k)}`);
  }
  return out;
}

/**
 * A coin's `content` in the form the read side derives from the built output (sorted assets,
 * lower-case hex, the datum's detailed JSON as decoded): what the proof must commit to.
 */
export function canonicalContent(content: Data | undefined, path: string): ValueMap {
  const parts = parseContent(content, path);
  const out: CardanoOutput = { address: new Uint8Array(0), lovelace: 0n, assets: parts.assets };
  if (parts.datum) out.datum = 'hash' in parts.datum ? { hash: parts.datum.hash } : { inline: decodeCbor(parts.datum.inlineCbor) };
  if (parts.scriptRef) out.scriptRef = [BigInt(parts.scriptRef[0]), parts.scriptRef[1]];
  return outputContentValue(out, parts.assets);
}
